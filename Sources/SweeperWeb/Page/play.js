// The game shown (app.js holds the state and the connection): opening and
// showing it, the moves, the status line and the game's frame, the ending,
// new games, and the replay.
import { $, S, aim, badge, board, clear, dur, failed, forget, h, isNum, markOf, nameBadge, net, num, pct, plural, recordTime, rpc, say, sendCursor, size, sizeName, when } from "./app.js";
import { ask, closeMenu, closePanel, openPanel, setPointMode } from "./panels.js";

// ----- the game shown -----

/// In a race, whose board is shown when it is not this device's own.
export function racer() {
  const r = S.game && S.game.race;
  return r && S.me && r.shownPeer !== S.me.peer ? r.shownPeer : undefined;
}

export async function openGame(id, o) {
  o = o || {};
  const same = S.gid && id && S.gid.startsWith(id);
  if (!same) S.ready = false;
  const args = { game: id, racer: "racer" in o ? o.racer : same ? racer() : undefined };
  try {
    try {
      showGame(await rpc("show", args), o);
    } catch (e) {
      // Another player's board of today gives yours away: asked first, as the daemon says why.
      if (e.code !== "makes-practice") throw e;
      if (!await ask(e.message.charAt(0).toUpperCase() + e.message.slice(1) + ".", "Look anyway")) { say("Not opened."); return false; }
      showGame(await rpc("show", Object.assign({}, args, { look: true })), o);
    }
    return true;
  } catch (e) {
    if (!o.quiet) failed(e);
    if (same && e.code === "unknown-game") showNoGame("That game is no longer on this device.");
    return false;
  }
}

export function showGame(g, o) {
  o = o || {};
  if (!g || typeof g.width !== "number") return;
  if (S.replay) stopReplay(true);
  const old = S.game && S.game.game === g.game ? S.game : null;
  const keep = old && o.keep && (!g.race || old.race.shownPeer === g.race.shownPeer);
  S.game = g; S.gid = g.game; S.seq++;
  if (g.daily) S.dailyIds.add(g.game);
  forget();
  $("empty").hidden = true; $("frame").hidden = false;
  board.load(g.width, g.height, g.board, keep);
  board.setWrongFlags(g.wrongFlags);
  if (keep && S.peek && g.status === "playing") board.setPeek(S.peek); else S.peek = null;
  board.interactive = canMove();
  S.flags = typeof g.flags === "number" ? g.flags : board.count("F");
  S.minesLeft = g.mines - S.flags;
  if (!keep) {
    const st = g.start || { x: g.width >> 1, y: g.height >> 1 };
    S.cursor = { x: st.x, y: st.y };
    board.setCursor(st.x, st.y, false);
  }
  setClock(g.elapsedMillis / 1000, g.status === "playing");
  renderGame();
  try { history.replaceState(null, "", "/?game=" + encodeURIComponent(g.game)); } catch (_) { /* sandboxed */ }
  sendCursor();
  if (S.firstDrawMs === undefined) requestAnimationFrame(() => { if (S.firstDrawMs === undefined) S.firstDrawMs = performance.now(); });
  S.ready = true;
  const key = g.game + (g.race ? g.race.shownPeer : "");
  if (g.status === "playing") { hideEnding(); if (old && old.status !== "playing") S.endingFor = null; }
  else if (g.ending && S.endingFor !== key) { S.endingFor = key; showEnding(); }
  else if (!$("ending-layer").hidden) renderEnding();
}

export function showNoGame(text) {
  if (S.replay) stopReplay(true);
  S.game = S.gid = null; S.ready = false;
  $("frame").hidden = true; $("empty").hidden = false;
  $("empty-text").textContent = text || "No game open.";
  hideEnding();
  try { history.replaceState(null, "", "/"); } catch (_) { /* sandboxed */ }
  renderGame();
  sendCursor();
}

