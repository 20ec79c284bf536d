import NIOCore
import NIOPosix
import SweeperEventLoop
import Testing

@Suite struct EventLoopTaskExecutorTests {
    /// A task that prefers the executor runs on its loop, and so do its
    /// child tasks and what runs after each suspension; a task without the
    /// preference does not.
    @Test func tasksWithThePreferenceRunOnTheLoopAcrossSuspensions() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let executor = EventLoopTaskExecutor(loop)
        #expect(!loop.inEventLoop)
        let seen: [Bool] = await withTaskExecutorPreference(executor) {
            var seen = [loop.inEventLoop]
            try? await Task.sleep(for: .milliseconds(5))
            seen.append(loop.inEventLoop)
            await withTaskGroup(of: Bool.self) { children in
                for _ in 0..<4 { children.addTask { loop.inEventLoop } }
                for await child in children { seen.append(child) }
            }
            let other = await Task(executorPreference: executor) { loop.inEventLoop }.value
            seen.append(other)
            return seen
        }
        #expect(seen == Array(repeating: true, count: 7))
        let outside = await Task.detached { loop.inEventLoop }.value
        #expect(!outside)
    }
}
