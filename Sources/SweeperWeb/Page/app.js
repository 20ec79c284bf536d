// Sweeper's web board: the page around the board (board.js). It speaks the
// daemon's control protocol over two WebSockets: one for requests and their
// answers, one subscribed to every game's events (it carries this viewer's
// presence too).
//
// The page is six ES modules (strict, deferred): board.js and board-input.js
// the board; this one the helpers, the state, the connection and the events;
// play.js the game shown; panels.js the panels and the menu; keys.js the
// wiring, the keys and the start. app.js, play.js and panels.js import one
// another, so which of them runs first is not fixed: at load their code only
// defines things and wires their own elements, using no other module's
// consts, only its function declarations (hoisted: ready before any module
// runs). keys.js, which no module imports, runs last.
import { Board } from "./board-input.js";
import { applyCells, canHold, canMove, move, noteDaily, onPrimary, onSecondary, openGame, renderGame, renderOthers, renderPlayers, renderRace, renderZoombar, setFace, showNoGame } from "./play.js";
import { openPanel, refreshPanel, renderGames, renderGamesSoon, renderPeerCount, renderPeers, setPeers } from "./panels.js";

// The DOM helpers are function declarations: other modules call them as
// they load (see above).
export function $(id) { return document.getElementById(id); }
/// h("li", {class: "x", text: "…", onclick: f}, child, …): an element.
export function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const k in props || {}) {
    const v = props[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "disabled" || k === "checked" || k === "value") e[k] = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const k of kids.flat(4)) if (k !== null && k !== undefined && k !== false) e.append(k.nodeType ? k : String(k));
  return e;
}
export function clear(e) { e.replaceChildren(); return e; }
export function all(sel) { return document.querySelectorAll(sel); }
export function on(id, f, ev) { $(id).addEventListener(ev || "click", f); }

// ----- words and numbers -----

const PRESETS = { "9x9x10": "Beginner", "16x16x40": "Intermediate", "30x16x99": "Expert" };
export const sizeName = (w, h, m) => PRESETS[w + "x" + h + "x" + m] || "Custom";
export const size = (w, h, m) => w + "×" + h + (m !== undefined ? " · " + plural(m, "mine") : "");
export const pct = (p) => Math.floor((Number(p) || 0) * 100) + "%";
export const num = (v, d) => (typeof v === "number" && isFinite(v) ? v.toFixed(d) : "–");
// A peer id by its first group (as the daemon names a device), a game id by 8 characters.
export const short = (id) => { const s = String(id || ""); const i = s.indexOf("-"); return i > 0 ? s.slice(0, i) : s.slice(0, 8); };
export const plural = (n, w) => n + " " + w + (n === 1 ? "" : "s");
export function dur(sec) {
  sec = Math.max(0, Math.floor(Number(sec) || 0));
  const hh = Math.floor(sec / 3600), mm = Math.floor(sec / 60) % 60, ss = String(sec % 60).padStart(2, "0");
  return hh ? hh + ":" + String(mm).padStart(2, "0") + ":" + ss : mm + ":" + ss;
}
// A record's time: to the hundredth when the daemon gives its milliseconds, so a win in under a second keeps its time.
export const recordTime = (r) => typeof r.playedMillis === "number" ? dur(r.playedMillis / 1000) + "." + String(Math.floor((r.playedMillis % 1000) / 10)).padStart(2, "0") : "";
export function when(t) {
  if (!t) return "";
  const d = new Date(t), now = new Date(), y = new Date(now - 864e5);
  const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (d.toDateString() === now.toDateString()) return "today " + hm;
  if (d.toDateString() === y.toDateString()) return "yesterday " + hm;
  return d.toLocaleDateString([], { day: "numeric", month: "short" }) + " " + hm;
}
export const ago = (s) => typeof s !== "number" ? "" : s < 60 ? "just now" : s < 3600 ? Math.floor(s / 60) + " min ago" : s < 86400 ? Math.floor(s / 3600) + " h ago" : Math.floor(s / 86400) + " days ago";

// ----- players: colours and letters, handed out as the text viewer does -----

