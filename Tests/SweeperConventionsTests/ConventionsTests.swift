import Foundation
import SweeperConventions
import Testing

@Suite struct HexTests {
    @Test func encodesLowerCaseTwoDigitsAByte() {
        #expect(Hex.encode([]) == "")
        #expect(Hex.encode([0x00, 0x09, 0x0a, 0x7f, 0xa5, 0xff]) == "00090a7fa5ff")
    }

    @Test func decodesEitherCaseAndRefusesOddOrForeignText() {
        #expect(Hex.decode("00090A7fa5FF") == [0x00, 0x09, 0x0a, 0x7f, 0xa5, 0xff])
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("0g") == nil)
    }

    @Test func roundTripsEveryByte() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
    }
}

@Suite struct PlayerNameTests {
    @Test func cutsOnACharacterBoundaryInBytes() {
        let name = String(repeating: "Ü", count: 33)  // 66 bytes
        let cut = PlayerName.cleaned(name)
        #expect(cut == String(repeating: "Ü", count: 32))
        #expect(cut.utf8.count == 64)
        #expect(PlayerName.cleaned(String(repeating: "Ü", count: 40), limit: 63).utf8.count == 62)
        #expect(PlayerName.truncated("ann") == "ann")
    }

    @Test func dropsControlCharactersSoNoEscapeSequenceReachesATerminal() {
        #expect(PlayerName.cleaned("an\nn\r\0") == "ann")
        #expect(PlayerName.cleaned("\u{1B}[2J\u{1B}]0;pwned\u{07}mum") == "[2J]0;pwnedmum")
        #expect(PlayerName.cleaned("a\u{7F}b\u{9B}31mc\tz") == "ab31mcz")
        #expect(PlayerName.cleaned("Mäx 🙂") == "Mäx 🙂")
        // truncated keeps them: it only cuts.
        #expect(PlayerName.truncated("a\nb") == "a\nb")
    }

    @Test func dropsFormatCharactersThatReorderOrHideWhatANameShows() {
        // Bidi embeddings, overrides and isolates, the marks, zero-width characters, the BOM, a soft hyphen.
        for invisible: Unicode.Scalar in [
            "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}",
            "\u{2069}", "\u{200E}", "\u{200F}", "\u{200B}", "\u{200C}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{AD}",
        ] {
            #expect(PlayerName.cleaned("M\(Character(invisible))ax") == "Max", "U+\(String(invisible.value, radix: 16, uppercase: true))")
        }
        // "Max" shown right to left as "xaM" by an override, then back: plain "Max" (reads as it is stored).
        #expect(PlayerName.cleaned("\u{202E}xaM\u{202C}") == "xaM")
        #expect(PlayerName.cleaned("Mäx 🙂 Ölçü") == "Mäx 🙂 Ölçü")
        // A signed name may hold them (a release before kept them); only control characters make it invalid.
        #expect(!PlayerName.hasControlCharacters("M\u{200B}ax") && PlayerName.hasControlCharacters("M\u{1B}ax"))
    }

    @Test func lookAlikeNamesOfOtherScriptsHaveOneSkeleton() {
        // Cyrillic М, а, х; Greek Μ, α, χ: each looks like Latin "Max".
        #expect(PlayerName.looksLike("\u{41C}\u{430}\u{445}", "Max"))
        #expect(PlayerName.looksLike("\u{39C}\u{3B1}\u{3C7}", "max"))
        #expect(PlayerName.looksLike("MUM", "mum") && PlayerName.looksLike("M\u{200D}um", "Mum"))
        #expect(PlayerName.looksLike("\u{421}\u{410}\u{41C}", "Cam") && PlayerName.looksLike("\u{420}\u{435}\u{442}\u{435}", "Pete"))
        #expect(PlayerName.skeleton("\u{41C}\u{430}\u{445}") == "max")
        // Names that only share letters do not.
        #expect(!PlayerName.looksLike("Max", "Mac") && !PlayerName.looksLike("\u{41C}\u{430}\u{448}\u{430}", "Max"))
        #expect(!PlayerName.looksLike("Sam", "Sām"))
    }
}

