import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Commands {
    /// `circle`: the circle's devices, who admitted each, and those removed.
    public enum Circle: ControlCommand {
        public static let name = "circle"
        public typealias Arguments = Empty
        /// The circle as this daemon's membership records say.
        public struct Result: Codable, Equatable, Sendable {
            /// The members, this device first, then by name.
            public var members: [CircleMember]
            /// The devices removed, newest first.
            public var removed: [RemovedDevice]
            /// This device, when it was removed: who removed it and when.
            public var removedHere: RemovedDevice?
            /// Creates the result.
            public init(members: [CircleMember], removed: [RemovedDevice], removedHere: RemovedDevice? = nil) {
                self.members = members
                self.removed = removed
                self.removedHere = removedHere
            }
        }
    }
}

extension Commands {
    /// `circle-admin`: name a member an admin (the founder and admins may).
    public enum CircleAdmin: ControlCommand {
        public static let name = "circle-admin"
        /// The device.
        public typealias Arguments = DeviceArguments
        /// The new admin.
        public struct Result: Codable, Equatable, Sendable {
            /// Its peer id.
            public var peerID: String
            /// Its name, when known.
            public var name: String
            /// Creates the result.
            public init(peerID: String, name: String) {
                self.peerID = peerID
                self.name = name
            }
        }
    }

    /// `circle-invitations`: turn a member's invitations off or on again
    /// (the founder and admins may, for members less senior than they are).
    public enum CircleInvitations: ControlCommand {
        public static let name = "circle-invitations"
        /// The member, and whether it may invite.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Its player name, or its peer id or a unique start of it.
            public var device: String
            /// `true`: it may invite again; `false`: its invitations are off.
            public var allowed: Bool
            /// Creates arguments.
            public init(device: String, allowed: Bool) {
                self.device = device
                self.allowed = allowed
            }
        }
        /// The member, as it now stands.
        public struct Result: Codable, Equatable, Sendable {
            /// Its peer id.
            public var peerID: String
            /// Its name, when known.
            public var name: String
            /// Whether it may invite now.
            public var allowed: Bool
            /// Creates the result.
            public init(peerID: String, name: String, allowed: Bool) {
                self.peerID = peerID
                self.name = name
                self.allowed = allowed
            }
        }
    }

    /// `circle-remove`: remove a device from the circle.
    public enum CircleRemove: ControlCommand {
        public static let name = "circle-remove"
        /// The device, and whether only to check.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Its player name, or its peer id or a unique start of it.
            public var device: String
            /// Only say whether this device may remove it, and what would
            /// go (its name, the players it hosts), changing nothing.
            public var check: Bool?
            /// Creates arguments.
            public init(device: String, check: Bool? = nil) {
                self.device = device
                self.check = check
            }
        }
        /// What the removal did (with `check`: what it would do; `keptOps`
        /// and `circleTag` are then as now).
        public struct Result: Codable, Equatable, Sendable {
            /// The removed device's peer id.
            public var peerID: String
            /// Its name, when known.
            public var name: String
            /// Its moves that stay (the ones this device held), over all games.
            public var keptOps: Int
            /// The circle's new tag (its key changed).
            public var circleTag: String
            /// The names of the players the device hosted, removed with it
            /// (it kept their keys); absent when none.
            public var hostedRemoved: [String]?
            /// Creates the result.
            public init(peerID: String, name: String, keptOps: Int, circleTag: String, hostedRemoved: [String]? = nil) {
                self.peerID = peerID
                self.name = name
                self.keptOps = keptOps
                self.circleTag = circleTag
                self.hostedRemoved = hostedRemoved
            }
        }
    }
}

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
    public var peerID: String
    /// Its player's name, as last heard (else the name it was admitted under; may be empty).
    public var name: String
    /// Whether it is this daemon's device.
    public var thisDevice: Bool
    /// Whether it is the circle's founder (made the circle).
    public var founder: Bool
    /// Its role: `founder`, `admin` or `member`.
    public var role: String
    /// Who admitted it (peer id), when it came by invitation.
    public var admittedBy: String?
    /// That member's name, when known.
    public var admittedByName: String?
    /// Who made the invitation it used (peer id): the admitting member,
    /// except in a circle made before roles.
    public var invitedBy: String?
    /// That member's name, when known.
    public var invitedByName: String?
    /// Places in its chain of membership records where it signed two
    /// different records (equivocation: a fault or an attack); absent when none.
    public var equivocatedAt: [UInt64]?
    /// Who turned its invitations off (peer id), while they are off: it
    /// makes none, and those it made admit nobody. Absent when it may invite.
    public var invitationsOffBy: String?
    /// That device's name, when known.
    public var invitationsOffByName: String?
    /// When it joined, ms since 1970 (the admitting device's clock).
    public var joinedMillis: UInt64
    /// Whether a link to it is up now.
    public var linked: Bool
    /// Seconds since it was last heard from; absent when never (or this device).
    public var lastSeenSecondsAgo: Double?
    /// The device that hosts this player (it keeps the player's key, and
    /// the player plays from a browser paired to it); absent for a device
    /// of its own.
    public var hostedBy: String?
    /// That device's name.
    public var hostedByName: String?
    /// Whether its ops taken here in the last day reached what one device
    /// may fill in a day (250,000 ops or 64 MiB): its new ones are refused
    /// until its day is over. Absent when not.
    public var overDailyQuota: Bool?

    /// Creates a member.
    public init(
        peerID: String, name: String, thisDevice: Bool, founder: Bool, role: String = "member", admittedBy: String?, admittedByName: String?,
        invitedBy: String? = nil, invitedByName: String? = nil, equivocatedAt: [UInt64]? = nil, invitationsOffBy: String? = nil,
        invitationsOffByName: String? = nil, joinedMillis: UInt64, linked: Bool, lastSeenSecondsAgo: Double?
    ) {
        self.peerID = peerID
        self.name = name
        self.thisDevice = thisDevice
        self.founder = founder
        self.role = role
        self.admittedBy = admittedBy
        self.admittedByName = admittedByName
        self.invitedBy = invitedBy
        self.invitedByName = invitedByName
        self.equivocatedAt = equivocatedAt
        self.invitationsOffBy = invitationsOffBy
        self.invitationsOffByName = invitationsOffByName
        self.joinedMillis = joinedMillis
        self.linked = linked
        self.lastSeenSecondsAgo = lastSeenSecondsAgo
    }
}