const PALETTE = [["#2f6fdf", "#fff"], ["#1f9d55", "#000"], ["#b82fb0", "#fff"], ["#12a9c2", "#000"], ["#d83a34", "#fff"], ["#e7b416", "#000"], ["#74b3ff", "#000"], ["#f58bc8", "#000"]];
const fnv = (s) => { let x = 2166136261; for (const b of new TextEncoder().encode(s)) x = Math.imul(x ^ b, 16777619) >>> 0; return x; };
let marksCache = null;
export const forget = () => { marksCache = null; };
/// Every known player's colour and letter, by peer id.
function marks() {
  if (marksCache) return marksCache;
  const names = new Map(), chosen = new Map(), given = new Map();
  const note = (peer, name, colour, letter) => {
    if (!peer) return;
    if (name || !names.has(peer)) names.set(peer, name || "?");
    if (colour >= 1 && colour <= 8) chosen.set(peer, colour - 1);
    // The daemon's letter, handed out over the whole circle: the same on every screen.
    if (typeof letter === "string" && letter) given.set(peer, letter);
  };
  for (const [peer, n] of S.names) note(peer, n);
  if (S.me) note(S.me.peer, S.me.name);
  const g = S.game;
  for (const p of (g && g.players) || []) note(p.peer, p.name, p.colour, p.letter);
  for (const r of (g && g.race && g.race.racers) || []) note(r.peer, r.name, r.colour);
  for (const p of S.presence.values()) note(p.peer, p.name, p.colour, p.letter);
  const peers = [...names.keys()].sort(), taken = new Set(chosen.values()), colours = new Map(chosen);
  for (const peer of peers) {
    if (colours.has(peer)) continue;
    let i = fnv(peer) % 8;
    if (taken.size < 8) while (taken.has(i)) i = (i + 1) % 8;
    taken.add(i); colours.set(peer, i);
  }
  const used = new Set(given.values()), out = new Map();
  const order = [...names].sort((a, b) => a[1].toLowerCase().localeCompare(b[1].toLowerCase()) || (a[0] < b[0] ? -1 : 1));
  for (const [peer, name] of order) {
    const up = name.toUpperCase();
    const letter = given.get(peer) || [...up.replace(/[^A-Z]/g, "") + up.replace(/[^0-9]/g, "") + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"].find((ch) => !used.has(ch)) || "'";
    used.add(letter);
    const [bg, fg] = PALETTE[colours.get(peer)];
    out.set(peer, { colour: bg, fg, letter, name });
  }
  return (marksCache = out);
}
export function markOf(peer, name) {
  if (peer && !marks().has(peer)) { S.names.set(peer, name || "?"); forget(); }
  return marks().get(peer) || { colour: "#888", fg: "#fff", letter: "?", name: name || "?" };
}
export function badge(peer, name) {
  const m = markOf(peer, name), b = h("span", { class: "pbadge", text: m.letter, "aria-hidden": "true" });
  b.style.background = m.colour; b.style.color = m.fg;
  return b;
}
export function nameBadge(name) {
  for (const [peer, m] of marks()) if (m.name === name) return badge(peer, name);
  return h("span", { class: "pbadge", text: (name || "?")[0].toUpperCase(), "aria-hidden": "true" });
}

// ----- state -----

export const S = {
  me: null, game: null, gid: null, flags: 0, minesLeft: 0, ready: false, eventsApplied: 0, seq: 0,
  presence: new Map(), names: new Map(), games: [], dailyIds: new Set(), peers: new Map(),
  mode: "reveal", pointMode: false, panel: null, replay: null, peek: null, booted: false,
  clock: { base: 0, at: 0, running: false }, endingFor: null, filter: "playing", showOthers: true, cursor: { x: 0, y: 0 },
};

export const board = new Board(
  { canvas: $("board"), overlay: $("overlay"), frame: $("frame"), stage: $("stage"), ring: $("ring") },
  {
    primary: (x, y, how) => { S.lastInputAt = performance.timeOrigin + performance.now(); onPrimary(x, y, how); },
    secondary: (x, y) => { aim(x, y); onSecondary(x, y); },
    chord: (x, y) => { aim(x, y); if (isNum(board.char(x, y))) move("chord", x, y); },
    hold: (x, y) => { aim(x, y); if (!canHold(x, y)) return false; move(S.mode === "flag" ? "reveal" : "flag", x, y); return true; },
    canHold: (x, y) => canHold(x, y),
    hover: (c, how) => { if (!S.replay) { S.cursor = c; if (how === "touch") board.setCursor(c.x, c.y, false); sendCursor(); } },
    press: (down) => setFace(down),
    viewChanged: () => renderZoombar(),
  });
export const isNum = (ch) => ch >= "1" && ch <= "8";
/// The cell a pointer acted on becomes the cursor (shared as presence).
export function aim(x, y) { S.cursor = { x, y }; board.setCursor(x, y, false); sendCursor(); }

// ----- the connection -----

const WS = (location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + "/ws";
export const net = { req: null, ev: null, up: false, evUp: false, next: 1, pending: [], queue: [], delay: 400, timer: null, gone: false };

export function rpc(command, args) {
  return new Promise((resolve, reject) => {
    if (!net.up) {
      const e = new Error(net.gone ? "This page is no longer logged in: run `sweeper web` again." : "No connection to sweeperd: reconnecting…");
      e.code = "offline";
      return reject(e);
    }
    const msg = Object.assign({}, args, { id: net.next++, command });
    for (const k in msg) if (msg[k] === undefined) delete msg[k];
    net.queue.push({ msg, resolve, reject });
    pump();
  });
}
function pump() {
  // The daemon drops a page with 256 requests waiting: at most 48 go at once.
  while (net.up && net.queue.length && net.pending.length < 48) {
    const r = net.queue.shift();
    net.pending.push(r);
    net.req.send(JSON.stringify(r.msg));
  }
}
function onAnswer(data) {
  let a;
  try { a = JSON.parse(data); } catch (_) { return; }
  // Answers come in order; one with an unreadable id answers the oldest.
  const i = Math.max(0, net.pending.findIndex((r) => r.msg.id === a.id));
  const r = net.pending.splice(i, 1)[0];
  pump();
  if (!r) return;
  if (a.ok) return r.resolve(a.result || {});
  const err = a.error || {}, e = new Error(err.message || err.code || "The request failed.");
  e.code = err.code;
  r.reject(e);
}

function socket(kind) {
  const ws = new WebSocket(WS);
  net[kind] = ws;
  ws.onclose = () => {
    if (net[kind] !== ws) return;
    if (kind === "req") {
      net.up = false;
      const lost = net.pending.concat(net.queue);
      net.pending = []; net.queue = [];
      for (const r of lost) { const e = new Error("The connection to sweeperd closed."); e.code = "offline"; r.reject(e); }
    } else net.evUp = false;
    showConn(true);
    retry();
  };
  ws.onerror = () => {};
  if (kind === "req") {
    ws.onopen = () => { net.up = true; net.delay = 400; pump(); synced(); };
    ws.onmessage = (m) => onAnswer(m.data);
  } else {
    ws.onopen = () => ws.send(JSON.stringify({ id: "events", command: "subscribe" }));
    ws.onmessage = (m) => onEventLine(m.data);
  }
}
export function connect() {
  for (const kind of ["req", "ev"]) if (!net[kind] || net[kind].readyState > 1) try { socket(kind); } catch (_) { return retry(); }
}
function retry() {
  clearTimeout(net.timer);
  net.timer = setTimeout(async () => {
    // A 403 for the page's own files: the session is gone (sweeperd restarted).
    try {
      net.gone = (await fetch("/icon.svg", { method: "HEAD", cache: "no-store" })).status === 403;
    } catch (_) {
      net.gone = false;
      net.delay = Math.min(8000, net.delay * 1.7);
      return retry();
    }
    showConn(true);
    if (net.gone) { net.delay = 3000; retry(); } else connect();
  }, net.delay);
}
function showConn(down) {
  document.body.classList.toggle("offline", down);
  $("conn").hidden = !down;
  $("conn").textContent = net.gone
    ? "This page is no longer logged in (sweeperd restarted, or this browser was unpaired). Run `sweeper web` on the computer (`sweeper web pair` for a phone on the home network) and open the board again."
    : "Reconnecting to sweeperd…";
}
function synced() {
  if (!net.up || !net.evUp) return;
  net.gone = false;
  showConn(false);
  sync().catch(failed);
}

function onEventLine(data) {
  let ev;
  try { ev = JSON.parse(data); } catch (_) { return; }
  if (!ev || typeof ev !== "object") return;
  if (ev.id === "events" && !ev.event) {
    if (ev.ok) { net.evUp = true; S.lastCursor = null; synced(); }
    return;
  }
  try { onEvent(ev); } catch (e) { say("Could not show an update: " + e.message, "error"); }
}

// ----- presence: this viewer's cursor, at most 20 lines a second -----

let cursorTimer = null, cursorLast = 0;
export function sendCursor() {
  if (cursorTimer) return;
  cursorTimer = setTimeout(() => {
    cursorTimer = null;
    if (!net.evUp || net.ev.readyState !== 1) return;
    const showing = S.game && !S.panel && !S.replay && document.visibilityState !== "hidden";
    const line = JSON.stringify(showing ? { id: 0, command: "cursor", game: S.gid, x: S.cursor.x, y: S.cursor.y } : { id: 0, command: "cursor" });
    if (line === S.lastCursor) return;
    S.lastCursor = line; cursorLast = performance.now();
    net.ev.send(line);
  }, Math.max(0, 50 - (performance.now() - cursorLast)));
}

// ----- messages -----

let sayTimer = null;
export function say(text, kind, ms) {
  const m = $("message");
  clearTimeout(sayTimer);
  m.textContent = text || "";
  m.className = text ? "show " + (kind || "info") : "";
  if (text) sayTimer = setTimeout(() => { m.className = ""; }, ms || (kind === "error" ? 6000 : 3500));
}
export const failed = (e) => say(e && e.message ? e.message : String(e), "error");
function toast(text, action) {
  const box = $("toasts"), t = h("div", { class: "toast" }, h("span", { text }));
  if (action) t.append(h("button", { type: "button", text: "Open", onclick: () => { t.remove(); action(); } }));
  t.append(h("button", { type: "button", class: "x", "aria-label": "Dismiss", text: "×", onclick: () => t.remove() }));
  box.append(t);
  if (box.children.length > 3) box.firstChild.remove();
  setTimeout(() => t.remove(), 6000);
}

// ----- in step with the daemon -----

async function sync() {
  const st = await rpc("status");
  S.me = { peer: st.peer, name: st.name };
  // Whom this browser plays as (a phone may be paired to a player the computer hosts).
  document.title = "Sweeper · " + st.name;
  S.status = st;
  setPresence(st.presence);
  const first = !S.booted;
  S.booted = true;
  if (first) await boot();
  else {
    if (S.gid && !S.replay) await openGame(S.gid, { keep: true, quiet: true });
    if (S.panel) refreshPanel();
  }
  rpc("peers").then((r) => setPeers(r.peers)).catch(() => {});
  rpc("scores", { daily: true }).then((r) => noteDaily(r.daily)).catch(() => {});
  sendCursor();
}
export function setPresence(list) {
  S.presence.clear();
  for (const p of list || []) if (p && p.peer && p.game) S.presence.set(p.peer, p);
  forget();
  renderOthers();
}

/// The game named by ?game=, else the newest in progress, else the list or the form.
async function boot() {
  const want = new URLSearchParams(location.search).get("game");
  if (want && await openGame(want)) return;
  let list = [];
  try { list = (await rpc("games")).games || []; S.games = list; } catch (e) { failed(e); }
  const current = list.find((g) => g.status === "playing" && !g.archived);
  if (current && await openGame(current.game)) return;
  showNoGame(list.length ? "No game in progress." : "No games yet: start one!");
  openPanel(list.length ? "games" : "new");
}

// ----- events -----

function onEvent(ev) {
  const g = S.game;
  switch (ev.event) {
    case "cells": return onCells(ev);
    case "game-added": case "game-changed": return onListing(ev);
    case "game-forgotten":
      S.games = S.games.filter((x) => x.game !== ev.game);
      if (S.panel === "games") renderGames();
      if (ev.game === S.gid) { showNoGame("This game was forgotten on this device."); say("This game was forgotten on this device."); }
      return;
    case "presence": {
      const p = ev.presence;
      if (!p || !p.peer) return;
      if (p.game) S.presence.set(p.peer, p); else S.presence.delete(p.peer);
      if (p.name) S.names.set(p.peer, p.name);
      forget(); renderOthers(); renderPlayers();
      if (g && g.race) renderRace();
      if (S.panel === "peers") renderPeers();
      return;
    }
    case "point": {
      if (!g || ev.game !== g.game || S.replay) return;
      const pr = ev.presence || {};
      if (pr.peer && pr.colour) { S.presence.set(pr.peer, Object.assign({}, S.presence.get(pr.peer), pr)); forget(); }
      const m = markOf(pr.peer, ev.byName), x = ev.x | 0, y = ev.y | 0;
      board.flashPoint(x, y, m.colour, m.fg, m.letter);
      if (pr.own) say("You point at " + x + "," + y + ".");
      else { say((ev.byName || "Someone") + ": look here (" + x + "," + y + ")"); board.reveal(x, y); }
      return;
    }
    case "peer-changed":
      if (ev.peerInfo && ev.peerInfo.peer) {
        S.peers.set(ev.peerInfo.peer, Object.assign({ at: performance.now() }, ev.peerInfo));
        if (ev.peerInfo.name) S.names.set(ev.peerInfo.peer, ev.peerInfo.name);
        renderPeerCount();
        if (S.panel === "peers") renderPeers();
      }
      return;
    case "profile-changed": {
      // A rename (or a colour): every place the page names the player says it at once.
      const p = ev.presence;
      if (!p || !p.peer || !p.name) return;
      S.names.set(p.peer, p.name);
      const held = S.presence.get(p.peer), letter = p.letter ? { letter: p.letter } : {};
      if (held) S.presence.set(p.peer, Object.assign({}, held, { name: p.name, colour: p.colour }, letter));
      for (const x of (g && g.players) || []) if (x.peer === p.peer) Object.assign(x, { name: p.name, colour: p.colour }, letter);
      for (const r of (g && g.race && g.race.racers) || []) if (r.peer === p.peer) r.name = p.name;
      if (S.me && S.me.peer === p.peer) S.me.name = p.name;
      forget(); renderOthers(); renderPlayers();
      if (S.panel === "peers") renderPeers();
      // A new name may move others' letters too (they go by name): the daemon's, fetched again.
      if (S.gid && !S.replay) openGame(S.gid, { keep: true, quiet: true });
      return;
    }
    case "events-dropped":
      if (S.gid && !S.replay) openGame(S.gid, { keep: true, quiet: true });
      if (S.panel) refreshPanel();
  }
}

function onCells(ev) {
  const entry = S.games.find((x) => x.game === ev.game);
  if (entry && !ev.racer) {
    if (typeof ev.progress === "number") entry.progress = ev.progress;
    if (ev.status) entry.status = ev.status;
    if (S.panel === "games") renderGamesSoon();
  }
  const g = S.game;
  if (!g || ev.game !== g.game) return;
  if (S.replay) return;
  if (ev.racer && g.race) {
    const rs = g.race.racers || (g.race.racers = []), i = rs.findIndex((r) => r.peer === ev.racer.peer);
    if (i >= 0) rs[i] = ev.racer; else rs.push(ev.racer);
    renderRace();
    // A board that ended may end the race or name its winner: the daemon says.
    if (ev.racer.status && ev.racer.status !== "playing" && !g.race.over) openGame(g.game, { keep: true, quiet: true });
    // Another racer's board: its standing alone.
    if (ev.racer.peer !== g.race.shownPeer) return;
  }
  const t0 = performance.now();
  S.seq++;
  S.eventsApplied++;
  if (ev.trippedByPeer) g.trippedByPeer = ev.trippedByPeer;
  applyCells(ev.cells, ev.status, ev.progress, ev.minesLeft);
  // What a remote move costs the page, and when the frame showing it starts.
  S.lastEventScriptMs = performance.now() - t0;
  requestAnimationFrame(() => { S.lastDrawAt = performance.timeOrigin + performance.now(); });
  if (ev.byPeer && S.me && Array.isArray(ev.cells)) {
    const m = markOf(ev.byPeer);
    if (ev.byPeer !== S.me.peer) board.flashMove(typeof ev.x === "number" && typeof ev.y === "number" ? [{ x: ev.x, y: ev.y }] : ev.cells, m.colour);
    if (g.players && !g.players.some((p) => p.peer === ev.byPeer)) { g.players.push({ peer: ev.byPeer, name: m.name, score: 0 }); renderPlayers(); }
  }
}

function onListing(ev) {
  const s = ev.listing;
  if (!s || !s.game) return;
  const i = S.games.findIndex((x) => x.game === s.game);
  if (i >= 0) S.games[i] = s; else S.games.unshift(s);
  S.games.sort((a, b) => (b.createdAt || 0) - (a.createdAt || 0));
  if (S.panel === "games") renderGamesSoon();
  if (s.game === S.awaited) { S.awaited = null; openGame(s.game); }
  const who = (s.playerNames || [])[0];
  if (ev.event === "game-added" && S.me && who && who !== S.me.name && s.game !== S.gid && !s.archived) {
    toast(who + " started " + (s.race ? "a race " : "") + size(s.width, s.height, s.mines), () => openGame(s.game));
  }
  const g = S.game;
  if (g && s.game === g.game) {
    for (const k of ["assisted", "archived", "chosenPlayerNames", "watching", "privateGame"]) if (s[k] === undefined) delete g[k]; else g[k] = s[k];
    board.interactive = canMove();
    renderGame();
  }
}