/// Why no move can be made now, or "" when one can.
function whyNot() {
  const g = S.game;
  if (!g) return "No game is open.";
  if (S.replay) return "This is a replay: Live goes back to the game.";
  if (g.watching) return "You watch this game: its creator chose who plays it.";
  if (racer()) return "That is another racer's board: tap your own name above to play.";
  if (g.status !== "playing") return "The game is over. The face starts a new one of this size.";
  return "";
}
export const canMove = () => !whyNot();
export function mayMove() { const w = whyNot(); if (w) say(w); return !w; }

export function onPrimary(x, y, how) {
  if (how !== "key") aim(x, y);
  if (S.pointMode) { setPointMode(false); return pointAt(x, y); }
  if (S.replay) return;
  const ch = board.char(x, y);
  if (isNum(ch)) return move("chord", x, y);
  if (S.mode === "flag" && how !== "key") return onSecondary(x, y);
  if (ch === "#" || ch === "?") return move("reveal", x, y);
  if (ch === "F" && mayMove()) say("Flagged: " + (how === "touch" ? "press and hold" : how === "key" ? "f" : "right-click") + " takes the flag off.");
}
export function onSecondary(x, y) {
  if (!S.replay && !S.pointMode && "#F?".includes(board.char(x, y) || "-")) move("flag", x, y);
}
export function canHold(x, y) {
  const ch = board.char(x, y);
  return !S.pointMode && canMove() && (ch === "#" || ch === "?" || (ch === "F" && S.mode === "reveal"));
}

export async function move(command, x, y) {
  if (!mayMove()) return;
  const gid = S.gid, seq = S.seq;
  try {
    const r = await rpc(command, { game: gid, x, y });
    // The move's event says the same; its answer shows at once unless an
    // event of the game came in between (events are the order of record).
    if (S.gid === gid && S.seq === seq && !S.replay && Array.isArray(r.changed)) { S.seq++; applyCells(r.changed, r.status, r.progress); }
  } catch (e) { failed(e); }
}
export async function pointAt(x, y) {
  if (S.gid) try { await rpc("point", { game: S.gid, x, y }); } catch (e) { failed(e); }
}

export function applyCells(cells, status, progress, minesLeft) {
  const g = S.game;
  S.flags += board.apply(cells);
  S.minesLeft = typeof minesLeft === "number" ? minesLeft : g.mines - S.flags;
  if (typeof progress === "number") g.progress = progress;
  if (status && status !== g.status) {
    g.status = status;
    board.interactive = canMove();
    if (status !== "playing") {
      setClock(seconds(), false);
      // The ending's figures and the wrong flags come with the whole game.
      openGame(g.game, { keep: true, quiet: true });
      // The players' last shares of played time cross between devices in a
      // second or two: read the ending again once they have, so that every
      // screen shows the same figures.
      const id = g.game;
      setTimeout(() => { if (S.gid === id && S.game && S.game.status !== "playing") openGame(id, { keep: true, quiet: true }); }, 2500);
    }
    renderGame();
  } else { renderCounters(); renderInfo(); }
}

// ----- the status line and the game's frame -----

export function renderGame() {
  document.body.dataset.status = S.game ? S.game.status : "none";
  renderCounters(); renderInfo(); renderPlayers(); renderRace(); renderOthers(); renderToolbar(); renderZoombar();
}
const led = (n) => (n < 0 ? "-" + String(-n).padStart(2, "0") : String(n).padStart(3, "0"));
function renderCounters() {
  const g = S.game, ml = $("mines-left"), txt = g ? led(S.minesLeft) : "---";
  setText(ml, txt);
  setAttr(ml, "aria-label", g ? S.minesLeft + " mines left" : "No game");
  setFace(false);
  renderClock();
}
export function setFace(pressing) {
  const st = S.game && S.game.status;
  const face = $("face"), look = st === "won" ? "cool" : st === "lost" ? "dead" : pressing && canMove() ? "oh" : "smile";
  if (face.dataset.face !== look) face.dataset.face = look;
}
// A remote move comes many times a second on a busy board: the page's
// frame is written only where it changed, so that a move costs the page
// the cells it changed and not a new status line.
function setAttr(el, name, value) { if (el.getAttribute(name) !== value) el.setAttribute(name, value); }
function setText(el, text) { if (el.textContent !== text) el.textContent = text; }

