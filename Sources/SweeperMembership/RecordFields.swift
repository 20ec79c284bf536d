import SweeperConventions
import SweeperCrypto
import SweeperSync

/// The fields both versions of membership records write alike: keys, an
/// admitted name, a removal's kept ops, a rekey's sealed keys and the
/// parent hashes. Each reader refuses what is out of order or too long.
enum RecordFields {
    /// The length of a sealed circle key.
    static let sealedKeyByteCount = CircleKey.byteCount + SealedBox.overhead

    static func peer(_ r: inout ByteReader, _ field: String) throws(ByteDecodingError) -> PeerID {
        do {
            return try PeerID(bytes: try r.take(PeerID.byteCount, field))
        } catch {
            throw .truncated(field: field)
        }
    }

    static func write(name: String, into w: inout ByteWriter) {
        w.lengthPrefixed(Array(PlayerName.truncated(name).utf8))
    }

    static func name(_ r: inout ByteReader) throws(ByteDecodingError) -> String {
        let bytes = try r.lengthPrefixed("admitted name", max: PlayerName.byteLimit)
        guard let name = String(validating: bytes, as: UTF8.self) else { throw .invalidText(field: "admitted name") }
        return name
    }

    static func write(kept: [GameID: UInt64], into w: inout ByteWriter) {
        w.varint(kept.count)
        for game in kept.keys.sorted() {
            w.append(game.bytes)
            w.varint(kept[game] ?? 0)
        }
    }

    static func kept(_ r: inout ByteReader, limit: Int) throws(ByteDecodingError) -> [GameID: UInt64] {
        let count = try r.int("kept game count", max: limit)
        var kept: [GameID: UInt64] = [:]
        var last: GameID?
        for _ in 0..<count {
            guard let game = GameID(bytes: try r.take(GameID.byteCount, "kept game")) else { throw .truncated(field: "kept game") }
            if let last, !(last < game) { throw .valueOutOfRange(field: "kept game order", value: 0) }
            last = game
            kept[game] = try r.varint("kept ops")
        }
        return kept
    }

    static func write(rekey epoch: UInt64, check: [UInt8], sealed: [PeerID: [UInt8]], into w: inout ByteWriter) {
        w.varint(epoch)
        w.append(check)
        w.varint(sealed.count)
        for member in sealed.keys.sorted() {
            w.append(member.bytes)
            w.append(sealed[member] ?? [])
        }
    }

    static func rekey(_ r: inout ByteReader, limit: Int) throws(ByteDecodingError)
        -> (epoch: UInt64, check: [UInt8], sealed: [PeerID: [UInt8]])
    {
        let epoch = try r.varint("key epoch")
        guard epoch >= 1 else { throw .valueOutOfRange(field: "key epoch", value: epoch) }
        let check = try r.take(16, "key check")
        let count = try r.int("sealed key count", max: limit)
        var sealed: [PeerID: [UInt8]] = [:]
        var last: PeerID?
        for _ in 0..<count {
            let member = try peer(&r, "key recipient")
            if let last, !(last < member) { throw .valueOutOfRange(field: "key recipient order", value: 0) }
            last = member
            sealed[member] = try r.take(sealedKeyByteCount, "sealed key")
        }
        return (epoch, check, sealed)
    }

    static func write(parents: [RecordHash], into w: inout ByteWriter) {
        w.varint(parents.count)
        for p in parents { w.append(p.bytes) }
    }

    static func parents(_ r: inout ByteReader, limit: Int) throws(ByteDecodingError) -> [RecordHash] {
        let count = try r.int("parent count", max: limit)
        var parents: [RecordHash] = []
        for _ in 0..<count {
            let p = RecordHash(unchecked: try r.take(RecordHash.byteCount, "parent hash"))
            if let last = parents.last, !(last < p) { throw .valueOutOfRange(field: "parent order", value: 0) }
            parents.append(p)
        }
        return parents
    }
}
