// The module grid of a QR Code symbol: function patterns, data placement,
// masking and the penalty score.

/// A square grid of modules under construction, with the function modules
/// (finder, separator, timing, alignment, format, version) marked.
struct Grid: Sendable {
    let size: Int
    var dark: [Bool]
    var isFunction: [Bool]

    /// A finished symbol's modules, for scoring.
    init(size: Int, dark: [Bool]) {
        self.size = size
        self.dark = dark
        self.isFunction = [Bool](repeating: false, count: dark.count)
    }

    /// A blank symbol of `version` with all function patterns drawn and
    /// the format information area reserved (drawn light).
    init(version: Int) {
        size = version * 4 + 17
        dark = [Bool](repeating: false, count: size * size)
        isFunction = dark
        for index in 0..<size {
            setFunction(6, index, index % 2 == 0)
            setFunction(index, 6, index % 2 == 0)
        }
        drawFinder(3, 3)
        drawFinder(size - 4, 3)
        drawFinder(3, size - 4)
        let positions = QRCode.alignmentPositions(version: version)
        let last = positions.count - 1
        for (i, x) in positions.enumerated() {
            for (j, y) in positions.enumerated() {
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { setFunction(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormat(bits: 0)
        if version >= 7 {
            let bits = QRCode.versionBits(version: version)
            for index in 0..<18 {
                let bit = (bits >> index) & 1 == 1
                let long = size - 11 + index % 3, short = index / 3
                setFunction(long, short, bit)
                setFunction(short, long, bit)
            }
        }
    }

    mutating func setFunction(_ x: Int, _ y: Int, _ isDark: Bool) {
        dark[y * size + x] = isDark
        isFunction[y * size + x] = true
    }

    /// A finder pattern centred on (x, y), with its light separator.
    mutating func drawFinder(_ x: Int, _ y: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let xx = x + dx, yy = y + dy
                guard xx >= 0, xx < size, yy >= 0, yy < size else { continue }
                let distance = max(abs(dx), abs(dy))
                setFunction(xx, yy, distance != 2 && distance != 4)
            }
        }
    }

    mutating func drawFormat(correction: QRCode.Correction, mask: Int) {
        drawFormat(bits: QRCode.formatBits(correction: correction, mask: mask))
    }

    /// Both copies of the 15 format bits (bit 0 is the least significant),
    /// and the dark module.
    mutating func drawFormat(bits: Int) {
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { setFunction(8, index, bit(index)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for index in 9..<15 { setFunction(14 - index, 8, bit(index)) }
        for index in 0..<8 { setFunction(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { setFunction(8, size - 15 + index, bit(index)) }
        setFunction(8, size - 8, true)
    }

    /// Places the codeword bits in the two-module columns, right to left,
    /// alternately upwards and downwards, skipping function modules. The
    /// remainder bits stay light.
    mutating func placeData(_ codewords: [UInt8]) {
        let bitCount = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !isFunction[y * size + x] && bitIndex < bitCount {
                    let byte = codewords[bitIndex >> 3]
                    dark[y * size + x] = (byte >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                    bitIndex += 1
                }
            }
            right -= 2
        }
    }

    /// Inverts the non-function modules where mask pattern `mask` is true.
    mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] {
                let invert: Bool
                switch mask {
                case 0: invert = (x + y) % 2 == 0
                case 1: invert = y % 2 == 0
                case 2: invert = x % 3 == 0
                case 3: invert = (x + y) % 3 == 0
                case 4: invert = (x / 3 + y / 2) % 2 == 0
                case 5: invert = x * y % 2 + x * y % 3 == 0
                case 6: invert = (x * y % 2 + x * y % 3) % 2 == 0
                case 7: invert = ((x + y) % 2 + x * y % 3) % 2 == 0
                default: invert = false
                }
                if invert { dark[y * size + x].toggle() }
            }
        }
    }

    /// Penalty score of ISO/IEC 18004:2015 Table 11 over the whole grid:
    /// N1 runs of five or more, N2 2×2 blocks, N3 finder-like 1:1:3:1:1
    /// patterns with four light modules before or after (outside the
    /// symbol counts as light), N4 deviation of the dark share from 50%.
    func penalty() -> Int {
        var score = 0
        for horizontal in [true, false] {
            for a in 0..<size {
                var run = 0, previous = false, window = 0
                // Four light modules beyond each end (zeros in `window`).
                for b in 0..<(size + 4) {
                    let module = b < size && (horizontal ? dark[a * size + b] : dark[b * size + a])
                    if b < size {
                        if b > 0, module == previous {
                            run += 1
                        } else {
                            if run >= 5 { score += run - 2 }
                            run = 1
                        }
                        previous = module
                    }
                    // Last 15 modules: 4 before, 1011101, 4 after.
                    window = (window << 1 | (module ? 1 : 0)) & 0x7FFF
                    if b >= 10, (window >> 4) & 0x7F == 0b1011101, window >> 11 == 0 || window & 0xF == 0 {
                        score += 40
                    }
                }
                if run >= 5 { score += run - 2 }
            }
        }
        var darkCount = 0
        for y in 0..<size {
            for x in 0..<size {
                let color = dark[y * size + x]
                if color { darkCount += 1 }
                if x + 1 < size, y + 1 < size, dark[y * size + x + 1] == color,
                    dark[(y + 1) * size + x] == color, dark[(y + 1) * size + x + 1] == color
                {
                    score += 3
                }
            }
        }
        let total = size * size
        return score + abs(darkCount * 20 - total * 10) / total * 10
    }
}