/// The clock ticks while the game is played and the page is seen.
const seconds = () => S.clock.base + (S.clock.running ? (performance.now() - S.clock.at) / 1000 : 0);
function setClock(sec, running) {
  S.clock = { base: Number(sec) || 0, at: performance.now(), running: !!running && document.visibilityState !== "hidden" };
  renderClock();
}
function renderClock() {
  if (S.replay) return;
  const el = $("clock"), sec = Math.floor(seconds()), txt = S.game ? (sec < 1000 ? String(sec).padStart(3, "0") : dur(sec)) : "---";
  if (el.textContent !== txt) { el.textContent = txt; el.setAttribute("aria-label", S.game ? "Time " + dur(sec) : "No game"); }
}
setInterval(renderClock, 250);
document.addEventListener("visibilitychange", () => {
  const seen = document.visibilityState !== "hidden", g = S.game;
  setClock(seconds(), seen && g && g.status === "playing");
  if (seen && g && net.up && !S.replay) openGame(g.game, { keep: true, quiet: true });
  sendCursor();
});

let shownBadges = null;
export function renderInfo() {
  const g = S.game;
  setText($("gametitle"), g ? (g.daily ? "Board of the day" : sizeName(g.width, g.height, g.mines)) + " " + size(g.width, g.height, g.mines) + " · " + pct(g.progress) : "Sweeper");
  if (!g) { shownBadges = null; clear($("badges")); return; }
  const tags = [
    [g.race, "Race", "race"], [g.daily || S.dailyIds.has(g.game), "Daily", "daily"], [g.noGuess, "No-guess", "", "Every move can be worked out"],
    [g.seeded, "Practice", "", "Its seed was chosen: never a record"], [g.assisted, "Assisted", "warn", "Someone asked for a hint or looked at the mines"],
    [g.privateGame, "Private", "", "Only its players read it"], [g.watching, "Watching", "warn", "Its creator chose the players: you watch"],
    [g.archived, "Archived"], [g.onlyHere, "Only here", "", "Held from before this device joined its family: never sent to the others"],
    [g.questionMarks, "?", "", "Marks cycle through question marks"],
    [g.equivocatedByNames, "⚠ " + (g.equivocatedByNames || []).join(", "), "warn", "signed two different moves at one place: devices may show different boards"],
    [g.overQuotaByNames, "⚠ " + (g.overQuotaByNames || []).join(", "), "warn", "moves past what a game can take were refused"],
  ];
  const shown = tags.filter((t) => t[0]), key = shown.map((t) => t.slice(1).join("\u0001")).join("\u0002");
  if (key === shownBadges) return;
  shownBadges = key;
  const badges = clear($("badges"));
  for (const [, text, cls, title] of shown) badges.append(h("span", { class: "tag " + (cls || ""), text, title }));
}

export function renderPlayers() {
  const box = clear($("players")), g = S.game, seen = new Set();
  if (!g || g.race) return;
  const chip = (peer, name, extra) => {
    if (seen.has(peer)) return;
    seen.add(peer);
    const p = S.presence.get(peer), here = p && p.game === g.game;
    box.append(h("span", { class: "chip" + (here ? " here" : ""), title: name + (S.me && peer === S.me.peer ? " (you)" : "") + (here ? " · looking at this game" : "") },
      badge(peer, name), h("span", { class: "chip-name", text: name }), extra !== undefined ? h("small", { text: String(extra) }) : null));
  };
  for (const p of g.players || []) chip(p.peer, p.name, p.score);
  for (const p of S.presence.values()) if (p.game === g.game) chip(p.peer, p.name);
}

export function renderOthers() {
  const g = S.game, list = [];
  if (g && !S.replay && S.showOthers) for (const p of S.presence.values()) {
    if (p.own || (S.me && p.peer === S.me.peer) || p.game !== g.game || typeof p.x !== "number") continue;
    // In a race each racer's cursor is on a board of their own: only the shown board's racer's is drawn.
    if (g.race && g.race.shownPeer !== p.peer) continue;
    const m = markOf(p.peer, p.name);
    list.push({ x: p.x, y: p.y, colour: m.colour, fg: m.fg, letter: m.letter });
  }
  board.setOthers(list);
}

