// A QR Code (Model 2) encoder in pure Swift, following ISO/IEC 18004:2015.
// Byte mode only (the text's UTF-8 bytes), versions 1–40, levels L/M/Q/H.

/// A QR Code symbol: a square grid of dark and light modules.
///
/// Create one from text, then read modules with the subscript or draw it
/// with ``terminalText(quietZone:invert:)`` or ``asciiText(quietZone:)``:
///
/// ```swift
/// let code = try QRCode("https://192.168.1.20:8392/pair#K7Q2-M4XD-93FA")
/// print(code.terminalText())
/// ```
///
/// The text is encoded in byte mode as UTF-8, in the smallest version
/// (1–40) that holds it at the requested error correction level. The data
/// mask is the one with the lowest penalty score (ISO/IEC 18004:2015 §7.8.3),
/// scored over the complete symbol with its format and version information.
public struct QRCode: Sendable {
    /// Error correction level: how much of the symbol may be damaged and
    /// still be read. Higher levels hold less data.
    public enum Correction: Sendable, CaseIterable {
        /// Level L: recovers about 7% of the codewords.
        case low
        /// Level M: recovers about 15% of the codewords.
        case medium
        /// Level Q: recovers about 25% of the codewords.
        case quartile
        /// Level H: recovers about 30% of the codewords.
        case high

