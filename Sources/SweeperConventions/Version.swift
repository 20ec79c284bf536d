/// The release of Sweeper that `sweeper --version`, `sweeperd --version` and
/// the daemon's `status` answer report.
public enum SweeperVersion {
    /// The version string.
    public static let current = "0.1.0"
}