const standing = (x) => x.status === "won" ? "cleared" + (typeof x.playedMillis === "number" ? " in " + dur(x.playedMillis / 1000) : "") : x.status === "lost" ? (x.gaveUp ? "gave up" : "hit a mine") : x.didNotStart ? "did not start" : pct(x.progress);
export function bar(p) { const b = h("span", { class: "bar-track" }, h("span", { class: "bar-fill" })); b.firstChild.style.width = Math.round((p || 0) * 100) + "%"; return b; }
export function renderRace() {
  const g = S.game, r = g && g.race;
  $("race").hidden = !r || !!S.replay;
  if (!r) return;
  clear($("race-head")).append(h("b", { text: "Race" }), r.winnerName ? " · " + r.winnerName + " won" + (r.over ? " · over" : "") : r.over ? " · over" : " · first to clear the board wins");
  clear($("racers")).append(...(r.racers || []).map((x) => {
    const mine = S.me && x.peer === S.me.peer, at = S.presence.get(x.peer);
    // Where another racer's cursor is, on their own board.
    const where = !mine && x.status === "playing" && x.peer !== r.shownPeer && at && at.game === g.game && typeof at.x === "number" ? " · at " + at.x + "," + at.y : "";
    return h("button", { type: "button", class: "racer " + x.status, "aria-pressed": String(x.peer === r.shownPeer), title: "Show " + x.name + "'s board", onclick: () => openGame(g.game, { racer: mine ? undefined : x.peer }) },
      badge(x.peer, x.name), h("span", { class: "racer-name", text: x.name + (mine ? " (you)" : "") }), bar(x.progress), h("small", { text: standing(x) + where }));
  }));
}

export function renderToolbar() {
  const g = S.game;
  $("mode-reveal").setAttribute("aria-checked", String(S.mode === "reveal"));
  $("mode-flag").setAttribute("aria-checked", String(S.mode === "flag"));
  $("btn-hint").disabled = !canMove();
  $("btn-point").disabled = !g || !!S.replay;
  $("btn-more").disabled = !g;
  document.body.classList.toggle("flag-mode", S.mode === "flag");
}
export function renderZoombar() {
  // Never over a board that fits (its canvas is its cells): only when
  // zoomed, or beside a board of small cells with room to spare.
  const f = $("frame").getBoundingClientRect(), st = $("stage").getBoundingClientRect();
  $("zoombar").hidden = !S.game || !!S.replay || !(board.scroll || (board.base < 30 && st.right - f.right > 60));
  $("zoom-out").disabled = $("zoom-fit").disabled = board.zoom <= 1.001;
  $("zoom-in").disabled = board.zoom >= (board.maxZoom || 1) - 0.001;
}

// ----- the ending -----

