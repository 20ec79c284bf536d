// How the sync benchmark measures: CPU time, heap in use, medians, and
// the `result:` lines Scripts/bench.sh reads.

import SweeperCrypto
import SweeperGame
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time of this thread, in seconds.
func cpuSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func fail(_ message: String) -> Never {
    let line = Array("sweeper-bench-sync: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func format(_ x: Double, _ digits: Int = 1) -> String {
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (x * p).rounded() / p
    return "\(r)"
}

/// `x` as a plain decimal with `digits` decimals (never an exponent).
func decimal(_ x: Double, _ digits: Int = 3) -> String {
    var p = 1
    for _ in 0..<digits { p *= 10 }
    let scaled = Int((x * Double(p)).rounded())
    let sign = scaled < 0 ? "-" : ""
    let a = abs(scaled)
    guard digits > 0 else { return "\(sign)\(a)" }
    var fraction = String(a % p)
    while fraction.count < digits { fraction = "0" + fraction }
    return "\(sign)\(a / p).\(fraction)"
}

/// One machine-readable figure for Scripts/bench.sh.
func result(_ key: String, _ value: Int) { print("result: \(key) \(value)") }
func result(_ key: String, _ value: Double) { print("result: \(key) \(decimal(value))") }

/// Bytes in use by malloc, from glibc's malloc_info() report (the C API for
/// it, mallinfo2, is in <malloc.h>, which the Glibc module leaves out):
/// every arena's system bytes minus its free chunks, plus mmapped chunks
/// (big arrays), so chunk headers count and memory malloc keeps free does
/// not. 0 where there is no malloc_info.
func heapInUse() -> Int {
    #if canImport(Glibc)
    typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return 0 }
    let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
    var buffer: UnsafeMutablePointer<CChar>?
    var length = 0
    guard let stream = open_memstream(&buffer, &length) else { return 0 }
    _ = mallocInfo(0, stream)
    fclose(stream)
    guard let buffer else { return 0 }
    let xml = String(cString: buffer)
    free(buffer)
    // The totals over all arenas follow the last </heap>.
    let totals = xml.split(separator: "</heap>").last.map(String.init) ?? xml
    func figure(_ element: String) -> Int {
        guard let line = totals.split(separator: "\n").first(where: { $0.hasPrefix(element) }),
            let at = line.firstRange(of: "size=\"")
        else { return 0 }
        return Int(line[at.upperBound...].prefix { $0.isNumber }) ?? 0
    }
    return figure("<system type=\"current\"") - figure("<total type=\"fast\"") - figure("<total type=\"rest\"")
        + figure("<total type=\"mmap\"")
    #else
    0
    #endif
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
