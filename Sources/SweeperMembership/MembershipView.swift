import SweeperCrypto
import SweeperSync

/// How senior a device is: by role (the founder, then admins, then
/// members), then by its place in the circle's admissions (its
/// *lineage*: the admitting device's lineage and the position of the
/// admission in the admitter's chain; the founder's is empty, so an
/// admitter is always more senior than those it admitted), then by key.
/// No author chooses any of it: a role is given by a more senior device,
/// and a position in a chain is fixed once written.
public struct Seniority: Comparable, Sendable, CustomStringConvertible {
    /// The role.
    public let role: Role
    /// The lineage.
    public let lineage: [UInt64]
    /// The device.
    public let peer: PeerID

    /// Whether `a` is more senior than `b`.
    public static func < (a: Seniority, b: Seniority) -> Bool {
        if a.role != b.role { return a.role < b.role }
        if a.lineage != b.lineage { return a.lineage.lexicographicallyPrecedes(b.lineage) }
        return a.peer < b.peer
    }

    public var description: String { "\(role) \(lineage.map(String.init).joined(separator: "."))" }
}

/// Who is in a circle, derived from its membership records.
public struct MembershipView: Sendable, Equatable {
    /// A member and how it came in.
    public struct Member: Sendable, Equatable {
        /// The device.
        public let peer: PeerID
        /// Its role.
        public internal(set) var role: Role
        /// The name it was admitted under (empty for the founder).
        public let name: String
        /// Who invited and admitted it (one device: an invitation is
        /// redeemed only with the member that made it); `nil` for the founder.
        public let admittedBy: PeerID?
        /// The invitation it used; `nil` for the founder.
        public let invitation: PeerID?
        /// When it was admitted or founded (the record's clock).
        public let joinedMillis: UInt64
        /// Its place among the circle's admissions.
        public let lineage: [UInt64]
        /// Who named it an admin, when it is one by a promotion.
        public internal(set) var promotedBy: PeerID?
        /// Who turned its invitations off, while they are: it makes none,
        /// and those it made admit nobody.
        public internal(set) var invitationsOffBy: PeerID?
        /// When an admin admitted it again after a removal: the admission
        /// record, and per game how many of its ops the removal kept (its
        /// later ops there written before it came back are gone for good).
        public internal(set) var readmission: Readmission?

        /// The device that hosts it, when it is a player another device
        /// keeps the key of (that device made an invitation whose key is the
        /// player's own, and admitted it with it); nil for a device of its own.
        public var hostedBy: PeerID? { invitation == peer ? admittedBy : nil }

        /// Whether it may invite (and admit with its invitations).
        public var invites: Bool { role != .member || invitationsOffBy == nil }

        /// How senior it is.
        public var seniority: Seniority { Seniority(role: role, lineage: lineage, peer: peer) }
    }

    /// A removed device's admission again (see ``Member/readmission``).
    public struct Readmission: Sendable, Equatable {
        /// The admission record.
        public let record: RecordHash
        /// Per game, how many of its ops its removal kept.
        public let kept: [GameID: UInt64]
    }

    /// A removed device.
    public struct Removal: Sendable, Equatable {
        /// The device.
        public let peer: PeerID
        /// Who removed it (of several removals, the most senior author's).
        public let removedBy: PeerID
        /// When (the record's clock).
        public let removedMillis: UInt64
        /// Its records up to this position in its chain stand; later ones are void.
        public let through: UInt64
        /// Per game, how many of its ops stay (the most any removal kept).
        public internal(set) var kept: [GameID: UInt64]
    }

    /// An invitation and what became of it.
    public struct Invitation: Sendable, Equatable {
        /// What became of an invitation.
        public enum State: Sendable, Equatable {
            /// Not used or revoked (it may have expired: compare ``Invitation/expiresMillis`` with the clock).
            case open
            /// Used to admit this device.
            case used(by: PeerID)
            /// Revoked by this member (or its maker was removed by it).
            case revoked(by: PeerID)
        }
        /// The invitation's public key (its id).
        public let key: PeerID
        /// Who made it: the one member that may admit with it.
        public let madeBy: PeerID
        /// When.
        public let madeMillis: UInt64
        /// When it stops working.
        public let expiresMillis: UInt64
        /// What became of it.
        public internal(set) var state: State
    }

    /// One circle key after the first: the rekey record that made it.
    public struct Epoch: Sendable, Equatable {
        /// 1, 2, …
        public let epoch: UInt64
        /// The record.
        public let record: RecordHash
        /// When the record says it was made (its author's clock, ms since
        /// 1970): the boards of the day after then use this key.
        public let madeMillis: UInt64
        /// The key's ``CircleKey/check``.
        public let check: [UInt8]
        /// The key, sealed to each member the record's author counted.
        public let sealed: [PeerID: [UInt8]]
    }

