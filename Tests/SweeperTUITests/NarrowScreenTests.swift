import Foundation
import SweeperControl
import SweeperConventions
import Testing

@testable import SweeperTUI

/// At 80 columns (or fewer) the lines under the board lose their end, cut
/// after a whole word with an ellipsis, never mid-word.
@Suite struct NarrowScreenTests {
    func peer(_ name: String, _ sync: PeerInfo.Sync) -> PeerInfo {
        PeerInfo(peer: name, name: name, addresses: [], state: .connected, via: [], lastSeenAt: nil, roundTripMillis: nil, sync: sync, otherCircle: false)
    }

    @Test func aLongPeersLineEndsWithAnEllipsisAfterAWholeWord() {
        var v = viewer(
            gameView(
                ["##", "##"], mines: 1,
                players: [
                    PlayerScore(peer: "a", name: "Grandmother", score: 23), PlayerScore(peer: "b", name: "Sam", score: 12),
                    PlayerScore(peer: "c", name: "Max", score: 8),
                ]))
        v.peers = [peer("grandmothers-tablet", .init(theyLack: 4, weLack: 0)), peer("kitchen", .init(theyLack: 0, weLack: 0))]
        for renderer in [ViewerRenderer(glyphs: .ascii, color: false), ViewerRenderer(glyphs: .unicode, color: false)] {
            let screen = renderer.render(&v, width: 80, height: 12)
            let line = screen.line(10).trimmingTrailingSpaces
            let ellipsis = renderer.glyphs == .ascii ? "..." : "…"
            // It would be longer than the screen: cut, with the ellipsis after a space.
            #expect(line.hasPrefix(" Players: Grandmother 23, Sam 12, Max 8") && line.hasSuffix(" " + ellipsis), "\(line)")
            let words = line.dropLast(ellipsis.count).split(separator: " ")
            // Every word left is a whole word of the full line: none is cut.
            let whole = " Players: Grandmother 23, Sam 12, Max 8 | Peers: grandmothers-tablet catching up, kitchen in sync"
            let wholeWords = Set(whole.replacing("|", with: renderer.glyphs.separator.trimmingCharacters(in: .whitespaces)).split(separator: " "))
            for w in words { #expect(wholeWords.contains(w), "cut word \(w) in \(line)") }
            #expect(line.count <= 80)
        }
    }

    @Test func theTitleIsCutAfterAWholeWord() {
        var v = viewer(gameView(["#F1.", "#?2.", "#13."], mines: 3))
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 44, height: 10)
        #expect(screen.line(0).trimmingTrailingSpaces == " Sweeper | game abcdef12 | 4x3, 3 mines ...")
        // A line that fits is left alone.
        #expect(screen.line(8).trimmingTrailingSpaces == " Players: ann 3")
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
