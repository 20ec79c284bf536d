import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real Chromium, headless, driven over WebDriver (chromedriver) and the
/// DevTools protocol: at a phone's size with touch, or at a desktop's size
/// with a mouse. Each browser has a profile folder of its own; `quit()`
/// ends the session (Chromium quits) and stops chromedriver by its pid.
public final class Browser {
    /// How the browser looks to the page.
    public enum Device: Sendable {
        /// 390×844 CSS pixels, pixel ratio 2, touch.
        case phone
        /// 1280×900, a mouse.
        case desktop
    }

    /// Chromium's binary.
    public static let chromium = "/usr/bin/chromium"
    /// chromedriver's binary.
    public static let chromedriver = "/usr/bin/chromedriver"
    /// Whether both are installed (the browser tests skip, saying so, when not).
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: chromium) && FileManager.default.isExecutableFile(atPath: chromedriver)
    }

    private let driverPID: pid_t
    private let port: Int
    private let session: String
    private let profile: String
    /// chromedriver's log.
    public let log: String

    /// Starts chromedriver and a browser session; `insecure` takes any
    /// certificate (the board's own, self-signed, on the home network).
    public init(_ device: Device, root: String, insecure: Bool = false) throws {
        profile = root + "/chromium-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        log = profile + ".log"
        port = try Self.freePort()
        driverPID = try spawnDetached([Self.chromedriver, "--port=\(port)"], output: log)
        var ready = false
        for _ in 0..<100 where !ready {
            if let c = try? WebTestClient(port: port), (try? c.request("GET", "/status", headers: [("Host", "127.0.0.1:\(port)")]))?.status == 200 {
                ready = true
            } else {
                usleep(50_000)
            }
        }
        guard ready else {
            stopProcess(driverPID)
            throw ProcessError("chromedriver did not answer on port \(port)")
        }
        var args = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=" + profile,
            "--no-first-run", "--disable-background-networking", "--disable-extensions", "--disable-sync",
        ]
        if insecure { args.append("--ignore-certificate-errors") }
        var options: [String: Any] = ["binary": Self.chromium]
        switch device {
        case .phone:
            args.append("--window-size=390,844")
            options["mobileEmulation"] = ["deviceMetrics": ["width": 390, "height": 844, "pixelRatio": 2.0, "touch": true]]
        case .desktop:
            args.append("--window-size=1280,900")
        }
        options["args"] = args
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": options]]]
        do {
            let answer = try Self.call(port: port, "POST", "/session", capabilities)
            guard let id = (answer["value"] as? [String: Any])?["sessionId"] as? String else {
                throw ProcessError("no WebDriver session: \(answer)")
            }
            session = id
        } catch {
            stopProcess(driverPID)
            throw error
        }
    }

    /// Ends the session (Chromium quits) and stops chromedriver.
    public func quit() {
        _ = try? Self.call(port: port, "DELETE", "/session/\(session)", nil)
        stopProcess(driverPID)
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Opens `url` and waits for the page to load.
    public func open(_ url: String) throws {
        _ = try command("POST", "url", ["url": url])
    }

    /// Runs `script` (a function body; `arguments[0]`… are `args`) in the page and returns its value.
    @discardableResult
    public func run(_ script: String, _ args: [Any] = []) throws -> Any? {
        let answer = try command("POST", "execute/sync", ["script": script, "args": args])
        return answer["value"]
    }

    /// Sends a DevTools protocol command.
    @discardableResult
    public func devtools(_ method: String, _ parameters: [String: Any]) throws -> [String: Any] {
        let answer = try command("POST", "goog/cdp/execute", ["cmd": method, "params": parameters])
        return answer["value"] as? [String: Any] ?? [:]
    }

    /// Touches the screen at (`x`, `y`) CSS pixels for `seconds`, then lifts.
    public func touch(_ x: Double, _ y: Double, holding seconds: Double = 0.05) throws {
        try devtools("Input.dispatchTouchEvent", ["type": "touchStart", "touchPoints": [["x": x, "y": y]]])
        usleep(useconds_t(seconds * 1_000_000))
        try devtools("Input.dispatchTouchEvent", ["type": "touchEnd", "touchPoints": [] as [Any]])
    }

    /// Clicks a mouse `button` (`left`, `right`, `middle`) at (`x`, `y`).
    public func click(_ x: Double, _ y: Double, button: String = "left") throws {
        let mask = ["left": 1, "right": 2, "middle": 4][button] ?? 1
        try devtools("Input.dispatchMouseEvent", ["type": "mouseMoved", "x": x, "y": y])
        try devtools("Input.dispatchMouseEvent", ["type": "mousePressed", "x": x, "y": y, "button": button, "buttons": mask, "clickCount": 1])
        try devtools("Input.dispatchMouseEvent", ["type": "mouseReleased", "x": x, "y": y, "button": button, "buttons": 0, "clickCount": 1])
    }

    /// Presses and releases a key (a `KeyboardEvent.key` value: "r", "ArrowRight", "Home").
    public func press(_ key: String) throws {
        let codes = ["ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, "Home": 36, "End": 35, "Escape": 27, "Enter": 13]
        var down: [String: Any] = ["type": "keyDown", "key": key]
        if let code = codes[key] {
            down["windowsVirtualKeyCode"] = code
            down["code"] = key
        } else {
            down["text"] = key
        }
        try devtools("Input.dispatchKeyEvent", down)
        try devtools("Input.dispatchKeyEvent", ["type": "keyUp", "key": key])
    }

    /// The page's rectangle of the element with id `id` (CSS pixels), if shown.
    public func rect(of id: String) throws -> (x: Double, y: Double, width: Double, height: Double)? {
        let value = try run(
            "const e = document.getElementById(arguments[0]); if (!e) return null; const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height];",
            [id])
        guard let r = value as? [Double], r.count == 4, r[2] > 0, r[3] > 0 else { return nil }
        return (r[0], r[1], r[2], r[3])
    }

    /// Polls `script`'s value until `done` holds, for at most `seconds`; the last value.
    @discardableResult
    public func wait(_ seconds: Double, for script: String, until done: (Any?) -> Bool) throws -> Any? {
        let deadline = Date().addingTimeInterval(seconds)
        var value = try run(script)
        while !done(value), Date() < deadline {
            usleep(10_000)
            value = try run(script)
        }
        return value
    }

    /// The browser's console messages so far (errors included).
    public func consoleErrors() throws -> [String] {
        let answer = try Self.call(port: port, "POST", "/session/\(session)/se/log", ["type": "browser"])
        let entries = answer["value"] as? [[String: Any]] ?? []
        return entries.filter { ($0["level"] as? String) == "SEVERE" }.compactMap { $0["message"] as? String }
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let answer = try Self.call(port: port, method, "/session/\(session)/\(path)", body)
        if let value = answer["value"] as? [String: Any], let error = value["error"] as? String {
            throw ProcessError("WebDriver \(path): \(error): \(value["message"] ?? "")")
        }
        return answer
    }

    private static func call(port: Int, _ method: String, _ path: String, _ body: [String: Any]?) throws -> [String: Any] {
        let client = try WebTestClient(port: port, timeout: 60)
        let bytes = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        let response = try client.request(
            method, path, headers: [("Host", "127.0.0.1:\(port)"), ("Content-Type", "application/json"), ("Connection", "close")], body: bytes)
        return (try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? ["status": response.status]
    }

    /// A TCP port free on 127.0.0.1 now.
    static func freePort() throws -> Int {
        let (fd, port) = try loopbackSocket(listening: false)
        close(fd)
        return port
    }
}
