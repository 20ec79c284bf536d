import SweeperConventions

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The escape sequences the viewer sends to enter and leave its screen.
public enum TerminalSequences {
    /// Alternate screen, hidden cursor, SGR mouse reports of clicks, cleared screen.
    public static let enter = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h\u{1B}[0m\u{1B}[H\u{1B}[2J"
    /// Mouse off, default style, cursor shown, main screen back.
    public static let reset = "\u{1B}[?1006l\u{1B}[?1000l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
}

// State the signal handlers read. Written once before the handlers are
// installed (and before any other thread exists), then only read, so the
// unsynchronised access is safe; the handlers use only write(2),
// tcsetattr(3), signal(2) and raise(3), all async-signal-safe.
nonisolated(unsafe) private var savedTermios = termios()
nonisolated(unsafe) private var haveSavedTermios = false
nonisolated(unsafe) private var resetBytes: UnsafeMutablePointer<UInt8>?
nonisolated(unsafe) private var resetCount = 0
nonisolated(unsafe) private var restoreFD: Int32 = 1
nonisolated(unsafe) private var restoreInputFD: Int32 = 0
nonisolated(unsafe) private var active = false
/// The handlers that were in place before ours, by signal number (Swift's backtracer for crashes).
nonisolated(unsafe) private let previousActions: UnsafeMutablePointer<sigaction> = {
    let p = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    p.initialize(repeating: sigaction(), count: 65)
    return p
}()

/// Puts the terminal back: sequences out, saved mode back. Async-signal-safe.
private func restoreTerminalUnsafe() {
    guard active else { return }
    active = false
    if let resetBytes { _ = write(restoreFD, resetBytes, resetCount) }
    if haveSavedTermios { _ = tcsetattr(restoreInputFD, TCSAFLUSH, &savedTermios) }
}

private func fatalSignalHandler(_ signal: Int32) {
    restoreTerminalUnsafe()
    // Hand the signal to whoever had it before (the default action, or the
    // Swift runtime's crash backtracer), so the process ends as it would have.
    if signal >= 0 && signal < 65 {
        _ = sigaction(signal, previousActions + Int(signal), nil)
    } else {
        _ = Glibc.signal(signal, SIG_DFL)
    }
    _ = raise(signal)
}

/// The terminal the viewer runs on: raw mode, the alternate screen and mouse
/// reports while it runs, and everything restored on every way out — a
/// normal return, `exit`, SIGTERM, SIGHUP, SIGINT, SIGQUIT, and crashes
/// (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE).
public final class Terminal: @unchecked Sendable {
    /// The descriptor keys are read from.
    public let input: Int32
    /// The descriptor the screen is written to.
    public let output: Int32

    /// The signals that restore the terminal and then end the process.
    public static let fatalSignals: [Int32] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]

    /// Errors entering raw mode.
    public enum Failure: Error, CustomStringConvertible {
        /// Standard input or output is not a terminal.
        case notATerminal
        public var description: String { "sweeper play needs a terminal (standard input and output must be a tty)" }
    }

    /// Opens the terminal on `input` and `output` without changing it yet.
    public init(input: Int32 = 0, output: Int32 = 1) throws {
        guard isatty(input) == 1, isatty(output) == 1 else { throw Failure.notATerminal }
        self.input = input
        self.output = output
    }

    /// The terminal's size in columns and rows (80×24 if it will not say).
    public func size() -> (columns: Int, rows: Int) {
        var ws = winsize()
        if ioctl(output, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return (Int(ws.ws_col), Int(ws.ws_row))
        }
        return (80, 24)
    }

    /// Saves the mode, installs the restoring handlers, enters raw mode and
    /// the alternate screen. Call once, before starting other threads.
    public func enter() {
        var mode = termios()
        if tcgetattr(input, &mode) == 0 {
            savedTermios = mode
            haveSavedTermios = true
        }
        let bytes = Array(TerminalSequences.reset.utf8)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        buffer.initialize(from: bytes, count: bytes.count)
        resetBytes = buffer
        resetCount = bytes.count
        restoreFD = output
        restoreInputFD = input
        active = true
        atexit { restoreTerminalUnsafe() }
        for s in Self.fatalSignals where s < 65 {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = fatalSignalHandler
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(s, &action, previousActions + Int(s))
        }
        if haveSavedTermios {
            var raw = mode
            raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
            raw.c_oflag &= ~tcflag_t(OPOST)
            raw.c_cflag |= tcflag_t(CS8)
            raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(input, TCSAFLUSH, &raw)
        }
        write(TerminalSequences.enter)
    }

    /// Leaves the alternate screen and restores the saved mode (idempotent).
    public func restore() {
        restoreTerminalUnsafe()
    }

    /// Writes all of `bytes` (retrying short writes and EINTR).
    public func write(_ bytes: [UInt8]) {
        FileDescriptorWriter.writeAll(bytes, to: output)
    }

    /// Writes text.
    public func write(_ text: String) { write(Array(text.utf8)) }
}