export const dl = (rows) => h("dl", { class: "figures" }, rows.map(([k, v]) => [h("dt", { text: k }), h("dd", { text: String(v === undefined ? "–" : v) })]));
function renderEnding() {
  const g = S.game, box = clear($("ending")), e = g && g.ending;
  if (!e) return;
  const won = e.status === "won", me = g.race && (g.race.racers || []).find((x) => x.peer === g.race.shownPeer);
  box.append(h("h2", { id: "ending-title", class: won ? "won" : "lost", text: won ? "Cleared! Well done." : me && me.gaveUp ? me.name + " gave up." : "Boom: a mine went off." }),
    dl([["Time", recordTime(e)], ["3BV", (e.solvedThreeBV !== undefined && e.solvedThreeBV !== e.threeBV ? e.solvedThreeBV + " of " : "") + e.threeBV],
      ["3BV/s", num(e.threeBVPerSecond, 2)], ["Clicks", e.clicks], ["Efficiency", typeof e.efficiency === "number" ? Math.round(e.efficiency * 100) + "%" : "–"]]));
  if (e.trippedByName) box.append(h("p", { class: "note lost", text: e.trippedByName + " tripped the mine" + (e.trippedCell ? " at " + e.trippedCell.x + "," + e.trippedCell.y : "") + (typeof e.trippedAfterMillis === "number" && Math.floor(e.trippedAfterMillis / 1000) !== Math.floor(e.playedMillis / 1000) ? " after " + dur(e.trippedAfterMillis / 1000) : "") + "." }));
  if (e.winThatDidNotStandName) box.append(h("p", { class: "note", text: e.winThatDidNotStandName + "'s win on a device apart did not stand: the mine came first." }));
  if ((e.parts || []).length) {
    box.append(h("div", { class: "table-wrap" }, h("table", { class: "parts" },
      h("thead", null, h("tr", null, ["Player", "Cells", "3BV", "Flags", "Clicks", "Hints"].map((x) => h("th", { text: x, scope: "col", title: x === "Flags" ? "right / wrong" : null })))),
      h("tbody", null, e.parts.map((p) => h("tr", null,
        h("th", { scope: "row" }, nameBadge(p.name), " " + p.name, p.peekedAt ? h("small", { text: " (looked)", title: "looked at the mines " + when(p.peekedAt) }) : null),
        [p.cellsOpened, p.threeBV, p.flagsRight + "/" + p.flagsWrong, p.clicks, p.hintCount || 0].map((v) => h("td", { text: String(v) }))))))));
  }
  if (e.record) box.append(h("p", { class: "note record", text: "★ " + e.record }));
  box.append(h("p", { class: "note", text: e.ranked ? "Ranked: it counts for the scores." : "Not ranked" + (e.notRanked ? ": " + e.notRanked : "") + "." }));
  if (g.race) box.append(raceTable(g.race));
  if (g.daily) box.append(dailyTable(g.daily, true));
}
export function showEnding(asked) {
  if (!S.game || !S.game.ending) return asked && say("The game is not over yet.");
  renderEnding();
  $("ending-layer").hidden = false;
}
export const hideEnding = () => { $("ending-layer").hidden = true; };

function raceTable(r) {
  return h("div", { class: "subtable" }, h("h3", { text: "Race" + (r.winnerName ? ": " + r.winnerName + " won" : "") }),
    h("ol", { class: "standings" }, (r.racers || []).map((x) => h("li", null, badge(x.peer, x.name), " " + x.name + " — " + (x.status === "playing" ? "playing, " : "") + standing(x)))));
}
export function dailyTable(d, compact) {
  const res = d.results || [];
  return h("div", { class: "subtable" }, h("h3", { text: "Board of the day" + (d.date ? " · " + d.date : "") }),
    res.length ? h("ol", { class: "standings" }, res.map((x) => h("li", null, badge(x.peer, x.name),
      " " + x.name + " — " + (x.status === "won" ? recordTime(x) + (typeof x.threeBVPerSecond === "number" ? " · " + num(x.threeBVPerSecond, 2) + " 3BV/s" : "") : x.status === "lost" ? "hit a mine" : "playing, " + pct(x.progress)) + (x.assisted ? " · assisted" : ""),
      !compact && x.game ? [" ", h("button", { type: "button", class: "link", text: "View", onclick: () => { closePanel(); openGame(x.game); } })] : null)))
      : h("p", { class: "note", text: "Nobody has played today's board yet." }),
    (d.streaks || []).length ? h("p", { class: "note", text: "Streaks: " + d.streaks.map((s) => s.name + " " + plural(s.days, "day")).join(" · ") }) : null);
}
export function noteDaily(d) { for (const r of (d && d.results) || []) if (r.game) S.dailyIds.add(r.game); }

// ----- new games -----

export async function newGame(args) {
  try { const g = await rpc("new", args); closePanel(); showGame(g); return null; } catch (e) { failed(e); return e; }
}
export function sameSize() {
  const g = S.game;
  if (!g) return openPanel("new");
  newGame({ width: g.width, height: g.height, mines: g.mines, noGuess: !!g.noGuess, questionMarks: !!g.questionMarks });
}