    /// The members.
    public internal(set) var members: [PeerID: Member] = [:]
    /// The removed devices.
    public internal(set) var removed: [PeerID: Removal] = [:]
    /// Every invitation, by key.
    public internal(set) var invitations: [PeerID: Invitation] = [:]
    /// The keys after the first, in order (index = epoch − 1).
    public internal(set) var epochs: [Epoch] = []
    /// Whether some removed device may hold the newest key: a removal no
    /// rekey has followed yet. A member that sees this makes a new key.
    public internal(set) var needsRekey = false
    /// Devices that signed two records at one place in their chain, with
    /// those places: each record counts, and the device is shown.
    public internal(set) var equivocations: [PeerID: [UInt64]] = [:]

    /// Whether `peer` is a member.
    public func isMember(_ peer: PeerID) -> Bool { members[peer] != nil }
    /// Whether `peer` was removed (and not admitted again).
    public func isRemoved(_ peer: PeerID) -> Bool { removed[peer] != nil }
    /// The newest key's epoch (0: the first key).
    public var currentEpoch: UInt64 { UInt64(epochs.count) }
    /// The founder.
    public var founder: PeerID? { members.values.first { $0.role == .founder }?.peer }
    /// A member's role.
    public func role(of peer: PeerID) -> Role? { members[peer]?.role }

    /// Why `author` may not remove `subject`, or `nil` when it may: only the
    /// founder and admins remove, and never a device more senior than they are.
    public func removalRefusal(by author: PeerID, of subject: PeerID) -> AuthorityRefusal? {
        guard let a = members[author] else { return .notAMember }
        guard a.role <= .admin else { return .notAnAdmin }
        guard subject != author else { return .thisDevice }
        guard let s = members[subject] else { return .subjectNotAMember }
        guard a.seniority < s.seniority else { return .moreSenior(s.role) }
        return nil
    }

    /// Why `author` may not turn `subject`'s invitations off or on, or
    /// `nil` when it may: the founder and admins do, for a member less
    /// senior than they are; only as senior a device as the one that
    /// turned them off, or more, turns them on again.
    public func invitationSwitchRefusal(by author: PeerID, of subject: PeerID, allowing: Bool) -> AuthorityRefusal? {
        guard let a = members[author] else { return .notAMember }
        guard a.role <= .admin else { return .notAnAdmin }
        guard subject != author else { return .thisDevice }
        guard let s = members[subject] else { return .subjectNotAMember }
        guard s.role == .member else { return .alreadyAdmin(s.role) }
        guard a.seniority < s.seniority else { return .moreSenior(s.role) }
        if allowing, let off = s.invitationsOffBy, let offBy = members[off], offBy.seniority < a.seniority { return .offByMoreSenior(offBy.role) }
        return nil
    }

    /// Why `author` may not name `subject` an admin, or `nil` when it may.
    public func promotionRefusal(by author: PeerID, of subject: PeerID) -> AuthorityRefusal? {
        guard let a = members[author] else { return .notAMember }
        guard a.role <= .admin else { return .notAnAdmin }
        guard let s = members[subject] else { return .subjectNotAMember }
        guard s.role == .member else { return .alreadyAdmin(s.role) }
        guard a.seniority < s.seniority else { return .moreSenior(s.role) }
        return nil
    }
}

/// Why a device may not make a change.
public enum AuthorityRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The author is not a member.
    case notAMember
    /// Only the founder and admins may do this.
    case notAnAdmin
    /// A device does not remove itself.
    case thisDevice
    /// The subject is not a member.
    case subjectNotAMember
    /// The subject is as senior as the author or more (its role given).
    case moreSenior(Role)
    /// The subject is an admin or the founder already.
    case alreadyAdmin(Role)
    /// A more senior device (of this role) turned the subject's invitations off.
    case offByMoreSenior(Role)

    public var description: String {
        switch self {
        case .notAMember: "this device is not a member of its circle"
        case .notAnAdmin: "only the circle's founder and admins may do that; ask one of them"
        case .thisDevice: "a device does not remove itself"
        case .subjectNotAMember: "that device is not a member"
        case .moreSenior(let role): "that device (\(role)) is as senior as this one or more: only a more senior device may"
        case .alreadyAdmin(let role): "that device is the circle's \(role) already"
        case .offByMoreSenior(let role): "a more senior device (\(role)) turned them off: only it, or one as senior, turns them on again"
        }
    }
}
