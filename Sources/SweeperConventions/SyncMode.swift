/// Which games a device syncs: what the daemon keeps and the control
/// protocol says.
public enum SyncMode: String, Codable, CaseIterable, Sendable {
    /// Every game of the circle but those forgotten (the default).
    case all
    /// Only the games held here (made, moved in or followed) and those followed.
    case mine
}
