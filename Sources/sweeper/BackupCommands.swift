import ArgumentParser
import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperDaemon

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A path as the user typed it, made absolute against this process's
/// working directory (the daemon's is another).
func absolutePath(_ path: String) -> String {
    guard !path.hasPrefix("/") else { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return (cwd == "/" ? "" : cwd) + "/" + path
}

/// `sweeper backup FILE`.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write this device (identity, circle, every game) to FILE while the daemon runs.",
        discussion: "The file is this device's only copy outside its database: keep it private. sweeper restore FILE puts it back.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "A new file to write (never overwritten).") var file: String

    func run() async throws {
        let path = absolutePath(file)
        try await callDaemon(options, Commands.Backup.self, .init(path: path)) { r in
            "Backed up this device (\(ControlFormatting.shortID(r.peer)), \(ControlFormatting.count(r.gameCount, "game"))) to \(r.path), "
                + "\(r.bytes / 1024) KiB. It holds this device's secret key: keep it private. sweeper restore \(r.path) puts it back.\n"
        }
    }
}

/// `sweeper restore FILE`.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup in place as this machine's device, with no daemon running.",
        discussion: """
            The restored device is the one backed up, not a new one: run it on one machine only. \
            To move a device, stop sweeperd on the old machine and delete its state directory. \
            To add another device instead, start afresh and join with an invite code.
            """)
    @OptionGroup var options: ClientOptions  // --json; no daemon is asked
    @Option(name: .customLong("state-dir"), help: "The daemon's state directory (default as sweeperd's).") var stateDirectory: String?
    @Option(name: .customLong("config"), help: "The daemon's config file, for its state_dir.") var configFile: String?
    @Flag(help: "Replace a device already in the state directory (it is kept aside, not deleted).") var replace = false
    @Argument(help: "A file sweeper backup wrote.") var file: String

    func run() throws {
        var overrides = DaemonOverrides()
        overrides.stateDirectory = stateDirectory.map(absolutePath)
        overrides.configFile = configFile.map(absolutePath)
        // YYYY-MM-DD-HHMMSS in UTC: the moved-aside database's name says when.
        let now = Int64(Date().timeIntervalSince1970)
        let day = now >= 0 ? now / 86_400 : (now - 86_399) / 86_400
        let second = now - day * 86_400
        let stamp =
            CivilDate(daysSince1970: day).text + "-" + CivilDate.padded(second / 3600, 2) + CivilDate.padded(second / 60 % 60, 2)
            + CivilDate.padded(second % 60, 2)
        let report: DeviceRestore.Report
        do {
            report = try DeviceRestore.restore(absolutePath(file), overrides: overrides, replacing: replace, stamp: stamp)
        } catch {
            if options.json { printJSON(["error": ControlError(code: "restore-refused", message: "\(error)")]) }
            Output.write("sweeper: \(error)\n", to: STDERR_FILENO)
            throw ExitCode(1)
        }
        if options.json {
            printJSON(report)
            return
        }
        var text =
            "Restored device \(ControlFormatting.shortID(report.peerID)) (\(ControlFormatting.count(report.games, "game"))) into \(report.stateDirectory).\n"
        if let aside = report.movedAside { text += "The device that was there is kept at \(aside).\n" }
        text += """
            Start it: systemctl --user start sweeperd (or sweeperd &); its circle takes it back as it was.
            It is the device that was backed up, not a new one: run it on this machine only. If the old machine \
            still has it, stop sweeperd there and delete its state directory before starting this one.

            """
        Output.write(text)
    }
}
