import Foundation
import Testing

@testable import SweeperQR

// The vectors of Fixtures/vectors.json: texts and random bytes encoded by
// segno 1.6.6 at every level, with its matrices (hashed, FNV-1a 64 of the
// rows as ASCII '0'/'1') and its penalty of every mask.

/// A text encoded by segno, with its full matrix in the mask the standard's
/// penalty picks (`specMask`), and hashes and penalties for all eight masks.
struct MainVector: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    let correction: QRCode.Correction
    let version: Int
    /// The mask segno chose by itself.
    let segnoMask: Int
    /// The mask with the lowest penalty of the complete symbol.
    let specMask: Int
    /// segno's penalty score of the complete symbol for masks 0...7.
    let penalties: [Int]
    /// FNV-1a 64 hashes of segno's matrix for masks 0...7.
    let hashes: [UInt64]
    /// segno's matrix in `specMask`, rows of 0/1 joined by newlines.
    let rows: String
    var testDescription: String { "\(name) v\(version)" }
}

/// A full-capacity random-byte vector for each version and level.
struct SweepVector: Sendable, CustomTestStringConvertible {
    let correction: QRCode.Correction
    let version: Int
    let length: Int
    let seed: UInt32
    let segnoMask: Int
    let specMask: Int
    let penalties: [Int]
    let specHash: UInt64
    let segnoHash: UInt64
    var testDescription: String { "v\(version)-\(correction) \(length) bytes" }

    var bytes: [UInt8] {
        var state = seed
        return (0..<length).map { _ in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
    }
}

/// The file as written by the vector script.
private struct VectorFile: Decodable {
    struct Main: Decodable {
        var name, text, correction: String
        var version, segnoMask, specMask: Int
        var penalties: [Int]
        var hashes: [String]
        var rows: [String]
    }
    struct Sweep: Decodable {
        var correction, seed, specHash, segnoHash: String
        var version, length, segnoMask, specMask: Int
        var penalties: [Int]
    }
    var mainVectors: [Main]
    var sweepVectors: [Sweep]
    var formatInfo: [[Int]]
    var versionInfo: [Int]
}

private let vectorFile: VectorFile = {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/vectors.json")
    do {
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    } catch {
        return VectorFile(mainVectors: [], sweepVectors: [], formatInfo: [], versionInfo: [])
    }
}()

private func level(_ name: String) -> QRCode.Correction {
    switch name {
    case "low": .low
    case "quartile": .quartile
    case "high": .high
    default: .medium
    }
}

private func hex(_ text: String) -> UInt64 { UInt64(text.dropFirst(2), radix: 16) ?? 0 }

let mainVectors: [MainVector] = vectorFile.mainVectors.map {
    MainVector(
        name: $0.name, text: $0.text, correction: level($0.correction), version: $0.version, segnoMask: $0.segnoMask,
        specMask: $0.specMask, penalties: $0.penalties, hashes: $0.hashes.map(hex), rows: $0.rows.joined(separator: "\n"))
}

let sweepVectors: [SweepVector] = vectorFile.sweepVectors.map {
    SweepVector(
        correction: level($0.correction), version: $0.version, length: $0.length, seed: UInt32(hex($0.seed)), segnoMask: $0.segnoMask,
        specMask: $0.specMask, penalties: $0.penalties, specHash: hex($0.specHash), segnoHash: hex($0.segnoHash))
}

/// segno's format information table, rows L, M, Q, H, columns mask 0...7.
let segnoFormatInfo: [[Int]] = vectorFile.formatInfo
/// segno's version information table for versions 7...40.
let segnoVersionInfo: [Int] = vectorFile.versionInfo
