// The page's wiring, the text viewer's keys, the read-only state for tests
// (window.sweeper), and the start: no module imports this one, so it runs
// last, once the others are in place.
import { $, S, all, board, connect, on, say, sendCursor } from "./app.js";
import { hideEnding, mayMove, onPrimary, onSecondary, pointAt, renderGame, replayGo, replayPlay, replaySpeed, sameSize, startReplay, stopReplay } from "./play.js";
import { askHint, closeMenu, closePanel, loadGames, loadScores, openMenu, openPanel, resign, setMode, setPointMode, togglePeek } from "./panels.js";

// ----- wiring -----

for (const b of all("[data-open]")) b.addEventListener("click", () => (S.panel === b.dataset.open ? closePanel() : openPanel(b.dataset.open)));
for (const c of all(".sheet .close")) c.addEventListener("click", closePanel);
for (const t of all("[data-filter]")) t.addEventListener("click", () => { S.filter = t.dataset.filter; loadGames(); });
on("scrim", closePanel);
on("score-player", loadScores, "change");
on("face", () => { if (!S.replay) sameSize(); });
on("mode-reveal", () => setMode("reveal"));
on("mode-flag", () => setMode("flag"));
on("btn-point", () => setPointMode(!S.pointMode));
on("btn-hint", askHint);
on("btn-more", () => ($("menu").hidden ? openMenu() : closeMenu()));
document.addEventListener("pointerdown", (e) => { if (!$("menu").hidden && !e.target.closest("#menu, #btn-more")) closeMenu(); });
on("zoom-in", () => board.zoomBy(1.5));
on("zoom-out", () => board.zoomBy(1 / 1.5));
on("zoom-fit", () => board.fit());
on("ending-close", hideEnding);
on("ending-replay", startReplay);
on("ending-new", () => { hideEnding(); sameSize(); });
on("ending-layer", (e) => { if (e.target.id === "ending-layer") hideEnding(); });
on("rp-first", () => replayGo(0));
on("rp-last", () => S.replay && replayGo(S.replay.r.moves.length));
on("rp-prev", () => S.replay && replayGo(S.replay.pos - 1));
on("rp-next", () => S.replay && replayGo(S.replay.pos + 1));
on("rp-play", () => S.replay && replayPlay(!S.replay.playing));
on("rp-exit", () => stopReplay(false));
on("rp-speed", () => replaySpeed(0), "change");
on("rp-pos", () => replayGo(Number($("rp-pos").value)), "input");
// A mouse click leaves no focus on a button: space and enter stay the board's.
document.addEventListener("click", (e) => {
  const b = e.target.closest && e.target.closest("button");
  if (b && e.detail > 0 && !b.closest(".sheet, #confirm")) b.blur();
});

// ----- keys: the text viewer's -----

