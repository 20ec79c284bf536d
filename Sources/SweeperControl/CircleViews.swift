import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The device a circle command is about.
public struct DeviceArguments: Codable, Equatable, Sendable {
    /// Its player name, or its peer id or a unique start of it.
    public var device: String
    /// Creates arguments.
    public init(device: String) { self.device = device }
}

/// A member of the circle, as `circle` shows it.
public struct CircleMember: Codable, Equatable, Sendable {
    /// Its printable peer id.
    public var peer: String
    /// Its player's name, as last heard (else the name it was admitted under; may be empty).
    public var name: String
    /// Whether it is this daemon's device.
    public var thisDevice: Bool
    /// Whether it is the circle's founder (made the circle).
    public var founder: Bool
    /// Its role: `founder`, `admin` or `member`.
    public var role: String
    /// Who admitted it (peer id), when it came by invitation.
    public var admittedByPeer: String?
    /// That member's name, when known.
    public var admittedByName: String?
    /// Who made the invitation it used (peer id): the admitting member,
    /// except in a circle made before roles.
    public var invitedByPeer: String?
    /// That member's name, when known.
    public var invitedByName: String?
    /// Places in its chain of membership records where it signed two
    /// different records (equivocation: a fault or an attack); absent when none.
    public var equivocatedPlaces: [UInt64]?
    /// Who turned its invitations off (peer id), while they are off: it
    /// makes none, and those it made admit nobody. Absent when it may invite.
    public var invitationsOffByPeer: String?
    /// That device's name, when known.
    public var invitationsOffByName: String?
    /// When it joined, ms since 1970 (the admitting device's clock).
    public var joinedAt: UInt64
    /// Whether a link to it is up now.
    public var linked: Bool
    /// When it was last heard from, ms since 1970; absent when never (or this device).
    public var lastSeenAt: Int64?
    /// The device that hosts this player (it keeps the player's key, and
    /// the player plays from a browser paired to it); absent for a device
    /// of its own.
    public var hostedByPeer: String?
    /// That device's name.
    public var hostedByName: String?
    /// Whether its ops taken here in the last day reached what one device
    /// may fill in a day (250,000 ops or 64 MiB): its new ones are refused
    /// until its day is over. Absent when not.
    public var overDailyQuota: Bool?

    /// Creates a member.
    public init(
        peer: String, name: String, thisDevice: Bool, founder: Bool, role: String = "member", admittedByPeer: String?, admittedByName: String?,
        invitedByPeer: String? = nil, invitedByName: String? = nil, equivocatedPlaces: [UInt64]? = nil, invitationsOffByPeer: String? = nil,
        invitationsOffByName: String? = nil, joinedAt: UInt64, linked: Bool, lastSeenAt: Int64?
    ) {
        self.peer = peer
        self.name = name
        self.thisDevice = thisDevice
        self.founder = founder
        self.role = role
        self.admittedByPeer = admittedByPeer
        self.admittedByName = admittedByName
        self.invitedByPeer = invitedByPeer
        self.invitedByName = invitedByName
        self.equivocatedPlaces = equivocatedPlaces
        self.invitationsOffByPeer = invitationsOffByPeer
        self.invitationsOffByName = invitationsOffByName
        self.joinedAt = joinedAt
        self.linked = linked
        self.lastSeenAt = lastSeenAt
    }
}

/// An invitation, as `invitations` lists it.
public struct InvitationInfo: Codable, Equatable, Sendable {
    /// What became of an invitation.
    public enum State: String, Codable, Sendable {
        case open, used, expired, revoked
    }
    /// Its id: the invitation's key, printed like a peer id.
    public var invitation: String
    /// Who made it (peer id), and that member's name when known.
    public var madeByPeer: String
    public var madeByName: String?
    /// When it was made and when it expires, ms since 1970.
    public var madeAt: UInt64
    public var expiresAt: UInt64
    /// What became of it.
    public var state: State
    /// The device it admitted (peer id), when used, and its name when known.
    public var usedByPeer: String?
    public var usedByName: String?
    /// The code, for an open invitation made on this device.
    public var code: String?

    /// Creates an invitation's description.
    public init(
        invitation: String, madeByPeer: String, madeByName: String?, madeAt: UInt64, expiresAt: UInt64, state: State, usedByPeer: String?,
        usedByName: String?, code: String?
    ) {
        self.invitation = invitation
        self.madeByPeer = madeByPeer
        self.madeByName = madeByName
        self.madeAt = madeAt
        self.expiresAt = expiresAt
        self.state = state
        self.usedByPeer = usedByPeer
        self.usedByName = usedByName
        self.code = code
    }
}

/// A device removed from the circle.
public struct RemovedDevice: Codable, Equatable, Sendable {
    /// Its printable peer id.
    public var peer: String
    /// Its player's name, when known.
    public var name: String
    /// Who removed it (peer id).
    public var removedByPeer: String
    /// That member's name, when known.
    public var removedByName: String?
    /// When, ms since 1970 (the removing device's clock).
    public var removedAt: UInt64
    /// Places in its chain of membership records where it signed two
    /// different records (a removed device forking its chain); absent when none.
    public var equivocatedPlaces: [UInt64]?

