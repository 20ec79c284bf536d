import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ControlEvent {
    /// The event as one JSON line (a trailing newline included), as
    /// ``ControlCoding/line(_:)`` writes it: keys sorted, absent fields left
    /// out, slashes unescaped.
    ///
    /// The events a move or a cursor sends to every viewer (`cells`,
    /// `presence`, `point`, and any other without a game's listing, a peer or
    /// a racer's standing) are written directly into bytes, several times
    /// faster than `JSONEncoder`; the others, and a progress that is not a
    /// finite number, go through `JSONEncoder`. Both give the same value
    /// when decoded, which the control protocol's tests check on many events.
    public func jsonLine() throws -> Data {
        guard listing == nil, peerInfo == nil, racer == nil, progress?.isFinite ?? true else {
            return try ControlCoding.line(self)
        }
        var out = JSONLineWriter()
        out.begin()
        if let byName { out.key("byName"); out.string(byName) }
        if let byPeer { out.key("byPeer"); out.string(byPeer) }
        if let cells {
            out.key("cells")
            out.byte(UInt8(ascii: "["))
            for (i, c) in cells.enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.begin()
                out.key("value"); out.string(c.value)
                out.key("x"); out.int(c.x)
                out.key("y"); out.int(c.y)
                out.end()
            }
            out.byte(UInt8(ascii: "]"))
        }
        if let dropped { out.key("dropped"); out.int(dropped) }
        out.key("event"); out.string(event.rawValue)
        if let game { out.key("game"); out.string(game) }
        if let minesLeft { out.key("minesLeft"); out.int(minesLeft) }
        if let presence {
            out.key("presence")
            out.begin()
            if let colour = presence.colour { out.key("colour"); out.int(colour) }
            if let game = presence.game { out.key("game"); out.string(game) }
            out.key("name"); out.string(presence.name)
            if let own = presence.own { out.key("own"); out.ascii(own ? "true" : "false") }
            out.key("peer"); out.string(presence.peer)
            if let x = presence.x { out.key("x"); out.int(x) }
            if let y = presence.y { out.key("y"); out.int(y) }
            out.end()
        }
        if let progress { out.key("progress"); out.ascii(progress.description) }
        if let status { out.key("status"); out.string(status.rawValue) }
        if let trippedByPeer { out.key("trippedByPeer"); out.string(trippedByPeer) }
        if let x { out.key("x"); out.int(x) }
        if let y { out.key("y"); out.int(y) }
        out.end()
        out.byte(0x0A)
        return Data(out.bytes)
    }

    /// Reads an event line as ``jsonLine()`` writes it, without
    /// `JSONDecoder`. Nil when the line is not an event, or holds what this
    /// does not read: a field of another type than the event's, a `null`, a
    /// game's listing, a peer or a racer's standing, any other key. The caller
    /// then decodes it with `JSONDecoder`, which decides; so both ways give
    /// the same event.
    public init?(jsonLine bytes: UnsafeRawBufferPointer) {
        guard let members = JSONLineReader.object(bytes, keys: Self.fastLineKeys),
            let kind = members["event"]?.string.flatMap(Kind.init(rawValue:))
        else { return nil }
        self.init(event: kind)
        for (key, value) in members {
            switch key {
            case "event": continue
            case "game": guard let v = value.string else { return nil }; game = v
            case "byName": guard let v = value.string else { return nil }; byName = v
            case "byPeer": guard let v = value.string else { return nil }; byPeer = v
            case "trippedByPeer": guard let v = value.string else { return nil }; trippedByPeer = v
            case "status": guard let v = value.string.flatMap(PlayStatus.init(rawValue:)) else { return nil }; status = v
            case "minesLeft": guard let v = value.int else { return nil }; minesLeft = v
            case "x": guard let v = value.int else { return nil }; x = v
            case "y": guard let v = value.int else { return nil }; y = v
            case "dropped": guard let v = value.int else { return nil }; dropped = v
            case "progress": guard let v = value.double else { return nil }; progress = v
            case "cells":
                guard let list = value.array else { return nil }
                var changes: [CellChange] = []
                changes.reserveCapacity(list.count)
                for element in list {
                    guard let c = element.object, c.count == 3, let x = c["x"]?.int, let y = c["y"]?.int, let v = c["value"]?.string
                    else { return nil }
                    changes.append(CellChange(x: x, y: y, value: v))
                }
                cells = changes
            case "presence":
                guard let p = value.object, let info = PresenceInfo(members: p) else { return nil }
                presence = info
            default: return nil
            }
        }
    }
}

extension ControlEvent {
    /// The keys ``init(jsonLine:)`` reads: any other (an answer's `id`, a
    /// game's listing) ends the reading at once.
    static let fastLineKeys: Set<String> = [
        "event", "game", "byName", "byPeer", "trippedByPeer", "status", "minesLeft", "x", "y", "dropped", "progress", "cells", "presence",
    ]
}

extension PresenceInfo {
    /// A presence from an object's members, each of its type; nil on any
    /// other key or type.
    init?(members: [String: JSONValue]) {
        guard let peer = members["peer"]?.string, let name = members["name"]?.string else { return nil }
        self.init(peer: peer, name: name)
        for (key, value) in members {
            switch key {
            case "peer", "name": continue
            case "game": guard let v = value.string else { return nil }; game = v
            case "x": guard let v = value.int else { return nil }; x = v
            case "y": guard let v = value.int else { return nil }; y = v
            case "colour": guard let v = value.int else { return nil }; colour = v
            case "own": guard let v = value.bool else { return nil }; own = v
            default: return nil
            }
        }
    }
}