@Suite struct SweeperPathsTests {
    @Test func followsXDGWithAbsolutePathsOnly() {
        let paths = SweeperPaths(environment: [
            "HOME": "/home/ann", "XDG_STATE_HOME": "/xs", "XDG_CONFIG_HOME": "/xc", "XDG_RUNTIME_DIR": "/run/user/5",
        ])
        #expect(paths.stateDirectory == "/xs/sweeper")
        #expect(paths.configFile == "/xc/sweeper/config.toml")
        #expect(paths.socket == "/run/user/5/sweeper/control.sock")

        // Relative values are ignored, as the XDG specification says.
        let relative = SweeperPaths(environment: [
            "HOME": "/home/ann", "XDG_STATE_HOME": "state", "XDG_CONFIG_HOME": "", "XDG_RUNTIME_DIR": "run",
        ])
        #expect(relative.stateDirectory == "/home/ann/.local/state/sweeper")
        #expect(relative.configFile == "/home/ann/.config/sweeper/config.toml")
        #expect(relative.socket == "/tmp/sweeper-\(getuid())/control.sock")
    }

    @Test func sweeperSocketWins() {
        let paths = SweeperPaths(environment: ["SWEEPER_SOCKET": "/x.sock", "XDG_RUNTIME_DIR": "/run/user/1"])
        #expect(paths.socket == "/x.sock")
    }
}

@Suite struct PrivateDirectoryTests {
    private func mode(_ path: String) -> mode_t {
        var st = stat()
        _ = stat(path, &st)
        return st.st_mode & 0o777
    }

    @Test func makesMissingParentsOwnerOnly() throws {
        let base = NSTemporaryDirectory() + "sweeper-private-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try PrivateDirectory.make(base + "/a/b")
        #expect(mode(base) == 0o700)
        #expect(mode(base + "/a/b") == 0o700)
        // An existing directory is left as it is, unless asked to tighten.
        chmod(base + "/a/b", 0o755)
        try PrivateDirectory.make(base + "/a/b")
        #expect(mode(base + "/a/b") == 0o755)
        try PrivateDirectory.make(base + "/a/b", tighten: true)
        #expect(mode(base + "/a/b") == 0o700)
    }

    /// The socket's directory in `/tmp` is taken only as this user's own,
    /// 0700, and no symbolic link; another user's, an open one or a link is refused.
    @Test func aSharedPlaceDirectoryMustBeOwnPrivateAndNoLink() throws {
        let base = NSTemporaryDirectory() + "sweeper-owned-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try PrivateDirectory.make(base)
        let made = base + "/made"
        try PrivateDirectory.makeOwned(made)
        #expect(mode(made) == 0o700)
        try PrivateDirectory.makeOwned(made)  // again: it is ours
        let open = base + "/open"
        #expect(mkdir(open, 0o755) == 0 && chmod(open, 0o755) == 0)
        #expect { try PrivateDirectory.makeOwned(open) } throws: { "\($0)".contains("mode 755") }
        let link = base + "/link"
        #expect(symlink(made, link) == 0)
        #expect { try PrivateDirectory.makeOwned(link) } throws: { "\($0)".contains("symbolic link") }
        if geteuid() == 0 {
            let theirs = base + "/theirs"
            #expect(mkdir(theirs, 0o700) == 0 && chown(theirs, 65534, 65534) == 0)
            #expect { try PrivateDirectory.makeOwned(theirs) } throws: { "\($0)".contains("belongs to user 65534") }
        }
    }

    @Test func refusesAFile() throws {
        let file = NSTemporaryDirectory() + "sweeper-private-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(throws: PrivateDirectoryError.self) { try PrivateDirectory.make(file) }
        #expect(throws: PrivateDirectoryError.self) { try PrivateDirectory.make(file + "/below") }
    }
}

/// Columns as a terminal draws them: what tables align by.
@Suite struct DisplayWidthTests {
    @Test func emojiAndWideCharactersTakeTwoColumnsAndMarksNone() {
        #expect(DisplayWidth.of("Mum") == 3)
        #expect(DisplayWidth.of("Mum 🌷") == 6)
        #expect(DisplayWidth.of("❤️") == 2)  // an emoji by its variation selector
        #expect(DisplayWidth.of("❤") == 1)  // the same, as text
        #expect(DisplayWidth.of("おばあちゃん") == 12)
        #expect(DisplayWidth.of("Zoë") == 3 && DisplayWidth.of("Zoe\u{0308}") == 3)
        #expect(DisplayWidth.of("👨‍👩‍👧") == 2)  // one family, one picture
        #expect(DisplayWidth.padded("🌷", to: 4) == "🌷  ")
        #expect(DisplayWidth.padded("Mum", to: 2) == "Mum")
    }
}