/// An invitation, as `invitations` lists it.
public struct InvitationInfo: Codable, Equatable, Sendable {
    /// What became of an invitation.
    public enum State: String, Codable, Sendable {
        case open, used, expired, revoked
    }
    /// Its id: the invitation's key, printed like a peer id.
    public var id: String
    /// Who made it (peer id), and that member's name when known.
    public var madeBy: String
    public var madeByName: String?
    /// When it was made and when it expires, ms since 1970.
    public var madeMillis: UInt64
    public var expiresMillis: UInt64
    /// What became of it.
    public var state: State
    /// The device it admitted (peer id), when used, and its name when known.
    public var usedBy: String?
    public var usedByName: String?
    /// The code, for an open invitation made on this device.
    public var code: String?

    /// Creates an invitation's description.
    public init(
        id: String, madeBy: String, madeByName: String?, madeMillis: UInt64, expiresMillis: UInt64, state: State, usedBy: String?,
        usedByName: String?, code: String?
    ) {
        self.id = id
        self.madeBy = madeBy
        self.madeByName = madeByName
        self.madeMillis = madeMillis
        self.expiresMillis = expiresMillis
        self.state = state
        self.usedBy = usedBy
        self.usedByName = usedByName
        self.code = code
    }
}

/// A device removed from the circle.
public struct RemovedDevice: Codable, Equatable, Sendable {
    /// Its printable peer id.
    public var peerID: String
    /// Its player's name, when known.
    public var name: String
    /// Who removed it (peer id).
    public var removedBy: String
    /// That member's name, when known.
    public var removedByName: String?
    /// When, ms since 1970 (the removing device's clock).
    public var removedMillis: UInt64
    /// Places in its chain of membership records where it signed two
    /// different records (a removed device forking its chain); absent when none.
    public var equivocatedAt: [UInt64]?

    /// Creates a removed device.
    public init(peerID: String, name: String, removedBy: String, removedByName: String?, removedMillis: UInt64, equivocatedAt: [UInt64]? = nil) {
        self.peerID = peerID
        self.name = name
        self.removedBy = removedBy
        self.removedByName = removedByName
        self.removedMillis = removedMillis
        self.equivocatedAt = equivocatedAt
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
            out += "This device was removed from the circle by \(gone.removedByName ?? shortID(gone.removedBy)) on \(when(gone.removedMillis)); ask an admin for a new invite.\n"
        }
        out += table(["DEVICE", "NAME", "ROLE", "JOINED", "INVITED BY", "ADMITTED BY", "LAST SEEN"], r.members.map { m in
            let admitted = m.founder ? "-" : (m.admittedByName ?? m.admittedBy.map(shortID) ?? "-")
            let invited = m.founder ? "-" : (m.invitedByName ?? m.invitedBy.map(shortID) ?? "-")
            let seen = m.thisDevice ? "this device" : m.linked ? "linked now" : m.lastSeenSecondsAgo.map(ago) ?? "never"
            let role = m.invitationsOffBy == nil ? m.role : "\(m.role), no invites"
            var name = m.name.isEmpty ? "-" : m.name
            if let host = m.hostedBy { name += " (hosted by \(m.hostedByName ?? shortID(host)))" }
            return [shortID(m.peerID), name, role, when(m.joinedMillis), invited, admitted, seen]
        })
        for m in r.members {
            if let off = m.invitationsOffBy {
                out += "\(m.thisDevice ? "This device's" : "\(m.name.isEmpty ? shortID(m.peerID) : m.name)'s") invitations are off (turned off by \(m.invitationsOffByName ?? shortID(off))).\n"
            }
            if let places = m.equivocatedAt, !places.isEmpty { out += forkWarning(name: m.name, peerID: m.peerID, places: places) }
            if m.overDailyQuota == true {
                let who = m.name.isEmpty ? "Device \(shortID(m.peerID))" : "\(m.name)'s device"
                out += "Warning: \(who) sent more moves in a day than a family's play makes; the rest are refused until its day is over.\n"
            }
        }
        if !r.removed.isEmpty {
            out += "Removed:\n"
            out += table(["DEVICE", "NAME", "REMOVED", "BY"], r.removed.map { d in
                [shortID(d.peerID), d.name.isEmpty ? "-" : d.name, when(d.removedMillis), d.removedByName ?? shortID(d.removedBy)]
            })
            for d in r.removed {
                if let places = d.equivocatedAt, !places.isEmpty { out += forkWarning(name: d.name, peerID: d.peerID, places: places) }
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
        var out = table(["INVITATION", "MADE BY", "EXPIRES", "STATE"], r.invitations.map { i in
            let state = i.state == .used ? "used by \(i.usedByName ?? i.usedBy.map(shortID) ?? "?")" : i.state.rawValue
            return [shortID(i.id), i.madeByName ?? shortID(i.madeBy), when(i.expiresMillis), state]
        })
        for i in r.invitations { if let code = i.code { out += "\(shortID(i.id)): \(code)\n" } }
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