    /// Creates a removed device.
    public init(peer: String, name: String, removedByPeer: String, removedByName: String?, removedAt: UInt64, equivocatedPlaces: [UInt64]? = nil) {
        self.peer = peer
        self.name = name
        self.removedByPeer = removedByPeer
        self.removedByName = removedByName
        self.removedAt = removedAt
        self.equivocatedPlaces = equivocatedPlaces
    }
}

extension ControlFormatting {
    /// A device as a sentence names it: `Mum (AB12C)`, or its short id alone.
    public static func device(name: String, peerID: String) -> String {
        name.isEmpty ? shortID(peerID) : "\(name) (\(shortID(peerID)))"
    }

    /// The members as a table, then the removed devices.
    public static func circle(_ r: Commands.Circle.Result, now: Date = Date()) -> String {
        func when(_ ms: UInt64) -> String { date(millis: ms) }
        var out = ""
        if let gone = r.removedHere {
            out +=
                "This device was removed from the circle by \(gone.removedByName ?? shortID(gone.removedByPeer)) on \(when(gone.removedAt)); ask an admin for a new invite.\n"
        }
        out += table(
            ["DEVICE", "NAME", "ROLE", "JOINED", "INVITED BY", "ADMITTED BY", "LAST SEEN"],
            r.members.map { m in
                let admitted = m.founder ? "-" : (m.admittedByName ?? m.admittedByPeer.map(shortID) ?? "-")
                let invited = m.founder ? "-" : (m.invitedByName ?? m.invitedByPeer.map(shortID) ?? "-")
                let seen = m.thisDevice ? "this device" : m.linked ? "linked now" : m.lastSeenAt.map { ago(secondsSince($0, now: now)) } ?? "never"
                let role = m.invitationsOffByPeer == nil ? m.role : "\(m.role), no invites"
                var name = m.name.isEmpty ? "-" : m.name
                if let host = m.hostedByPeer { name += " (hosted by \(m.hostedByName ?? shortID(host)))" }
                return [shortID(m.peer), name, role, when(m.joinedAt), invited, admitted, seen]
            })
        for m in r.members {
            if let off = m.invitationsOffByPeer {
                out +=
                    "\(m.thisDevice ? "This device's" : "\(m.name.isEmpty ? shortID(m.peer) : m.name)'s") invitations are off (turned off by \(m.invitationsOffByName ?? shortID(off))).\n"
            }
            if let places = m.equivocatedPlaces, !places.isEmpty { out += forkWarning(name: m.name, peerID: m.peer, places: places) }
            if m.overDailyQuota == true {
                let who = m.name.isEmpty ? "Device \(shortID(m.peer))" : "\(m.name)'s device"
                out += "Warning: \(who) sent more moves in a day than a family's play makes; the rest are refused until its day is over.\n"
            }
        }
        if !r.removed.isEmpty {
            out += "Removed:\n"
            out += table(
                ["DEVICE", "NAME", "REMOVED", "BY"],
                r.removed.map { d in
                    [shortID(d.peer), d.name.isEmpty ? "-" : d.name, when(d.removedAt), d.removedByName ?? shortID(d.removedByPeer)]
                })
            for d in r.removed {
                if let places = d.equivocatedPlaces, !places.isEmpty { out += forkWarning(name: d.name, peerID: d.peer, places: places) }
            }
        }
        return out
    }

    /// "Max's device signed two records at place 4 …": a fork of a chain of
    /// membership records, which voids the device's records from there on.
    static func forkWarning(name: String, peerID: String, places: [UInt64]) -> String {
        let who = name.isEmpty ? "Device \(shortID(peerID))" : "\(name)'s device"
        let at = places.count == 1 ? "place \(places[0])" : "places \(places.map(String.init).joined(separator: ", "))"
        return "Warning: \(who) signed two different membership records at \(at) of its chain: a broken device or an attack. "
            + "Its records from place \(places[0]) on count for nothing; an admin's new invitation lets the person back in.\n"
    }

    /// The invitations as a table, with the codes of open ones made here.
    public static func invitations(_ r: Commands.Invitations.Result) -> String {
        if r.invitations.isEmpty { return "No invitations.\n" }
        let now = Date()
        func when(_ ms: UInt64) -> String { date(millis: ms, near: now) }
        var out = table(
            ["INVITATION", "MADE BY", "EXPIRES", "STATE"],
            r.invitations.map { i in
                let state = i.state == .used ? "used by \(i.usedByName ?? i.usedByPeer.map(shortID) ?? "?")" : i.state.rawValue
                return [shortID(i.invitation), i.madeByName ?? shortID(i.madeByPeer), when(i.expiresAt), state]
            })
        for i in r.invitations { if let code = i.code { out += "\(shortID(i.invitation)): \(code)\n" } }
        return out
    }

    /// "12s ago", "5 min ago", "3 h ago", "2 days ago".
    static func ago(_ seconds: Double) -> String {
        switch seconds {
        case ..<60: "\(Int(seconds))s ago"
        case ..<3600: "\(Int(seconds / 60)) min ago"
        case ..<86_400: "\(Int(seconds / 3600)) h ago"
        default: "\(Int(seconds / 86_400)) days ago"
        }
    }
}
