import Foundation

/// Polls `condition` every `interval` seconds until it holds or `seconds`
/// pass; whether it came true. A condition that throws counts as false.
public func eventually(_ seconds: Double = 60, every interval: Double = 0.1, _ condition: () throws -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if (try? condition()) == true { return true }
        if Date() > deadline { return false }
        usleep(useconds_t(interval * 1_000_000))
    }
}

/// Polls an asynchronous `condition` every `interval` seconds until it
/// holds or `seconds` pass; whether it came true.
public func eventuallyAsync(_ seconds: Double = 10, every interval: Double = 0.02, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
    }
    return await condition()
}

/// Watches `condition` every `interval` seconds for `seconds`: whether it
/// held every time. Stops at the first time it does not, so a "never
/// happens" check fails as soon as it happens. A condition that throws
/// counts as false.
public func holds(_ seconds: Double, every interval: Double = 0.1, _ condition: () throws -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        if (try? condition()) != true { return false }
        usleep(useconds_t(interval * 1_000_000))
    } while Date() < deadline
    return (try? condition()) == true
}

/// Watches an asynchronous `condition` every `interval` seconds for
/// `seconds`: whether it held every time.
public func holdsAsync(_ seconds: Double, every interval: Double = 0.05, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        if await !condition() { return false }
        try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
    } while Date() < deadline
    return await condition()
}