/// What replaced Foundation's formatting and text helpers in the shipped
/// program (which links FoundationEssentials only), checked against
/// Foundation itself where it has the same thing.
@Suite struct WithoutFoundationTests {
    @Test func cFormatMatchesFoundationsStringFormat() {
        for value in [0.0, 1.005, 2.5, 33.333, -4.25, 1234.5678] {
            #expect(String(cFormat: "%.2f", value) == String(format: "%.2f", value))
            #expect(String(cFormat: "%.1f ms", value) == String(format: "%.1f ms", value))
        }
        #expect(String(cFormat: "%ld:%02ld:%02ld", 1, 2, 3) == "1:02:03")
        #expect(String(cFormat: "%2ld ", 7) == " 7 ")
        // Longer than the first buffer: formatted whole.
        #expect(String(cFormat: "%0300ld", 5).count == 300)
    }

    @Test func localTimeMatchesFoundationsDateFormatterInThisZone() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for seconds in [0.0, 1_795_572_251.794, 1_800_000_000, 951_782_400] {
            #expect(String(localTime: seconds, format: "%Y-%m-%d %H:%M:%S") == formatter.string(from: Date(timeIntervalSince1970: seconds)))
        }
    }

    @Test func folderOfAPathIsWhatDirnameSays() {
        #expect(SweeperPaths.folder(of: "/a/b/c") == "/a/b")
        #expect(SweeperPaths.folder(of: "/a/b/") == "/a")
        #expect(SweeperPaths.folder(of: "/c") == "/")
        #expect(SweeperPaths.folder(of: "c") == ".")
        #expect(SweeperPaths.folder(of: "a/b") == "a")
        for path in ["/a/b/c", "/c", "/run/user/1000/sweeper/control.sock"] {
            #expect(SweeperPaths.folder(of: path) == (path as NSString).deletingLastPathComponent)
        }
    }

    @Test func trimmingAndMatchingCaseAside() {
        #expect(" \t ann \n".trimmedOfWhitespace == "ann")
        #expect("\n\n".trimmedOfWhitespace == "")
        #expect("a b".trimmedOfWhitespace == "a b")
        #expect("Ann".equalsIgnoringCase("aNN") && "ÉLODIE".equalsIgnoringCase("élodie"))
        #expect(!"ann".equalsIgnoringCase("anne"))
    }

    @Test func readsAFileToItsEndOrToItsLimit() throws {
        let path = NSTemporaryDirectory() + "sweeper-read-\(UUID().uuidString)"
        defer { unlink(path) }
        let bytes = (0..<200_000).map { UInt8($0 % 251) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        #expect(try FileDescriptorReader.readAll(path: path) == bytes)
        #expect(try FileDescriptorReader.readAll(path: path, limit: 99) == Array(bytes.prefix(100)))
        #expect(try FileDescriptorReader.readAll(path: "/dev/null").isEmpty)
        #expect(throws: FileDescriptorReader.Failure.self) { try FileDescriptorReader.readAll(path: path + "-missing") }
    }

    @Test func civilDatesAgreeWithFoundationsGregorianCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        // Leap days, century years, the epoch, before it, and far off (from
        // 1582-10-15: Foundation's calendar is Julian before it).
        for days: Int64 in [0, -1, 59, 789, 10_956, 11_016, 20_512, -141_427, 2_932_896, -25_567, 47_540] {
            let date = CivilDate(daysSince1970: days)
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            #expect(date == CivilDate(year: Int64(parts.year!), month: Int64(parts.month!), day: Int64(parts.day!)), "day \(days)")
            #expect(date.daysSince1970 == days)
        }
        #expect(CivilDate(daysSince1970: 0).text == "1970-01-01")
        #expect(CivilDate(year: 2000, month: 2, day: 29).daysSince1970 == 11_016)
        #expect(CivilDate(year: 12, month: 3, day: 4).text == "0012-03-04")
        // Proleptic: the first day of year 1 is the one ISO 8601 counts.
        #expect(CivilDate(year: 1, month: 1, day: 1).daysSince1970 == -719_162)
    }
}