        /// Row in the block tables (L, M, Q, H).
        var tableIndex: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .quartile: 2
            case .high: 3
            }
        }

        /// The two error-correction bits of the format information.
        var formatBits: Int { [1, 0, 3, 2][tableIndex] }
    }

    /// Why a QR Code could not be made.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The data is `byteCount` bytes long but at most `maximum` bytes fit
        /// (in version 40, or in the version that was asked for).
        case tooLong(byteCount: Int, maximum: Int)
        /// A version outside 1...40 was asked for.
        case invalidVersion(Int)
        /// A mask outside 0...7 was asked for.
        case invalidMask(Int)

        /// A sentence explaining the failure.
        public var description: String {
            switch self {
            case let .tooLong(byteCount, maximum):
                "The data is \(byteCount) bytes long, but at most \(maximum) bytes fit in a QR code at this error correction level."
            case let .invalidVersion(version):
                "QR code version \(version) does not exist; versions are 1 to 40."
            case let .invalidMask(mask):
                "QR code mask \(mask) does not exist; masks are 0 to 7."
            }
        }
    }

    /// Number of modules on each side: 17 + 4 × ``version``.
    public let size: Int
    /// The version (1–40) of the symbol.
    public let version: Int
    /// The error correction level of the symbol.
    public let correction: Correction
    /// The data mask pattern (0–7) applied to the symbol.
    public let mask: Int
    /// Modules in row-major order; true is dark.
    private let modules: [Bool]

    /// Whether the module in column `x` and row `y` is dark (true) or light.
    /// The origin is the top-left corner. Coordinates outside the symbol
    /// read as light, like the quiet zone around it.
    public subscript(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// Encodes `text` as its UTF-8 bytes in the smallest version that fits.
    ///
    /// - Parameters:
    ///   - text: The text to encode.
    ///   - correction: The error correction level; medium (M) by default.
    /// - Throws: ``Failure/tooLong(byteCount:maximum:)`` when the text does
    ///   not fit in version 40 at this level (at most 2953, 2331, 1663 and
    ///   1273 bytes for L, M, Q and H).
    public init(_ text: String, correction: Correction = .medium) throws(Failure) {
        try self.init(bytes: Array(text.utf8), correction: correction)
    }

    /// Encodes raw bytes in byte mode.
    ///
    /// - Parameters:
    ///   - bytes: The data to encode.
    ///   - correction: The error correction level; medium (M) by default.
    ///   - version: A version (1–40) to use exactly, or nil for the smallest
    ///     version that fits.
    ///   - mask: A mask pattern (0–7) to use, or nil to choose the one with
    ///     the lowest penalty score.
    /// - Throws: ``Failure/tooLong(byteCount:maximum:)`` when the data does
    ///   not fit; ``Failure/invalidVersion(_:)`` or ``Failure/invalidMask(_:)``
    ///   for an out-of-range `version` or `mask`.
    public init(
        bytes: [UInt8], correction: Correction = .medium,
        version: Int? = nil, mask: Int? = nil
    ) throws(Failure) {
        if let mask, !(0...7).contains(mask) { throw .invalidMask(mask) }
        let chosenVersion: Int
        if let version {
            guard (1...40).contains(version) else { throw .invalidVersion(version) }
            let capacity = Self.byteCapacity(version: version, correction: correction)
            guard bytes.count <= capacity else {
                throw .tooLong(byteCount: bytes.count, maximum: capacity)
            }
            chosenVersion = version
        } else {
            let fitting = (1...40).first { bytes.count <= Self.byteCapacity(version: $0, correction: correction) }
            guard let fitting else {
                throw .tooLong(
                    byteCount: bytes.count,
                    maximum: Self.byteCapacity(version: 40, correction: correction))
            }
            chosenVersion = fitting
        }

        var base = Grid(version: chosenVersion)
        base.placeData(Self.codewords(bytes, version: chosenVersion, correction: correction))

        var best = base
        var bestMask = 0
        if let mask {
            best.applyMask(mask)
            best.drawFormat(correction: correction, mask: mask)
            bestMask = mask
        } else {
            // §7.8.3.1: the whole symbol is evaluated, format information included.
            var bestPenalty = Int.max
            for candidate in 0..<8 {
                var grid = base
                grid.applyMask(candidate)
                grid.drawFormat(correction: correction, mask: candidate)
                let penalty = grid.penalty()
                if penalty < bestPenalty {
                    bestPenalty = penalty
                    best = grid
                    bestMask = candidate
                }
            }
        }
        self.size = best.size
        self.version = chosenVersion
        self.correction = correction
        self.mask = bestMask
        self.modules = best.dark
    }

    /// The largest number of bytes that fit in `version` (1–40) at the
    /// given level in byte mode, or 0 for a version outside 1...40.
    public static func byteCapacity(version: Int, correction: Correction) -> Int {
        guard (1...40).contains(version) else { return 0 }
        let headerBits = 4 + (version < 10 ? 8 : 16)
        return (dataCodewordCount(version: version, correction: correction) * 8 - headerBits) / 8
    }

    /// The penalty score (N1 + N2 + N3 + N4 of ISO/IEC 18004:2015 Table 11)
    /// of the finished symbol, as used to choose the mask.
    var penaltyScore: Int {
        Grid(size: size, dark: modules).penalty()
    }

    // MARK: - Drawing

    /// The symbol drawn with Unicode half blocks ("▀", "▄", "█", " "), two
    /// module rows per line, surrounded by a light quiet zone.
    ///
    /// - Parameters:
    ///   - quietZone: Width in modules of the light border, clamped to
    ///     0...64. The standard asks for 4; 2 is usually enough on screens.
    ///   - invert: When false, dark modules are drawn as blocks, which suits
    ///     a dark foreground on a light background. Set it for light text on
    ///     a dark terminal: then light modules (and the quiet zone) are drawn
    ///     as blocks.
    /// - Returns: `(size + 2 × quietZone + 1) / 2` lines of
    ///   `size + 2 × quietZone` characters, joined by "\n" with no newline
    ///   at the end.
    public func terminalText(quietZone: Int = 2, invert: Bool = false) -> String {
        let quiet = min(max(0, quietZone), 64)
        let side = size + 2 * quiet
        var lines: [String] = []
        for top in stride(from: 0, to: side, by: 2) {
            var line = ""
            for x in 0..<side {
                let upper = self[x - quiet, top - quiet] != invert
                let lower = top + 1 < side && (self[x - quiet, top + 1 - quiet] != invert)
                switch (upper, lower) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The symbol drawn in plain ASCII, one line per module row: "##" for a
    /// dark module and two spaces for a light one, for terminals without
    /// UTF-8. Best read with dark text on a light background.
    ///
    /// - Parameter quietZone: Width in modules of the light border,
    ///   clamped to 0...64.
    /// - Returns: `size + 2 × quietZone` lines joined by "\n", with no
    ///   newline at the end.
    public func asciiText(quietZone: Int = 2) -> String {
        let quiet = min(max(0, quietZone), 64)
        let side = size + 2 * quiet
        var lines: [String] = []
        for y in 0..<side {
            var line = ""
            for x in 0..<side {
                line += self[x - quiet, y - quiet] ? "##" : "  "
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    // MARK: - Tables (ISO/IEC 18004:2015 Table 9), index 0 unused

    /// Error correction codewords per block, rows L, M, Q, H.
    static let eccCodewordsPerBlock: [[Int]] = [
        [
            0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
            28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
            26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
        [
            0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
            28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
            30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
    ]

    /// Number of error correction blocks, rows L, M, Q, H.
    static let blockCounts: [[Int]] = [
        [
            0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
            8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
        ],
        [
            0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
            17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
        ],
        [
            0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
            23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
        ],
        [
            0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
            25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
        ],
    ]

    /// Modules available for data and error correction codewords
    /// (remainder bits included) in `version`.
    static func rawDataModuleCount(version: Int) -> Int {
        var count = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignCount = version / 7 + 2
            count -= (25 * alignCount - 10) * alignCount - 55
            if version >= 7 { count -= 36 }
        }
        return count
    }

    /// Data codewords (without error correction) in `version` at `correction`.
    static func dataCodewordCount(version: Int, correction: Correction) -> Int {
        let row = correction.tableIndex
        return rawDataModuleCount(version: version) / 8
            - eccCodewordsPerBlock[row][version] * blockCounts[row][version]
    }

    /// Centre coordinates of the alignment patterns in `version` (Annex E).
    static func alignmentPositions(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let step = (version * 8 + count * 3 + 5) / (count * 4 - 4) * 2
        var positions = [Int](repeating: 6, count: count)
        var position = version * 4 + 17 - 7
        for index in stride(from: count - 1, to: 0, by: -1) {
            positions[index] = position
            position -= step
        }
        return positions
    }

    /// The 15 format information bits (BCH(15,5), masked with 101010000010010).
    static func formatBits(correction: Correction, mask: Int) -> Int {
        let data = correction.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        return (data << 10 | remainder & 0x3FF) ^ 0x5412
    }

    /// The 18 version information bits (BCH(18,6)), for versions 7 and up.
    static func versionBits(version: Int) -> Int {
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        return version << 12 | remainder & 0xFFF
    }

    // MARK: - Codewords

    /// The final interleaved sequence of data and error correction codewords.
    static func codewords(_ bytes: [UInt8], version: Int, correction: Correction) -> [UInt8] {
        let row = correction.tableIndex
        let blockCount = blockCounts[row][version]
        let eccLength = eccCodewordsPerBlock[row][version]
        let totalCodewords = rawDataModuleCount(version: version) / 8
        let dataLength = dataCodewordCount(version: version, correction: correction)

        // Mode indicator 0100, character count, data, terminator, padding.
        var bits: [Bool] = []
        func append(_ value: Int, _ length: Int) {
            for shift in stride(from: length - 1, through: 0, by: -1) {
                bits.append((value >> shift) & 1 == 1)
            }
        }
        append(0b0100, 4)
        append(bytes.count, version < 10 ? 8 : 16)
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, dataLength * 8 - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data: [UInt8] = []
        data.reserveCapacity(dataLength)
        for start in stride(from: 0, to: bits.count, by: 8) {
            var byte: UInt8 = 0
            for bit in bits[start..<start + 8] { byte = byte << 1 | (bit ? 1 : 0) }
            data.append(byte)
        }
        var pad: UInt8 = 0xEC
        while data.count < dataLength {
            data.append(pad)
            pad ^= 0xEC ^ 0x11
        }

        // Split into blocks; the last ones hold one more data codeword.
        let shortBlockCount = blockCount - totalCodewords % blockCount
        let shortDataLength = totalCodewords / blockCount - eccLength
        let divisor = reedSolomonDivisor(degree: eccLength)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blockCount {
            let length = shortDataLength + (index < shortBlockCount ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(reedSolomonRemainder(block, divisor: divisor))
        }

        // Interleave: data codewords column by column, then ECC.
        var result: [UInt8] = []
        result.reserveCapacity(totalCodewords)
        for column in 0...shortDataLength {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<eccLength {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }

    /// Powers (exponent 0...509) and logarithms of α = 2 in GF(2^8) with
    /// the polynomial x^8 + x^4 + x^3 + x^2 + 1.
    static let galois: (exp: [UInt8], log: [Int]) = {
        var exp = [UInt8](repeating: 0, count: 510), log = [Int](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exp[power] = UInt8(truncatingIfNeeded: value)
            exp[power + 255] = exp[power]
            log[value] = power
            value <<= 1
            if value > 0xFF { value ^= 0x11D }
        }
        return (exp, log)
    }()

    /// Product in GF(2^8).
    static func gfMultiply(_ lhs: UInt8, _ rhs: UInt8) -> UInt8 {
        guard lhs != 0, rhs != 0 else { return 0 }
        return galois.exp[galois.log[Int(lhs)] + galois.log[Int(rhs)]]
    }

    /// Coefficients (highest degree first, leading 1 omitted) of
    /// (x − α^0)(x − α^1)…(x − α^(degree−1)).
    static func reedSolomonDivisor(degree: Int) -> [UInt8] {
        guard degree > 0 else { return [] }
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = gfMultiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = gfMultiply(root, 0x02)
        }
        return result
    }

    /// The error correction codewords: remainder of data × x^n ÷ divisor.
    static func reedSolomonRemainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        let (exp, log) = galois
        let degree = divisor.count
        let divisorLogs = divisor.map { $0 == 0 ? -1 : log[Int($0)] }
        var buffer = data + [UInt8](repeating: 0, count: degree)
        for index in data.indices where buffer[index] != 0 {
            let factorLog = log[Int(buffer[index])]
            for term in 0..<degree where divisorLogs[term] >= 0 {
                buffer[index + 1 + term] ^= exp[divisorLogs[term] + factorLog]
            }
        }
        return Array(buffer[data.count...])
    }
}
