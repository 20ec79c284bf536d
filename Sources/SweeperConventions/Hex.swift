/// Lower-case hexadecimal text of bytes: how ids, digests, circle tags and
/// stored keys are written everywhere, with the one decoder that reads them.
public enum Hex {
    /// `bytes` as lower-case hex, two digits a byte. Written as ASCII straight
    /// into the string's storage: ids are shown in every event a move sends.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var i = 0
            for b in bytes {
                out[i] = digit(b >> 4)
                out[i + 1] = digit(b & 15)
                i += 2
            }
            return i
        }
    }

    /// The bytes of hex text (either case); nil when its length is odd or
    /// it holds anything but hex digits.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The lower-case ASCII hex digit of `v` (0–15).
    @inline(__always) private static func digit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x57 + v }

    /// The value of one ASCII hex digit.
    @inline(__always) private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
