import Foundation
import SweeperConventions
import Testing

/// A non-blocking descriptor that is not ready is waited for in poll(2):
/// the reader and the writer use no CPU while they wait (a busy loop on
/// EAGAIN used a whole core).
@Suite(.serialized) struct FileDescriptorWaitTests {
    /// CPU time this thread has used, in milliseconds.
    static func threadCPUMillis() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1_000_000
    }

    /// A pipe whose end `nonBlocking` (0 read, 1 write) is non-blocking.
    static func pipe(nonBlocking end: Int) throws -> [Int32] {
        var fds: [Int32] = [0, 0]
        try #require(Glibc.pipe(&fds) == 0)
        _ = fcntl(fds[end], F_SETFL, fcntl(fds[end], F_GETFL) | O_NONBLOCK)
        return fds
    }

    @Test func aReaderWaitsForDataWithoutSpinning() throws {
        let fds = try Self.pipe(nonBlocking: 0)
        defer { close(fds[0]) }
        let writer = fds[1]
        Thread.detachNewThread {
            usleep(250_000)
            _ = FileDescriptorWriter.writeAll(Array("late".utf8), to: writer)
            close(writer)
        }
        let start = Date(), cpu = Self.threadCPUMillis()
        let bytes = try FileDescriptorReader.readAll(from: fds[0])
        let used = Self.threadCPUMillis() - cpu, waited = Date().timeIntervalSince(start)
        #expect(bytes == Array("late".utf8))
        // The wait happened, and cost next to nothing.
        #expect(waited >= 0.2, "the reader did not wait: \(waited) s")
        #expect(used < 100, "the reader used \(used) ms of CPU in \(waited) s of waiting")
    }

    @Test func aWriterWaitsForRoomWithoutSpinning() throws {
        let fds = try Self.pipe(nonBlocking: 1)
        defer { close(fds[1]) }
        let reader = fds[0]
        // Fill the pipe, then drain it only after a while.
        let filler = [UInt8](repeating: 7, count: 4096)
        while write(fds[1], filler, filler.count) > 0 {}
        Thread.detachNewThread {
            usleep(250_000)
            var sink = [UInt8](repeating: 0, count: 65_536)
            while read(reader, &sink, sink.count) > 0 {}
            close(reader)
        }
        let start = Date(), cpu = Self.threadCPUMillis()
        let wrote = FileDescriptorWriter.writeAll(Array("more".utf8), to: fds[1])
        let used = Self.threadCPUMillis() - cpu, waited = Date().timeIntervalSince(start)
        #expect(wrote)
        #expect(waited >= 0.2, "the writer did not wait: \(waited) s")
        #expect(used < 100, "the writer used \(used) ms of CPU in \(waited) s of waiting")
    }
}
