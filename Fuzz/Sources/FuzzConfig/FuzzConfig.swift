// The config file (`config.toml`): the parser on the text, then the whole
// resolution of settings from the file as sweeperd does it at start
// (keys, types, addresses, names, log level).
import Foundation
import FuzzSupport

@testable import SweeperDaemon

let scratch: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
    return base + "sweeper-fuzz-config-\(getpid()).toml"
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    if let text = String(validating: bytes, as: UTF8.self), let entries = try? ConfigFileParser.parse(text, file: "config.toml") {
        for entry in entries {
            if case .string(let s) = entry.value { _ = HostPort(s)?.description }
            if case .array(let a) = entry.value { for s in a { _ = HostPort(s)?.description } }
        }
    }
    // Foundation's FileManager.contents(atPath:) leaks a 4 KiB buffer on an
    // empty file (found by this target; a Foundation bug, once per start
    // of sweeperd at most): LeakSanitizer would stop at it every run.
    guard !bytes.isEmpty, FileManager.default.createFile(atPath: scratch, contents: Data(bytes)) else { return 0 }
    var overrides = DaemonOverrides()
    overrides.configFile = scratch
    let environment = ["HOME": "/home/fuzz", "USER": "fuzz", "XDG_RUNTIME_DIR": "/run/user/1000"]
    if let settings = try? DaemonSettings.resolve(overrides: overrides, environment: environment) {
        check(!settings.name.isEmpty, "settings with an empty name")
        for address in settings.listen + settings.peers { check(HostPort(address) != nil, "an address that is not HOST:PORT was let through") }
    }
    return 0
}

@_cdecl("FuzzConfig_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        [
            """
            # sweeperd settings
            state_dir = "/var/lib/sweeper"
            socket = '/run/user/1000/sweeper/control.sock'
            listen = ["0.0.0.0:7455", "[::]:7455"]
            peers = ["192.168.1.20:7455", "[fe80::1%eth0]:7455"]  # static peers
            name = "Ann \\"the sweeper\\""
            mdns = false
            log_level = "debug"

            """,
            "listen = \"127.0.0.1:7455\"\r\nmdns = true\r\nname = 'bob'\r\n",
            "peers = []\nlog_level = \"TRACE\"\n",
            "name = \"tab\\there\\nnewline\"\n",
        ].map { Array($0.utf8) }
    }
    return runFuzzer(argc, argv, fuzzConfig)
}