let count = null;
function go(dx, dy, abs) {
  const g = S.game;
  if (!g) return;
  const c = abs || board.cursor, x = Math.max(0, Math.min(g.width - 1, c.x + dx)), y = Math.max(0, Math.min(g.height - 1, c.y + dy));
  board.setCursor(x, y, true);
  S.cursor = { x, y };
  board.reveal(x, y);
  sendCursor();
}
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key, tag = (e.target && e.target.tagName) || "", done = () => e.preventDefault();
  if (S.confirm) {
    if (k === "Escape" || k === "n" || k === "N") { done(); S.confirm(false); } else if (k === "y" || k === "Y") { done(); S.confirm(true); }
    return;
  }
  if (!$("menu").hidden) { if (k === "Escape") { done(); closeMenu(); $("btn-more").focus(); } return; }
  if (S.panel) { if (k === "Escape") { done(); closePanel(); } return; }
  if (/^(INPUT|SELECT|TEXTAREA)$/.test(tag)) return;
  if (!$("ending-layer").hidden) {
    if (k === "r") { done(); return startReplay(); }
    if (k === "Escape" || k === "Enter" || k === " ") { done(); return hideEnding(); }
  }
  if (tag === "BUTTON" && (k === " " || k === "Enter")) return;
  const R = S.replay;
  if (R) {
    const end = R.r.moves.length;
    const act = { " ": () => replayPlay(!R.playing), ArrowRight: () => replayGo(R.pos + 1), l: () => replayGo(R.pos + 1), ArrowLeft: () => replayGo(R.pos - 1), h: () => replayGo(R.pos - 1),
      Home: () => replayGo(0), 0: () => replayGo(0), End: () => replayGo(end), $: () => replayGo(end), "+": () => replaySpeed(2), "=": () => replaySpeed(2), ArrowUp: () => replaySpeed(2),
      "-": () => replaySpeed(0.5), ArrowDown: () => replaySpeed(0.5), Escape: () => stopReplay(false), "?": () => openPanel("help") }[k];
    if (act) { done(); act(); } else if (k.length === 1) say("Replay: space plays or pauses, ←/→ step, +/− speed, Home/End, esc the game now.");
    return;
  }
  if (/^[0-9]$/.test(k) && (k !== "0" || count !== null)) { count = Math.min(999, (count || 0) * 10 + Number(k)); return done(); }
  const n = count || 1, c = board.cursor, g = S.game;
  count = null;
  const act = {
    ArrowLeft: () => go(-n, 0), h: () => go(-n, 0), ArrowRight: () => go(n, 0), l: () => go(n, 0),
    ArrowUp: () => go(0, -n), k: () => go(0, -n), ArrowDown: () => go(0, n), j: () => go(0, n),
    J: () => go(0, 5 * n), K: () => go(0, -5 * n), L: () => go(5 * n, 0), Y: () => go(-5 * n, 0),
    Home: () => go(-c.x, 0), 0: () => go(-c.x, 0), End: () => go(1e6, 0), $: () => go(1e6, 0), PageUp: () => go(0, -10 * n), PageDown: () => go(0, 10 * n),
    " ": () => { go(0, 0); onPrimary(c.x, c.y, "key"); }, Enter: () => { go(0, 0); onPrimary(c.x, c.y, "key"); },
    f: () => { go(0, 0); if (mayMove()) onSecondary(c.x, c.y); },
    c: togglePeek,
    H: askHint, "'": () => { go(0, 0); pointAt(c.x, c.y); }, G: resign, r: startReplay,
    g: () => openPanel("games"), p: () => openPanel("peers"), n: () => openPanel("new"), s: () => openPanel("scores"), d: () => openPanel("daily"), "?": () => openPanel("help"),
    "+": () => board.zoomBy(1.25), "=": () => board.zoomBy(1.25), "-": () => board.zoomBy(0.8), Escape: () => { setPointMode(false); hideEnding(); },
  }[k];
  if (act && (g || "gpnsd?".includes(k))) { done(); act(); }
});

// ----- read-only state, for tests -----

const api = {};
for (const [k, f] of Object.entries({
  me: () => (S.me ? S.me.peer : null), game: () => S.gid, width: () => (S.game ? S.game.width : 0), height: () => (S.game ? S.game.height : 0), status: () => (S.game ? S.game.status : null),
  board: () => (S.game ? board.rows().slice() : []), minesLeft: () => (S.game ? S.minesLeft : null), ready: () => !!(S.ready && S.game), eventsApplied: () => S.eventsApplied,
  // For benchmarks: when the last tap or click was taken (ms since 1970), when the frame showing the last
  // remote move began, what that move cost in script (ms), and when the first game was first drawn
  // (ms since the page was asked for).
  lastInputAt: () => S.lastInputAt || null, lastDrawAt: () => S.lastDrawAt || null,
  lastEventScriptMs: () => (S.lastEventScriptMs === undefined ? null : S.lastEventScriptMs), firstDrawMs: () => (S.firstDrawMs === undefined ? null : S.firstDrawMs),
})) Object.defineProperty(api, k, { get: f, enumerable: true });
Object.defineProperty(window, "sweeper", { value: Object.freeze(api), enumerable: true });

addEventListener("error", (e) => e.message && say("Something went wrong: " + e.message, "error"));
addEventListener("unhandledrejection", (e) => { e.preventDefault(); say((e.reason && e.reason.message) || "A request failed.", "error"); });

renderGame();
connect();
