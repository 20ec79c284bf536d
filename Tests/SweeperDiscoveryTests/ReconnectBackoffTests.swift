import SweeperDiscovery
import Testing

/// A machine without avahi-daemon: discovery tries again less and less
/// often and says so once, not every few seconds.
struct ReconnectBackoffTests {
    @Test func triesComeFurtherApartUpToFiveMinutesAndOnlyTheFirstIsNoted() {
        var b = ReconnectBackoff()
        #expect(b.wait == .seconds(3))
        #expect(b.look(failed: false) == .none)
        var waits: [Duration] = []
        var notes: [ReconnectBackoff.Note] = []
        for _ in 0..<12 {
            notes.append(b.look(failed: true))
            waits.append(b.wait)
        }
        #expect(waits.prefix(8) == [.seconds(3), .seconds(6), .seconds(12), .seconds(24), .seconds(48), .seconds(96), .seconds(192), .seconds(300)])
        #expect(waits.dropFirst(7).allSatisfy { $0 == .seconds(300) })
        #expect(notes.first == .lost)
        #expect(notes.dropFirst() == (2...12).map { .retrying(attempt: $0) }[...])
        // A day without avahi: 288 tries at most after the first few, not 28,800.
        var elapsed: Duration = .zero, tries = 0
        var day = ReconnectBackoff()
        while elapsed < .seconds(86_400) {
            _ = day.look(failed: true)
            elapsed += day.wait
            tries += 1
        }
        #expect(tries < 300, "\(tries) tries in a day")
        // Reached again: said once, and the next failure starts over.
        #expect(b.look(failed: false) == .back)
        #expect(b.look(failed: false) == .none)
        #expect(b.wait == .seconds(3))
        #expect(b.look(failed: true) == .lost)
    }

    @Test func theWarningSaysWhatToDo() {
        let text = ReconnectBackoff.remedy("Daemon not running")
        #expect(text.contains("Daemon not running") && text.contains("avahi-daemon") && text.contains("mdns = false") && text.contains("5 minutes"))
    }
}