// ----- replay: the opening, then each move -----

export async function startReplay() {
  const g = S.game;
  if (!g) return;
  let r;
  try { r = await rpc("replay", { game: g.game, racer: g.race ? g.race.shownPeer : undefined }); } catch (e) { return failed(e); }
  if (!Array.isArray(r.moves)) return;
  closePanel(); hideEnding(); closeMenu();
  S.replay = { r, pos: 0, playing: false, speed: Number($("rp-speed").value) || 1 };
  board.interactive = board.showCursor = false;
  $("replaybar").hidden = false; $("toolbar").hidden = true;
  $("rp-pos").max = String(r.moves.length);
  renderGame();
  replayTo(0);
  replayPlay(true);
  sendCursor();
}
function replayTo(pos) {
  const R = S.replay;
  if (!R) return;
  const r = R.r, moves = r.moves;
  pos = Math.max(0, Math.min(moves.length, pos | 0));
  if (pos === R.pos + 1 && R.drawn) board.apply(moves[pos - 1].changed);
  else {
    board.load(r.width, r.height, r.opening, true);
    board.clearFlashes();
    for (let i = 0; i < pos; i++) board.apply(moves[i].changed);
  }
  R.pos = pos; R.drawn = true;
  const m = moves[pos - 1], hasCell = m && typeof m.x === "number";
  if (hasCell) {
    const mk = markOf(m.authorPeer, m.name);
    board.setMark({ x: m.x, y: m.y, colour: mk.colour, fg: mk.fg, letter: mk.letter });
    board.flashMove(m.changed, mk.colour);
    board.reveal(m.x, m.y);
  } else board.setMark(null);
  const st = m ? m.status : "playing";
  $("face").dataset.face = st === "won" ? "cool" : st === "lost" ? "dead" : "smile";
  $("mines-left").textContent = led(r.mines - board.count("F"));
  $("clock").textContent = m ? (m.atMillis < 1000000 ? String(Math.floor(m.atMillis / 1000)).padStart(3, "0") : dur(m.atMillis / 1000)) : "000";
  $("replay-line").textContent = ["Move " + pos + "/" + moves.length].concat(m
    ? [dur(m.atMillis / 1000), m.name + " " + m.kind + (hasCell ? " at " + m.x + "," + m.y : "") + (m.changed && m.changed.length > 1 ? " (" + m.changed.length + " cells)" : "")]
    : ["the opening"], R.speed + "×").join(" · ");
  $("rp-pos").value = String(pos);
}
export function replayPlay(on) {
  const R = S.replay;
  if (!R) return;
  if (on && R.pos >= R.r.moves.length) replayTo(0);
  R.playing = on;
  clearTimeout(R.timer);
  $("rp-play").querySelector("use").setAttribute("href", on ? "#i-pause" : "#i-play");
  $("rp-play").setAttribute("aria-label", on ? "Pause" : "Play");
  if (!on) return;
  const tick = () => {
    if (S.replay !== R || !R.playing) return;
    if (R.pos >= R.r.moves.length) { replayPlay(false); say("End of the replay."); return; }
    replayTo(R.pos + 1);
    R.timer = setTimeout(tick, 1000 / R.speed);
  };
  R.timer = setTimeout(tick, 1000 / R.speed);
}
export function replayGo(pos) { if (S.replay) { replayPlay(false); replayTo(pos); } }
export function replaySpeed(f) {
  const R = S.replay;
  if (!R) return;
  R.speed = Math.max(1, Math.min(16, f ? R.speed * f : Number($("rp-speed").value) || 1));
  $("rp-speed").value = String(R.speed);
  replayTo(R.pos);
  if (R.playing) replayPlay(true);
}
export function stopReplay(silent) {
  const R = S.replay;
  if (!R) return;
  clearTimeout(R.timer);
  S.replay = null;
  board.setMark(null);
  $("replaybar").hidden = true; $("toolbar").hidden = false;
  if (!silent && S.gid) openGame(S.gid, { keep: true });
}
