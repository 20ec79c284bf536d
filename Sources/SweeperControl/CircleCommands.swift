import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands about the circle: invitations and joining, the devices
/// in it, and what its admins may change.
extension Commands {
    /// `invite`: a single-use invite code that expires.
    public enum Invite: ControlCommand {
        public static let name = "invite"
        /// How long the code works.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Seconds until it expires (1 to 30 days' worth; default 24 hours).
            public var validSeconds: Int?
            /// Creates arguments.
            public init(validSeconds: Int? = nil) { self.validSeconds = validSeconds }
        }
        /// The code.
        public struct Result: Codable, Equatable, Sendable {
            /// The invite code to type on the other machine.
            public var code: String
            /// The circle's tag.
            public var circleTag: String
            /// The invitation's id (its key, as `invitations` lists it).
            public var invitation: String
            /// When the code stops working, ms since 1970.
            public var expiresAt: UInt64
            /// Creates the result.
            public init(code: String, circleTag: String, invitation: String, expiresAt: UInt64) {
                self.code = code
                self.circleTag = circleTag
                self.invitation = invitation
                self.expiresAt = expiresAt
            }
        }
        /// The shortest and longest lifetimes, in seconds.
        public static let validRange = 1...(30 * 86_400)
        /// The lifetime when none is given: 24 hours.
        public static let defaultValidSeconds = 86_400
    }

    /// `invitations`: the circle's invitations and what became of them.
    public enum Invitations: ControlCommand {
        public static let name = "invitations"
        public typealias Arguments = Empty
        /// The invitations, newest first.
        public struct Result: Codable, Equatable, Sendable {
            /// The invitations.
            public var invitations: [InvitationInfo]
            /// Creates the result.
            public init(invitations: [InvitationInfo]) { self.invitations = invitations }
        }
    }

    /// `invite-revoke`: revoke an open invitation.
    public enum InviteRevoke: ControlCommand {
        public static let name = "invite-revoke"
        /// The invitation.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Its id as `invitations` lists it, or a unique start of it.
            public var invitation: String
            /// Creates arguments.
            public init(invitation: String) { self.invitation = invitation }
        }
        /// The invitation, now revoked.
        public typealias Result = InvitationInfo
    }

    /// `join CODE`: move into the circle of an invite code.
    public enum Join: ControlCommand {
        public static let name = "join"
        /// The code.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The invite code.
            public var code: String
            /// A member's `host:port`, when mDNS does not reach one.
            public var address: String?
            /// What becomes of the games held before: kept (the default),
            /// readable here and never sent to the new circle, or forgotten.
            public var oldGames: OldGames?
            /// How long to wait, without `address`, for the member that made
            /// the code to appear (seconds, 0 to 600; 15 when absent).
            public var waitSeconds: Double?
            /// Creates arguments.
            public init(code: String, address: String? = nil, oldGames: OldGames? = nil, waitSeconds: Double? = nil) {
                self.code = code
                self.address = address
                self.oldGames = oldGames
                self.waitSeconds = waitSeconds
            }
        }
        /// What `join` does with the games held before.
        public enum OldGames: String, Codable, CaseIterable, Sendable {
            /// They stay, readable; nothing of them goes to the new circle.
            case keep
            /// They are deleted from this device.
            case forget
        }
        /// The circle joined.
        public struct Result: Codable, Equatable, Sendable {
            /// The new circle's tag.
            public var circleTag: String
            /// The member that admitted this device (peer id); absent for a code of an earlier release.
            public var admittedByPeer: String?
            /// How many games held before were kept (readable, never sent to the new circle).
            public var keptGameCount: Int?
            /// How many games held before were forgotten.
            public var forgottenGameCount: Int?
            /// Creates the result.
            public init(circleTag: String, admittedByPeer: String? = nil, keptGameCount: Int? = nil, forgottenGameCount: Int? = nil) {
                self.circleTag = circleTag
                self.admittedByPeer = admittedByPeer
                self.keptGameCount = keptGameCount
                self.forgottenGameCount = forgottenGameCount
            }
        }
    }

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

    /// `circle-admin`: name a member an admin (the founder and admins may).
    public enum CircleAdmin: ControlCommand {
        public static let name = "circle-admin"
        /// The device.
        public typealias Arguments = DeviceArguments
        /// The new admin.
        public struct Result: Codable, Equatable, Sendable {
            /// Its peer id.
            public var peer: String
            /// Its name, when known.
            public var name: String
            /// Creates the result.
            public init(peer: String, name: String) {
                self.peer = peer
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
            public var peer: String
            /// Its name, when known.
            public var name: String
            /// Whether it may invite now.
            public var allowed: Bool
            /// Creates the result.
            public init(peer: String, name: String, allowed: Bool) {
                self.peer = peer
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
            public var peer: String
            /// Its name, when known.
            public var name: String
            /// Its moves that stay (the ones this device held), over all games.
            public var keptOps: Int
            /// The circle's new tag (its key changed).
            public var circleTag: String
            /// The names of the players the device hosted, removed with it
            /// (it kept their keys); absent when none.
            public var hostedRemovedNames: [String]?
            /// Creates the result.
            public init(peer: String, name: String, keptOps: Int, circleTag: String, hostedRemovedNames: [String]? = nil) {
                self.peer = peer
                self.name = name
                self.keptOps = keptOps
                self.circleTag = circleTag
                self.hostedRemovedNames = hostedRemovedNames
            }
        }
    }
}
