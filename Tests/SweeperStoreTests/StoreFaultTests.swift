import Foundation
import Testing

@testable import SweeperStore

/// The store on a tiny tmpfs (root only), unmounted and removed by `cleanup()`.
private struct TinyFileSystem {
    let path: String

    static func run(_ argv: [String]) -> Int32 {
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        guard posix_spawn(&pid, argv[0], nil, nil, cArgs, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    static var mountTool: String? { ["/usr/bin/mount", "/bin/mount"].first { FileManager.default.isExecutableFile(atPath: $0) } }
    static var umountTool: String? { ["/usr/bin/umount", "/bin/umount"].first { FileManager.default.isExecutableFile(atPath: $0) } }
    static let available: Bool = {
        guard getuid() == 0, mountTool != nil, umountTool != nil else { return false }
        guard let fs = try? TinyFileSystem(size: "1m") else { return false }
        fs.cleanup()
        return true
    }()

    init(size: String) throws {
        path = NSTemporaryDirectory() + "sweeper-tinyfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard let mount = Self.mountTool, Self.run([mount, "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) == 0 else {
            rmdir(path)
            throw StoreError.stateDirectory(path: path, detail: "cannot mount a tmpfs")
        }
    }

    /// Fills the file system to the last block; returns the filler files.
    func fill() -> [String] {
        var files: [String] = []
        for (i, chunk) in [1 << 20, 4096].enumerated() {
            let file = path + "/filler-\(i)"
            files.append(file)
            let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0 else { continue }
            let block = [UInt8](repeating: 0, count: chunk)
            for _ in 0..<10_000 where block.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, chunk) }) == chunk {}
            Glibc.close(fd)
        }
        return files
    }

    func cleanup() {
        if let umount = Self.umountTool, Self.run([umount, path]) != 0 { _ = Self.run([umount, "-l", path]) }
        try? FileManager.default.removeItem(atPath: path)
    }
}

@Suite struct StoreFaultTests {
    private static func op(_ seq: Int) -> StoredOp {
        StoredOp(gameID: "g", author: Data([1]), seq: Int64(seq), lamport: Int64(seq), bytes: Data(repeating: UInt8(seq & 0xFF), count: 200))
    }

    @Test(.enabled(if: TinyFileSystem.available, "needs root and tmpfs mounts"))
    func aFullDiskIsReportedAsFullAndTheStoreRecoversWhenSpaceReturns() throws {
        let fs = try TinyFileSystem(size: "2m")
        defer { fs.cleanup() }
        let store = try Store(directory: fs.path + "/state")
        defer { store.close() }
        let game = StoredGame(id: "g", params: Data(), created: Date(), lastActivity: Date(), status: "playing")
        #expect(try store.createGame(game, ops: [Self.op(1)]))
        let fillers = fs.fill()
        var seq = 2
        var refusal: StoreError?
        for _ in 0..<100 where refusal == nil {
            do {
                try store.append([Self.op(seq)], updating: "g", status: "playing")
                seq += 1
            } catch {
                refusal = error
            }
        }
        let error = try #require(refusal, "no write failed on a full file system")
        guard case .full(let path, _) = error else {
            Issue.record("not reported as full: \(error)")
            return
        }
        #expect(path == store.path)
        #expect("\(error)".hasPrefix("storage full:"))
        // Reads go on; the refused op is not there.
        #expect(try store.opCount() == seq - 1)
        for file in fillers { unlink(file) }
        try store.append([Self.op(seq)], updating: "g")
        #expect(try store.opCount() == seq)
        #expect(try Store.integrityCheck(path: store.path) == ["ok"])
    }

    /// Opening a closed WAL database makes its `-shm` index, which a full
    /// disk refuses: that is said as a full disk, not as a damaged file.
    @Test(.enabled(if: TinyFileSystem.available, "needs root and tmpfs mounts"))
    func openingOnAFullDiskSaysFullNotDamaged() throws {
        let fs = try TinyFileSystem(size: "2m")
        defer { fs.cleanup() }
        do { try Store(directory: fs.path + "/state").close() }
        let fillers = fs.fill()
        #expect {
            try Store(directory: fs.path + "/state").close()
        } throws: { error in
            guard case StoreError.full = error else { return false }
            return "\(error)".hasPrefix("storage full:")
        }
        for file in fillers { unlink(file) }
        let store = try Store(directory: fs.path + "/state")
        defer { store.close() }
        #expect(try store.games() == [])
    }

    @Test func integrityCheckReportsDamage() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try Store(directory: dir.path)
            for i in 1...200 { try store.append([Self.op(i)]) }
            store.close()
        }
        #expect(try Store.integrityCheck(path: dir.dbPath) == ["ok"])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.dbPath))
        for i in (4096 * 2)..<(4096 * 4) { bytes[i] = UInt8(truncatingIfNeeded: i &* 131) }
        try bytes.write(to: URL(fileURLWithPath: dir.dbPath))
        do {
            let report = try Store.integrityCheck(path: dir.dbPath)
            #expect(report != ["ok"])
        } catch {
            guard case .corrupt = error else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.dbPath)) == bytes)
    }
}
