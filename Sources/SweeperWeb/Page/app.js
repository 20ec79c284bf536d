"use strict";
// Sweeper's web board: the page around the board (board.js). It speaks the
// daemon's control protocol over two WebSockets: one for requests and their
// answers, one subscribed to every game's events (it carries this viewer's
// presence too).
(function () {
  const $ = (id) => document.getElementById(id);
  /// h("li", {class: "x", text: "…", onclick: f}, child, …): an element.
  function h(tag, props, ...kids) {
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
  const clear = (e) => { e.replaceChildren(); return e; };
  const all = (sel) => document.querySelectorAll(sel);
  const on = (id, f, ev) => $(id).addEventListener(ev || "click", f);

  // ----- words and numbers -----

  const PRESETS = { "9x9x10": "Beginner", "16x16x40": "Intermediate", "30x16x99": "Expert" };
  const sizeName = (w, h, m) => PRESETS[w + "x" + h + "x" + m] || "Custom";
  const size = (w, h, m) => w + "×" + h + (m !== undefined ? " · " + m + " mines" : "");
  const pct = (p) => Math.floor((Number(p) || 0) * 100) + "%";
  const num = (v, d) => (typeof v === "number" && isFinite(v) ? v.toFixed(d) : "–");
  const short = (id) => String(id || "").slice(0, 8);
  const plural = (n, w) => n + " " + w + (n === 1 ? "" : "s");
  function dur(sec) {
    sec = Math.max(0, Math.floor(Number(sec) || 0));
    const hh = Math.floor(sec / 3600), mm = Math.floor(sec / 60) % 60, ss = String(sec % 60).padStart(2, "0");
    return hh ? hh + ":" + String(mm).padStart(2, "0") + ":" + ss : mm + ":" + ss;
  }
  function when(t) {
    if (!t) return "";
    const d = new Date(t * 1000), now = new Date(), y = new Date(now - 864e5);
    const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (d.toDateString() === now.toDateString()) return "today " + hm;
    if (d.toDateString() === y.toDateString()) return "yesterday " + hm;
    return d.toLocaleDateString([], { day: "numeric", month: "short" }) + " " + hm;
  }
  const ago = (s) => typeof s !== "number" ? "" : s < 60 ? "just now" : s < 3600 ? Math.floor(s / 60) + " min ago" : s < 86400 ? Math.floor(s / 3600) + " h ago" : Math.floor(s / 86400) + " days ago";

  // ----- players: colours and letters, handed out as the text viewer does -----

  const PALETTE = [["#2f6fdf", "#fff"], ["#1f9d55", "#000"], ["#b82fb0", "#fff"], ["#12a9c2", "#000"], ["#d83a34", "#fff"], ["#e7b416", "#000"], ["#74b3ff", "#000"], ["#f58bc8", "#000"]];
  const fnv = (s) => { let x = 2166136261; for (const b of new TextEncoder().encode(s)) x = Math.imul(x ^ b, 16777619) >>> 0; return x; };
  let marksCache = null;
  const forget = () => { marksCache = null; };
  /// Every known player's colour and letter, by peer id.
  function marks() {
    if (marksCache) return marksCache;
    const names = new Map(), chosen = new Map();
    const note = (peer, name, colour) => {
      if (!peer) return;
      if (name || !names.has(peer)) names.set(peer, name || "?");
      if (colour >= 1 && colour <= 8) chosen.set(peer, colour - 1);
    };
    for (const [peer, n] of S.names) note(peer, n);
    if (S.me) note(S.me.peerID, S.me.name);
    const g = S.game;
    for (const p of (g && g.players) || []) note(p.id, p.name, p.colour);
    for (const r of (g && g.race && g.race.racers) || []) note(r.id, r.name, r.colour);
    for (const p of S.presence.values()) note(p.peer, p.name, p.colour);
    const peers = [...names.keys()].sort(), taken = new Set(chosen.values()), colours = new Map(chosen);
    for (const peer of peers) {
      if (colours.has(peer)) continue;
      let i = fnv(peer) % 8;
      if (taken.size < 8) while (taken.has(i)) i = (i + 1) % 8;
      taken.add(i); colours.set(peer, i);
    }
    const used = new Set(), out = new Map();
    const order = [...names].sort((a, b) => a[1].toLowerCase().localeCompare(b[1].toLowerCase()) || (a[0] < b[0] ? -1 : 1));
    for (const [peer, name] of order) {
      const up = name.toUpperCase();
      const letter = [...up.replace(/[^A-Z]/g, "") + up.replace(/[^0-9]/g, "") + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"].find((ch) => !used.has(ch)) || "'";
      used.add(letter);
      const [bg, fg] = PALETTE[colours.get(peer)];
      out.set(peer, { colour: bg, fg, letter, name });
    }
    return (marksCache = out);
  }
  function markOf(peer, name) {
    if (peer && !marks().has(peer)) { S.names.set(peer, name || "?"); forget(); }
    return marks().get(peer) || { colour: "#888", fg: "#fff", letter: "?", name: name || "?" };
  }
  function badge(peer, name) {
    const m = markOf(peer, name), b = h("span", { class: "pbadge", text: m.letter, "aria-hidden": "true" });
    b.style.background = m.colour; b.style.color = m.fg;
    return b;
  }
  function nameBadge(name) {
    for (const [peer, m] of marks()) if (m.name === name) return badge(peer, name);
    return h("span", { class: "pbadge", text: (name || "?")[0].toUpperCase(), "aria-hidden": "true" });
  }

  // ----- state -----

  const S = {
    me: null, game: null, gid: null, flags: 0, minesLeft: 0, ready: false, eventsApplied: 0, seq: 0,
    presence: new Map(), names: new Map(), games: [], dailyIds: new Set(), peers: new Map(),
    mode: "reveal", pointMode: false, panel: null, replay: null, peek: null, booted: false,
    clock: { base: 0, at: 0, running: false }, endingFor: null, filter: "playing", showOthers: true, cursor: { x: 0, y: 0 },
  };

  const board = new window.SweeperBoard(
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
  const isNum = (ch) => ch >= "1" && ch <= "8";
  /// The cell a pointer acted on becomes the cursor (shared as presence).
  function aim(x, y) { S.cursor = { x, y }; board.setCursor(x, y, false); sendCursor(); }

  // ----- the connection -----

  const WS = (location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + "/ws";
  const net = { req: null, ev: null, up: false, evUp: false, next: 1, pending: [], queue: [], delay: 400, timer: null, gone: false };

  function rpc(command, args) {
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
  function connect() {
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
  function sendCursor() {
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
  function say(text, kind, ms) {
    const m = $("message");
    clearTimeout(sayTimer);
    m.textContent = text || "";
    m.className = text ? "show " + (kind || "info") : "";
    if (text) sayTimer = setTimeout(() => { m.className = ""; }, ms || (kind === "error" ? 6000 : 3500));
  }
  const failed = (e) => say(e && e.message ? e.message : String(e), "error");
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
    S.me = { peerID: st.peerID, name: st.name };
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
  function setPresence(list) {
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
    if (current && await openGame(current.id)) return;
    showNoGame(list.length ? "No game in progress." : "No games yet: start one!");
    openPanel(list.length ? "games" : "new");
  }

  /// In a race, whose board is shown when it is not this device's own.
  function racer() {
    const r = S.game && S.game.race;
    return r && S.me && r.shown !== S.me.peerID ? r.shown : undefined;
  }

  // ----- the game shown -----

  async function openGame(id, o) {
    o = o || {};
    const same = S.gid && id && S.gid.startsWith(id);
    if (!same) S.ready = false;
    try {
      showGame(await rpc("show", { game: id, racer: "racer" in o ? o.racer : same ? racer() : undefined }), o);
      return true;
    } catch (e) {
      if (!o.quiet) failed(e);
      if (same && e.code === "unknown-game") showNoGame("That game is no longer on this device.");
      return false;
    }
  }

  function showGame(g, o) {
    o = o || {};
    if (!g || typeof g.width !== "number") return;
    if (S.replay) stopReplay(true);
    const old = S.game && S.game.id === g.id ? S.game : null;
    const keep = old && o.keep && (!g.race || old.race.shown === g.race.shown);
    S.game = g; S.gid = g.id; S.seq++;
    if (g.daily) S.dailyIds.add(g.id);
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
    setClock(g.elapsedSeconds, g.status === "playing");
    renderGame();
    try { history.replaceState(null, "", "/?game=" + encodeURIComponent(g.id)); } catch (_) { /* sandboxed */ }
    sendCursor();
    if (S.firstDrawMs === undefined) requestAnimationFrame(() => { if (S.firstDrawMs === undefined) S.firstDrawMs = performance.now(); });
    S.ready = true;
    const key = g.id + (g.race ? g.race.shown : "");
    if (g.status === "playing") { hideEnding(); if (old && old.status !== "playing") S.endingFor = null; }
    else if (g.ending && S.endingFor !== key) { S.endingFor = key; showEnding(); }
    else if (!$("ending-layer").hidden) renderEnding();
  }

  function showNoGame(text) {
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
  const canMove = () => !whyNot();
  function mayMove() { const w = whyNot(); if (w) say(w); return !w; }

  function onPrimary(x, y, how) {
    if (how !== "key") aim(x, y);
    if (S.pointMode) { setPointMode(false); return pointAt(x, y); }
    if (S.replay) return;
    const ch = board.char(x, y);
    if (isNum(ch)) return move("chord", x, y);
    if (S.mode === "flag" && how !== "key") return onSecondary(x, y);
    if (ch === "#" || ch === "?") return move("reveal", x, y);
    if (ch === "F" && mayMove()) say("Flagged: " + (how === "touch" ? "press and hold" : how === "key" ? "f" : "right-click") + " takes the flag off.");
  }
  function onSecondary(x, y) {
    if (!S.replay && !S.pointMode && "#F?".includes(board.char(x, y) || "-")) move("flag", x, y);
  }
  function canHold(x, y) {
    const ch = board.char(x, y);
    return !S.pointMode && canMove() && (ch === "#" || ch === "?" || (ch === "F" && S.mode === "reveal"));
  }

  async function move(command, x, y) {
    if (!mayMove()) return;
    const gid = S.gid, seq = S.seq;
    try {
      const r = await rpc(command, { game: gid, x, y });
      // The move's event says the same; its answer shows at once unless an
      // event of the game came in between (events are the order of record).
      if (S.gid === gid && S.seq === seq && !S.replay && Array.isArray(r.changed)) { S.seq++; applyCells(r.changed, r.status, r.progress); }
    } catch (e) { failed(e); }
  }
  async function pointAt(x, y) {
    if (S.gid) try { await rpc("point", { game: S.gid, x, y }); } catch (e) { failed(e); }
  }

  function applyCells(cells, status, progress, minesLeft) {
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
        openGame(g.id, { keep: true, quiet: true });
      }
      renderGame();
    } else { renderCounters(); renderInfo(); }
  }

  // ----- events -----

  function onEvent(ev) {
    const g = S.game;
    switch (ev.event) {
      case "cells": return onCells(ev);
      case "game-added": case "game-changed": return onSummary(ev);
      case "game-forgotten":
        S.games = S.games.filter((x) => x.id !== ev.game);
        if (S.panel === "games") renderGames();
        if (ev.game === S.gid) { showNoGame("This game was forgotten on this device."); say("This game was forgotten on this device."); }
        return;
      case "presence": {
        const p = ev.presence;
        if (!p || !p.peer) return;
        if (p.game) S.presence.set(p.peer, p); else S.presence.delete(p.peer);
        if (p.name) S.names.set(p.peer, p.name);
        forget(); renderOthers(); renderPlayers();
        if (S.panel === "peers") renderPeers();
        return;
      }
      case "point": {
        if (!g || ev.game !== g.id || S.replay) return;
        const pr = ev.presence || {};
        if (pr.peer && pr.colour) { S.presence.set(pr.peer, Object.assign({}, S.presence.get(pr.peer), pr)); forget(); }
        const m = markOf(pr.peer, ev.by), x = ev.x | 0, y = ev.y | 0;
        board.flashPoint(x, y, m.colour, m.fg, m.letter);
        if (pr.own) say("You point at " + x + "," + y + ".");
        else { say((ev.by || "Someone") + ": look here (" + x + "," + y + ")"); board.reveal(x, y); }
        return;
      }
      case "peer-changed":
        if (ev.peer && ev.peer.id) {
          S.peers.set(ev.peer.id, Object.assign({ at: performance.now() }, ev.peer));
          if (ev.peer.name) S.names.set(ev.peer.id, ev.peer.name);
          renderPeerCount();
          if (S.panel === "peers") renderPeers();
        }
        return;
      case "events-dropped":
        if (S.gid && !S.replay) openGame(S.gid, { keep: true, quiet: true });
        if (S.panel) refreshPanel();
    }
  }

  function onCells(ev) {
    const entry = S.games.find((x) => x.id === ev.game);
    if (entry && !ev.racer) {
      if (typeof ev.progress === "number") entry.progress = ev.progress;
      if (ev.status) entry.status = ev.status;
      if (S.panel === "games") renderGamesSoon();
    }
    const g = S.game;
    if (!g || ev.game !== g.id) return;
    if (S.replay) return;
    if (ev.racer && g.race) {
      const rs = g.race.racers || (g.race.racers = []), i = rs.findIndex((r) => r.id === ev.racer.id);
      if (i >= 0) rs[i] = ev.racer; else rs.push(ev.racer);
      renderRace();
      // Another racer's board: its standing alone.
      if (ev.racer.id !== g.race.shown) return;
    }
    const t0 = performance.now();
    S.seq++;
    S.eventsApplied++;
    if (ev.trippedBy) g.trippedBy = ev.trippedBy;
    applyCells(ev.cells, ev.status, ev.progress, ev.minesLeft);
    // What a remote move costs the page, and when the frame showing it starts.
    S.lastEventScriptMs = performance.now() - t0;
    requestAnimationFrame(() => { S.lastDrawAt = performance.timeOrigin + performance.now(); });
    if (ev.by && S.me && Array.isArray(ev.cells)) {
      const m = markOf(ev.by);
      if (ev.by !== S.me.peerID) board.flashMove(typeof ev.x === "number" && typeof ev.y === "number" ? [{ x: ev.x, y: ev.y }] : ev.cells, m.colour);
      if (g.players && !g.players.some((p) => p.id === ev.by)) { g.players.push({ id: ev.by, name: m.name, score: 0 }); renderPlayers(); }
    }
  }

  function onSummary(ev) {
    const s = ev.summary;
    if (!s || !s.id) return;
    const i = S.games.findIndex((x) => x.id === s.id);
    if (i >= 0) S.games[i] = s; else S.games.unshift(s);
    S.games.sort((a, b) => (b.created || 0) - (a.created || 0));
    if (S.panel === "games") renderGamesSoon();
    if (s.id === S.awaited) { S.awaited = null; openGame(s.id); }
    const who = (s.players || [])[0];
    if (ev.event === "game-added" && S.me && who && who !== S.me.name && s.id !== S.gid && !s.archived) {
      toast(who + " started " + (s.race ? "a race " : "") + size(s.width, s.height, s.mines), () => openGame(s.id));
    }
    const g = S.game;
    if (g && s.id === g.id) {
      for (const k of ["assisted", "archived", "chosenPlayers", "watching", "privateGame"]) if (s[k] === undefined) delete g[k]; else g[k] = s[k];
      board.interactive = canMove();
      renderGame();
    }
  }

  // ----- the status line and the game's frame -----

  function renderGame() {
    document.body.dataset.status = S.game ? S.game.status : "none";
    renderCounters(); renderInfo(); renderPlayers(); renderRace(); renderOthers(); renderToolbar(); renderZoombar();
  }
  const led = (n) => (n < 0 ? "-" + String(-n).padStart(2, "0") : String(n).padStart(3, "0"));
  function renderCounters() {
    const g = S.game, ml = $("mines-left"), txt = g ? led(S.minesLeft) : "---";
    if (ml.textContent !== txt) ml.textContent = txt;
    ml.setAttribute("aria-label", g ? S.minesLeft + " mines left" : "No game");
    setFace(false);
    renderClock();
  }
  function setFace(pressing) {
    const st = S.game && S.game.status;
    $("face").dataset.face = st === "won" ? "cool" : st === "lost" ? "dead" : pressing && canMove() ? "oh" : "smile";
  }

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
    if (seen && g && net.up && !S.replay) openGame(g.id, { keep: true, quiet: true });
    sendCursor();
  });

  function renderInfo() {
    const g = S.game, badges = clear($("badges"));
    $("gametitle").textContent = g ? (g.daily ? "Board of the day" : sizeName(g.width, g.height, g.mines)) + " " + size(g.width, g.height, g.mines) + " · " + pct(g.progress) : "Sweeper";
    if (!g) return;
    const tags = [
      [g.race, "Race", "race"], [g.daily || S.dailyIds.has(g.id), "Daily", "daily"], [g.noGuess, "No-guess", "", "Every move can be worked out"],
      [g.seeded, "Practice", "", "Its seed was chosen: never a record"], [g.assisted, "Assisted", "warn", "Someone asked for a hint or looked at the mines"],
      [g.privateGame, "Private", "", "Only its players read it"], [g.watching, "Watching", "warn", "Its creator chose the players: you watch"],
      [g.archived, "Archived"], [g.onlyHere, "Only here", "", "Held from before this device joined its family: never sent to the others"],
      [g.questionMarks, "?", "", "Marks cycle through question marks"],
      [g.equivocatedBy, "⚠ " + (g.equivocatedBy || []).join(", "), "warn", "signed two different moves at one place: devices may show different boards"],
      [g.overQuotaBy, "⚠ " + (g.overQuotaBy || []).join(", "), "warn", "moves past what a game can take were refused"],
    ];
    for (const [yes, text, cls, title] of tags) if (yes) badges.append(h("span", { class: "tag " + (cls || ""), text, title }));
  }

  function renderPlayers() {
    const box = clear($("players")), g = S.game, seen = new Set();
    if (!g || g.race) return;
    const chip = (peer, name, extra) => {
      if (seen.has(peer)) return;
      seen.add(peer);
      const p = S.presence.get(peer), here = p && p.game === g.id;
      box.append(h("span", { class: "chip" + (here ? " here" : ""), title: name + (S.me && peer === S.me.peerID ? " (you)" : "") + (here ? " · looking at this game" : "") },
        badge(peer, name), h("span", { class: "chip-name", text: name }), extra !== undefined ? h("small", { text: String(extra) }) : null));
    };
    for (const p of g.players || []) chip(p.id, p.name, p.score);
    for (const p of S.presence.values()) if (p.game === g.id) chip(p.peer, p.name);
  }

  function renderOthers() {
    const g = S.game, list = [];
    if (g && !S.replay && S.showOthers) for (const p of S.presence.values()) {
      if (p.own || (S.me && p.peer === S.me.peerID) || p.game !== g.id || typeof p.x !== "number") continue;
      const m = markOf(p.peer, p.name);
      list.push({ x: p.x, y: p.y, colour: m.colour, fg: m.fg, letter: m.letter });
    }
    board.setOthers(list);
  }

  const standing = (x) => x.status === "won" ? "cleared" + (typeof x.seconds === "number" ? " in " + dur(x.seconds) : "") : x.status === "lost" ? (x.gaveUp ? "gave up" : "hit a mine") : pct(x.progress);
  function bar(p) { const b = h("span", { class: "bar-track" }, h("span", { class: "bar-fill" })); b.firstChild.style.width = Math.round((p || 0) * 100) + "%"; return b; }
  function renderRace() {
    const g = S.game, r = g && g.race;
    $("race").hidden = !r || !!S.replay;
    if (!r) return;
    clear($("race-head")).append(h("b", { text: "Race" }), r.winner ? " · " + r.winner + " won" + (r.over ? " · over" : "") : r.over ? " · over" : " · first to clear the board wins");
    clear($("racers")).append(...(r.racers || []).map((x) => {
      const mine = S.me && x.id === S.me.peerID;
      return h("button", { type: "button", class: "racer " + x.status, "aria-pressed": String(x.id === r.shown), title: "Show " + x.name + "'s board", onclick: () => openGame(g.id, { racer: mine ? undefined : x.id }) },
        badge(x.id, x.name), h("span", { class: "racer-name", text: x.name + (mine ? " (you)" : "") }), bar(x.progress), h("small", { text: standing(x) }));
    }));
  }

  function renderToolbar() {
    const g = S.game;
    $("mode-reveal").setAttribute("aria-checked", String(S.mode === "reveal"));
    $("mode-flag").setAttribute("aria-checked", String(S.mode === "flag"));
    $("btn-hint").disabled = !canMove();
    $("btn-point").disabled = !g || !!S.replay;
    $("btn-more").disabled = !g;
    document.body.classList.toggle("flag-mode", S.mode === "flag");
  }
  function renderZoombar() {
    // Never over a board that fits (its canvas is its cells): only when
    // zoomed, or beside a board of small cells with room to spare.
    const f = $("frame").getBoundingClientRect(), st = $("stage").getBoundingClientRect();
    $("zoombar").hidden = !S.game || !!S.replay || !(board.scroll || (board.base < 30 && st.right - f.right > 60));
    $("zoom-out").disabled = $("zoom-fit").disabled = board.zoom <= 1.001;
    $("zoom-in").disabled = board.zoom >= (board.maxZoom || 1) - 0.001;
  }

  // ----- the ending -----

  const dl = (rows) => h("dl", { class: "figures" }, rows.map(([k, v]) => [h("dt", { text: k }), h("dd", { text: String(v === undefined ? "–" : v) })]));
  function renderEnding() {
    const g = S.game, box = clear($("ending")), e = g && g.ending;
    if (!e) return;
    const won = e.status === "won", me = g.race && (g.race.racers || []).find((x) => x.id === g.race.shown);
    box.append(h("h2", { id: "ending-title", class: won ? "won" : "lost", text: won ? "Cleared! Well done." : me && me.gaveUp ? me.name + " gave up." : "Boom: a mine went off." }),
      dl([["Time", dur(e.seconds)], ["3BV", (e.solvedThreeBV !== undefined && e.solvedThreeBV !== e.threeBV ? e.solvedThreeBV + " of " : "") + e.threeBV],
        ["3BV/s", num(e.threeBVPerSecond, 2)], ["Clicks", e.clicks], ["Efficiency", typeof e.efficiency === "number" ? Math.round(e.efficiency * 100) + "%" : "–"]]));
    if (e.trippedBy) box.append(h("p", { class: "note lost", text: e.trippedBy + " tripped the mine" + (e.trippedAt ? " at " + e.trippedAt.x + "," + e.trippedAt.y : "") + (typeof e.trippedAfterSeconds === "number" ? " after " + dur(e.trippedAfterSeconds) : "") + "." }));
    if (e.winThatDidNotStand) box.append(h("p", { class: "note", text: e.winThatDidNotStand + "'s win on a device apart did not stand: the mine came first." }));
    if ((e.parts || []).length) {
      box.append(h("div", { class: "table-wrap" }, h("table", { class: "parts" },
        h("thead", null, h("tr", null, ["Player", "Cells", "3BV", "Flags", "Clicks", "Hints"].map((x) => h("th", { text: x, scope: "col", title: x === "Flags" ? "right / wrong" : null })))),
        h("tbody", null, e.parts.map((p) => h("tr", null,
          h("th", { scope: "row" }, nameBadge(p.name), " " + p.name, p.peekedAt ? h("small", { text: " (looked)", title: "looked at the mines " + when(p.peekedAt) }) : null),
          [p.cellsOpened, p.threeBV, p.flagsRight + "/" + p.flagsWrong, p.clicks, p.hints || 0].map((v) => h("td", { text: String(v) }))))))));
    }
    if (e.record) box.append(h("p", { class: "note record", text: "★ " + e.record }));
    box.append(h("p", { class: "note", text: e.ranked ? "Ranked: it counts for the scores." : "Not ranked" + (e.notRanked ? ": " + e.notRanked : "") + "." }));
    if (g.race) box.append(raceTable(g.race));
    if (g.daily) box.append(dailyTable(g.daily, true));
  }
  function showEnding(asked) {
    if (!S.game || !S.game.ending) return asked && say("The game is not over yet.");
    renderEnding();
    $("ending-layer").hidden = false;
  }
  const hideEnding = () => { $("ending-layer").hidden = true; };

  function raceTable(r) {
    return h("div", { class: "subtable" }, h("h3", { text: "Race" + (r.winner ? ": " + r.winner + " won" : "") }),
      h("ol", { class: "standings" }, (r.racers || []).map((x) => h("li", null, badge(x.id, x.name), " " + x.name + " — " + (x.status === "playing" ? "playing, " : "") + standing(x)))));
  }
  function dailyTable(d, compact) {
    const res = d.results || [];
    return h("div", { class: "subtable" }, h("h3", { text: "Board of the day" + (d.date ? " · " + d.date : "") }),
      res.length ? h("ol", { class: "standings" }, res.map((x) => h("li", null, badge(x.peer, x.name),
        " " + x.name + " — " + (x.status === "won" ? dur(x.seconds) + (typeof x.threeBVPerSecond === "number" ? " · " + num(x.threeBVPerSecond, 2) + " 3BV/s" : "") : x.status === "lost" ? "hit a mine" : "playing, " + pct(x.progress)) + (x.assisted ? " · assisted" : ""),
        !compact && x.game ? [" ", h("button", { type: "button", class: "link", text: "View", onclick: () => { closePanel(); openGame(x.game); } })] : null)))
        : h("p", { class: "note", text: "Nobody has played today's board yet." }),
      (d.streaks || []).length ? h("p", { class: "note", text: "Streaks: " + d.streaks.map((s) => s.name + " " + plural(s.days, "day")).join(" · ") }) : null);
  }
  function noteDaily(d) { for (const r of (d && d.results) || []) if (r.game) S.dailyIds.add(r.game); }

  // ----- new games -----

  async function newGame(args) {
    try { const g = await rpc("new", args); closePanel(); showGame(g); return null; } catch (e) { failed(e); return e; }
  }
  function sameSize() {
    const g = S.game;
    if (!g) return openPanel("new");
    newGame({ width: g.width, height: g.height, mines: g.mines, noGuess: !!g.noGuess, questionMarks: !!g.questionMarks });
  }

  // ----- replay: the opening, then each move -----

  async function startReplay() {
    const g = S.game;
    if (!g) return;
    let r;
    try { r = await rpc("replay", { game: g.id, racer: g.race ? g.race.shown : undefined }); } catch (e) { return failed(e); }
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
      const mk = markOf(m.author, m.name);
      board.setMark({ x: m.x, y: m.y, colour: mk.colour, fg: mk.fg, letter: mk.letter });
      board.flashMove(m.changed, mk.colour);
      board.reveal(m.x, m.y);
    } else board.setMark(null);
    const st = m ? m.status : "playing";
    $("face").dataset.face = st === "won" ? "cool" : st === "lost" ? "dead" : "smile";
    $("mines-left").textContent = led(r.mines - board.count("F"));
    $("clock").textContent = m ? (m.seconds < 1000 ? String(Math.floor(m.seconds)).padStart(3, "0") : dur(m.seconds)) : "000";
    $("replay-line").textContent = ["Move " + pos + "/" + moves.length].concat(m
      ? [dur(m.seconds), m.name + " " + m.kind + (hasCell ? " at " + m.x + "," + m.y : "") + (m.changed && m.changed.length > 1 ? " (" + m.changed.length + " cells)" : "")]
      : ["the opening"], R.speed + "×").join(" · ");
    $("rp-pos").value = String(pos);
  }
  function replayPlay(on) {
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
  function replayGo(pos) { if (S.replay) { replayPlay(false); replayTo(pos); } }
  function replaySpeed(f) {
    const R = S.replay;
    if (!R) return;
    R.speed = Math.max(1, Math.min(16, f ? R.speed * f : Number($("rp-speed").value) || 1));
    $("rp-speed").value = String(R.speed);
    replayTo(R.pos);
    if (R.playing) replayPlay(true);
  }
  function stopReplay(silent) {
    const R = S.replay;
    if (!R) return;
    clearTimeout(R.timer);
    S.replay = null;
    board.setMark(null);
    $("replaybar").hidden = true; $("toolbar").hidden = false;
    if (!silent && S.gid) openGame(S.gid, { keep: true });
  }

  // ----- panels -----

  const PANELS = ["games", "new", "scores", "daily", "peers", "help"];
  function openPanel(name) {
    closeMenu();
    for (const p of PANELS) $("sheet-" + p).hidden = p !== name;
    $("scrim").hidden = false;
    S.panel = name;
    for (const b of all("#nav button")) b.setAttribute("aria-current", String(b.dataset.open === name));
    refreshPanel();
    sendCursor();
    if (!matchMedia("(pointer: coarse)").matches) $("sheet-" + name).querySelector(".close").focus({ preventScroll: true });
  }
  function closePanel() {
    if (!S.panel) return;
    $("sheet-" + S.panel).hidden = $("scrim").hidden = true;
    S.panel = null;
    for (const b of all("#nav button")) b.setAttribute("aria-current", "false");
    sendCursor();
  }
  function refreshPanel() {
    ({ games: loadGames, new: prepareNew, scores: loadScores, daily: loadDaily, peers: loadPeers }[S.panel] || (() => {}))();
  }

  // Games

  async function loadGames() {
    const f = S.filter;
    renderGames();
    try {
      if (f === "available") S.available = (await rpc("games", { available: true })).available || [];
      else if (f === "archived") S.archived = ((await rpc("games", { archived: true })).games || []).filter((g) => g.archived);
      else S.games = (await rpc("games")).games || [];
      renderGames();
    } catch (e) { failed(e); }
  }
  let gamesTimer = null;
  function renderGamesSoon() { if (!gamesTimer) gamesTimer = setTimeout(() => { gamesTimer = null; renderGames(); }, 250); }
  function renderGames() {
    const f = S.filter, ul = clear($("game-list"));
    for (const t of all("[data-filter]")) t.setAttribute("aria-selected", String(t.dataset.filter === f));
    const list = f === "available" ? S.available || [] : f === "archived" ? S.archived || []
      : S.games.filter((g) => !g.archived && (f === "playing") === (g.status === "playing"));
    if (!list.length) ul.append(h("li", { class: "empty-note" }, f === "available" ? "No games on the other devices that this one lacks." : f === "playing" ? ["No game in progress. ", h("button", { type: "button", class: "link", text: "Start one", onclick: () => openPanel("new") })] : "Nothing here yet."));
    for (const g of list.slice(0, 300)) ul.append(f === "available" ? availableRow(g) : gameRow(g));
  }
  function gameRow(g) {
    const who = g.chosenPlayers || g.players || [];
    const tags = [[g.race, "Race", "race"], [S.dailyIds.has(g.id), "Daily", "daily"], [g.assisted, "Assisted", "warn"], [g.privateGame, "Private"], [g.watching, "Watching", "warn"], [g.onlyHere, "Only here"]];
    return h("li", null, h("button", { type: "button", class: "game-row" + (g.id === S.gid ? " current" : ""), dataset: { game: g.id }, onclick: () => { closePanel(); openGame(g.id); } },
      h("span", { class: "mini-face", dataset: { face: g.status === "won" ? "cool" : g.status === "lost" ? "dead" : "smile" }, "aria-hidden": "true" }),
      h("span", { class: "gr-main" },
        h("span", { class: "gr-title" }, h("b", { text: sizeName(g.width, g.height, g.mines) }), " " + size(g.width, g.height, g.mines), tags.filter((t) => t[0]).map((t) => h("span", { class: "tag " + (t[2] || ""), text: t[1] }))),
        h("span", { class: "gr-sub" }, bar(g.progress), h("span", { text: g.status + " " + pct(g.progress) + " · " + dur(g.elapsedSeconds) + " · " + when(g.created) })),
        who.length ? h("span", { class: "gr-who" }, who.slice(0, 8).map((n) => h("span", { class: "who" }, nameBadge(n), n)), g.chosenPlayers ? h("small", { text: "(chosen players)" }) : null) : null),
      h("span", { class: "chev", "aria-hidden": "true", text: "›" })));
  }
  function availableRow(a) {
    const btn = h("button", { type: "button", class: "primary small", text: a.forgotten ? "Bring back" : "Follow", onclick: async () => {
      btn.disabled = true;
      try {
        const r = await rpc("follow", { game: a.id });
        closePanel();
        if (r.held) return openGame(a.id);
        // It comes from the peers that have it: opened when it arrives.
        S.awaited = a.id;
        say("Fetching the game from the other devices…", "info", 8000);
      } catch (e) { failed(e); btn.disabled = false; }
    } });
    const bits = [a.width ? size(a.width, a.height, a.mines) : "", a.noGuess ? "no-guess" : "", a.status ? a.status + (typeof a.progress === "number" ? " " + pct(a.progress) : "") : "", plural(a.ops, "move")];
    return h("li", { class: "avail" }, h("span", { class: "gr-main" },
      h("span", { class: "gr-title" }, h("b", { text: a.width ? sizeName(a.width, a.height, a.mines) : "Game " + short(a.id) }), " " + bits.filter(Boolean).join(" · "), a.forgotten ? h("span", { class: "tag", text: "Forgotten here" }) : null),
      h("span", { class: "gr-sub", text: "Held by " + (a.heldBy || []).join(", ") + (a.playerNames ? " · players " + a.playerNames.join(", ") : "") + (a.created ? " · " + when(a.created) : "") })), btn);
  }

  // New game

  const form = $("new-form");
  const field = (id) => $("nf-" + id);
  const preset = () => (form.querySelector("input[name=preset]:checked") || {}).value || "beginner";
  const chosen = () => [...field("players").querySelectorAll("input:checked")].map((i) => i.value);
  async function prepareNew() {
    $("new-error").textContent = "";
    if (!S.newRestored) {
      S.newRestored = true;
      try {
        const s = JSON.parse(localStorage.getItem("sweeper.new") || "{}");
        const r = form.querySelector('input[name=preset][value="' + s.preset + '"]');
        if (r) r.checked = true;
        for (const k of ["width", "height", "mines"]) if (s[k]) field(k).value = s[k];
        field("noguess").checked = !!s.noGuess; field("qmarks").checked = !!s.questionMarks;
      } catch (_) { /* nothing kept */ }
    }
    updateNew();
    try {
      const c = await rpc("circle"), box = clear(field("players")), others = (c.members || []).filter((m) => !m.thisDevice);
      for (const m of c.members || []) if (m.peerID && m.name) S.names.set(m.peerID, m.name);
      forget();
      if (!others.length) box.append(h("p", { class: "note", text: "Nobody else in the family yet (sweeper invite adds a device)." }));
      for (const m of others) box.append(h("label", { class: "check" }, h("input", { type: "checkbox", value: m.peerID }), " ", badge(m.peerID, m.name), " " + m.name + (m.linked ? "" : " (offline)")));
      updateNew();
    } catch (e) { $("new-error").textContent = e.message; }
  }
  function updateNew() {
    $("custom").disabled = preset() !== "custom";
    const w = parseInt(field("width").value, 10), hh = parseInt(field("height").value, 10);
    if (w >= 2 && w <= 500 && hh >= 2 && hh <= 500) {
      const max = (w - 1) * (hh - 1);
      field("mines").max = String(max);
      field("mines-note").textContent = "Mines: 1 to " + max + (field("noguess").checked ? " (no-guess: at most " + Math.min(max, w * hh - 9) + ")" : "") + ".";
    } else field("mines-note").textContent = "Width and height: 2 to 500.";
    const p = field("private");
    p.disabled = !chosen().length || field("race").checked;
    if (p.disabled) p.checked = false;
  }
  form.addEventListener("change", updateNew);
  form.addEventListener("input", updateNew);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const err = $("new-error"), kind = preset();
    err.textContent = "";
    const args = { noGuess: field("noguess").checked, questionMarks: field("qmarks").checked };
    const kept = { preset: kind, noGuess: args.noGuess, questionMarks: args.questionMarks };
    if (kind === "custom") {
      for (const [k, lo, hi, what] of [["width", 2, 500, "Width"], ["height", 2, 500, "Height"], ["mines", 1, 1e9, "Mines"]]) {
        const v = Number(field(k).value);
        if (!Number.isInteger(v) || v < lo || v > hi) { err.textContent = what + " must be a whole number " + (hi < 1e9 ? "from " + lo + " to " + hi : "of at least " + lo) + "."; return; }
        args[k] = kept[k] = v;
      }
    } else args.preset = kind;
    const players = chosen();
    if (players.length) args.players = players;
    if (field("race").checked) args.race = true;
    if (field("private").checked && players.length) args.privateGame = true;
    try { localStorage.setItem("sweeper.new", JSON.stringify(kept)); } catch (_) { /* private browsing */ }
    $("nf-start").disabled = true;
    const bad = await newGame(args);
    $("nf-start").disabled = false;
    if (bad) err.textContent = bad.message;
  });

  // Scores

  async function loadScores() {
    const body = $("scores-body"), player = $("score-player").value;
    try {
      const r = await rpc("scores", player ? { player } : {}), sel = $("score-player");
      const names = new Set([...S.names.values(), S.me && S.me.name]), have = new Set([...sel.options].map((o) => o.value));
      for (const s of r.scores || []) for (const n of s.players || []) names.add(n);
      for (const n of [...names].sort()) if (n && !have.has(n)) sel.append(h("option", { value: n, text: n }));
      renderScores(r, clear(body));
    } catch (e) { clear(body).append(h("p", { class: "error", text: e.message })); }
  }
  function scoreLine(s, label, extra) {
    return h("li", null, h("button", { type: "button", class: "score-row", onclick: () => { closePanel(); openGame(s.game); } },
      label ? h("span", { class: "tag", text: size(s.width, s.height, s.mines) }) : null,
      h("b", { class: "time", text: dur(s.seconds) }), h("span", { text: (s.players || []).join(", ") }),
      h("small", { text: [when(s.date), typeof s.threeBVPerSecond === "number" ? num(s.threeBVPerSecond, 2) + " 3BV/s" : "", s.noGuess ? "no-guess" : "", extra].filter(Boolean).join(" · ") })));
  }
  function renderScores(r, body) {
    const p = r.player;
    if (p) body.append(h("h3", { text: p.name }), dl([["Played", p.played], ["Won", p.won], ["Lost", p.lost], ["Mines tripped", p.minesTripped], ["Best 3BV/s", num(p.bestThreeBVPerSecond, 2)]]),
      (p.records || []).length ? [h("h3", { text: "Their best times" }), h("ul", { class: "list" }, p.records.map((s) => scoreLine(s, true)))] : null);
    const classes = r.classes || [];
    if (!classes.length) body.append(h("p", { class: "note", text: "No ranked wins yet. A win counts when nobody asked for a hint or looked at the mines, and its seed was not chosen." }));
    for (const c of classes) body.append(h("h3", { text: c.name || size(c.width, c.height, c.mines) }), h("ol", { class: "list" }, (c.best || []).map((s) => scoreLine(s))));
    for (const [title, list, note] of [["Wins with help", r.assisted, "Hints or a look at the mines: not ranked."], ["Practice wins", r.practice, "Games whose seed was chosen: not ranked."]]) {
      if ((list || []).length) body.append(h("details", null, h("summary", { text: title + " (" + list.length + ")" }), h("p", { class: "note", text: note }),
        h("ul", { class: "list" }, list.map((a) => {
          const help = (a.hints || []).map((x) => x.name + " " + plural(x.hints, "hint")).concat((a.peeks || []).map((x) => x.name + " looked at the mines"));
          return scoreLine(a.game && typeof a.game === "object" ? a.game : a, true, help.join(" · "));
        }))));
    }
  }

  // Board of the day

  async function loadDaily() {
    const body = $("daily-body");
    try {
      const d = (await rpc("scores", { daily: true })).daily;
      noteDaily(d);
      clear(body).append(d ? dailyTable(d) : "");
      const mine = d && S.me && (d.results || []).find((x) => x.peer === S.me.peerID);
      $("daily-play").textContent = !mine ? "Play today's board" : mine.status === "playing" ? "Go on with today's board" : "See today's board";
    } catch (e) { clear(body).append(h("p", { class: "error", text: e.message })); }
  }
  on("daily-play", async () => { try { const g = await rpc("daily"); closePanel(); showGame(g); } catch (e) { failed(e); } });

  // Family devices

  function setPeers(list) {
    S.peers.clear();
    for (const p of list || []) if (p && p.id) { S.peers.set(p.id, Object.assign({ at: performance.now() }, p)); if (p.name) S.names.set(p.id, p.name); }
    forget();
    renderPeerCount();
  }
  function renderPeerCount() {
    const n = [...S.peers.values()].filter((p) => p.state === "connected" && !p.otherCircle).length, b = $("peer-count");
    b.hidden = !n; b.textContent = n; b.title = n + " connected";
  }
  async function loadPeers() {
    renderPeers();
    try {
      const [st, pr, ci] = await Promise.all([rpc("status"), rpc("peers"), rpc("circle").catch(() => null)]);
      S.status = st; S.circle = ci;
      setPeers(pr.peers);
      setPresence(pr.presence);
      renderPeers();
    } catch (e) { clear($("peers-body")).append(h("p", { class: "error", text: e.message })); }
  }
  const person = (peer, name, title, lines, extra) => h("li", { class: "peer" }, badge(peer, name), h("span", { class: "gr-main" }, h("b", { text: title || name }), lines.filter(Boolean).map((l) => l.nodeType ? l : h("small", { text: l }))), extra);
  function renderPeers() {
    const body = clear($("peers-body")), st = S.status;
    if (st) {
      body.append(h("ul", { class: "list me-card" }, person(st.peerID, st.name, st.name + " (this device)", ["Family " + (st.circleTag || "–") + " · listening on " + (st.listening || "–") + " · mDNS " + (st.mdns || "–") + " · sweeperd " + (st.version || "")])));
      if (st.removed) body.append(h("p", { class: "error", text: "This device was removed from its family. " + (typeof st.removed === "object" ? Object.values(st.removed).join(" · ") : String(st.removed)) }));
    }
    const peers = [...S.peers.values()].filter((p) => !p.otherCircle).sort((a, b) => (a.name || "").localeCompare(b.name || ""));
    body.append(h("h3", { text: "Devices" }), peers.length ? h("ul", { class: "list" }, peers.map(peerRow)) : h("p", { class: "note", text: "No other device yet. On this computer, `sweeper invite` makes a code another device joins with." }));
    const here = [...S.presence.values()];
    if (here.length) body.append(h("h3", { text: "Playing now" }), h("ul", { class: "list" }, here.map((p) => person(p.peer, p.name, p.name + (p.own ? " (you)" : ""), ["looking at " + short(p.game) + (typeof p.x === "number" ? " · " + p.x + "," + p.y : "")],
      p.game !== S.gid ? h("button", { type: "button", class: "small", text: "Open", onclick: () => { closePanel(); openGame(p.game); } }) : null))));
    const ci = S.circle;
    if (ci && (ci.members || []).length) body.append(h("h3", { text: "Family members" }), h("ul", { class: "list" }, ci.members.map((m) => person(m.peerID, m.name, m.name + (m.thisDevice ? " (this device)" : ""),
      [[m.role, m.thisDevice ? "" : m.linked ? "linked" : "not linked", typeof m.lastSeenSecondsAgo === "number" ? "seen " + ago(m.lastSeenSecondsAgo) : "", m.admittedByName ? "admitted by " + m.admittedByName : "", m.invitationsOffByName ? "invitations off (" + m.invitationsOffByName + ")" : ""].filter(Boolean).join(" · ")]))));
    body.append(h("p", { class: "note", text: "Inviting, joining and removing devices are done on the computer itself (sweeper invite, join, circle)." }));
  }
  function peerRow(p) {
    const since = (s) => new Date(Date.now() - s * 1000 - (performance.now() - p.at)).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });
    const state = {
      connected: "connected" + (typeof p.roundTripMs === "number" ? " · " + Math.round(p.roundTripMs) + " ms" : ""), connecting: "connecting…", discovered: "seen on the network",
      offline: typeof p.lastHeardSecondsAgo === "number" ? "offline since " + since(p.lastHeardSecondsAgo) : "offline (never reached)",
    }[p.state] || p.state || "unknown";
    const sync = !p.sync ? "sync: not compared yet" : p.sync.inSync ? "in sync ✓" : "syncing: they lack " + p.sync.theyLack + ", we lack " + p.sync.weLack;
    return person(p.id, p.name || short(p.id), null, [h("small", null, h("span", { class: "dot " + p.state }), " " + state),
      sync + ((p.via || []).length ? " · via " + p.via.join(", ") : "") + ((p.addresses || []).length ? " · " + p.addresses[0] : ""),
      typeof p.protocolVersion === "number" && p.protocolVersion < 3 ? "an old version: cursors do not reach it" : ""]);
  }

  // ----- the menu and questions -----

  function ask(text, ok) {
    return new Promise((resolve) => {
      $("confirm-text").textContent = text;
      $("confirm-yes").textContent = ok || "OK";
      $("confirm-layer").hidden = false;
      S.confirm = (v) => { $("confirm-layer").hidden = true; S.confirm = null; resolve(v); };
      $("confirm-yes").focus({ preventScroll: true });
    });
  }
  on("confirm-yes", () => S.confirm && S.confirm(true));
  on("confirm-no", () => S.confirm && S.confirm(false));
  on("confirm-layer", (e) => e.target.id === "confirm-layer" && S.confirm && S.confirm(false));

  async function askHint() {
    if (!mayMove()) return;
    const g = S.game;
    if (!g.assisted && !await ask("Ask for a hint? The game will be marked assisted for everyone, and it will not count for the scores.", "Hint")) return say("Cancelled.");
    try {
      const r = await rpc("hint", { game: g.id });
      if (typeof r.x === "number" && typeof r.y === "number") { board.flashHint(r.x, r.y); aim(r.x, r.y); board.reveal(r.x, r.y); }
      say(r.message || "No cell can be proven safe.", "info", 6000);
    } catch (e) { failed(e); }
  }
  async function togglePeek() {
    const g = S.game;
    if (S.peek) { S.peek = null; board.setPeek(null); return say("Mines hidden (the game stays assisted)."); }
    if (!mayMove() || !await ask("Show the mines? The game will be marked assisted for everyone.", "Show the mines")) return;
    try {
      const r = await rpc("show", { game: g.id, cheat: true });
      if (Array.isArray(r.mineLayout)) board.setPeek(S.peek = r.mineLayout);
      g.assisted = true;
      renderInfo();
    } catch (e) { failed(e); }
  }
  async function resign() {
    const g = S.game;
    if (!g || !g.race || racer()) return say("Giving up is for your own board in a race.");
    if (g.status !== "playing") return say("Your board is over already.");
    if (!await ask("Give up your board in this race? The others race on.", "Give up")) return say("Cancelled.");
    try { showGame(await rpc("resign", { game: g.id }), { keep: true }); } catch (e) { failed(e); }
  }
  async function archive() {
    const g = S.game, on = !g.archived;
    try {
      const r = await rpc("archive", { game: g.id, archived: on });
      if (r.archived) g.archived = true; else delete g.archived;
      renderInfo();
      say(on ? "Archived: it leaves every device's list (Games › Archived still shows it)." : "Listed again.");
    } catch (e) { failed(e); }
  }
  async function addPlayers() {
    const g = S.game, extra = clear($("confirm-extra"));
    try {
      const others = ((await rpc("circle")).members || []).filter((m) => !m.thisDevice && !(g.chosenPlayers || []).includes(m.name));
      if (!others.length) return say("Everyone in the family plays this game already.");
      for (const m of others) extra.append(h("label", { class: "check" }, h("input", { type: "checkbox", value: m.peerID }), " ", badge(m.peerID, m.name), " " + m.name));
      const ok = await ask("Let more players move in this game (players are never removed):", "Add");
      const picked = [...extra.querySelectorAll("input:checked")].map((i) => i.value);
      clear(extra);
      if (!ok || !picked.length) return;
      const r = await rpc("add-players", { game: g.id, players: picked });
      g.chosenPlayers = r.chosenPlayers;
      say("Added " + plural(r.added, "player") + ".");
      renderGame();
    } catch (e) { clear(extra); failed(e); }
  }

  function openMenu() {
    const g = S.game, m = clear($("menu")), mine = g.race && !racer() && g.status === "playing";
    const items = [["Replay the game", startReplay, "r"], [g.ending, "Results", () => showEnding(true)],
      [S.peek || canMove(), S.peek ? "Hide the mines" : "Show the mines…", togglePeek], [mine, "Give up my board…", resign, "G"],
      [g.archived ? "List it again" : "Archive the game", archive],
      [g.chosenPlayers && S.me && g.chosenPlayers[0] === S.me.name && !g.race, "Add players…", addPlayers],
      [S.showOthers ? "Hide others' cursors" : "Show others' cursors", () => { S.showOthers = !S.showOthers; renderOthers(); }],
      ["New game of this size", sameSize], ["Keys and gestures", () => openPanel("help"), "?"]];
    for (const it of items) {
      if (typeof it[0] !== "string" && !it.shift()) continue;
      const [label, fn, key] = it;
      m.append(h("button", { type: "button", role: "menuitem", onclick: () => { closeMenu(); fn(); } }, h("span", { text: label }), key ? h("kbd", { text: key }) : null));
    }
    m.hidden = false;
    $("btn-more").setAttribute("aria-expanded", "true");
    if (!matchMedia("(pointer: coarse)").matches) m.firstChild.focus({ preventScroll: true });
  }
  function closeMenu() { $("menu").hidden = true; $("btn-more").setAttribute("aria-expanded", "false"); }

  function setMode(mode) { S.mode = mode; renderToolbar(); }
  function setPointMode(on) {
    S.pointMode = on;
    $("btn-point").setAttribute("aria-pressed", String(on));
    document.body.classList.toggle("point-mode", on);
    if (on) say("Tap the cell to point at: it flashes on every screen.", "info", 5000);
  }

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
    game: () => S.gid, width: () => (S.game ? S.game.width : 0), height: () => (S.game ? S.game.height : 0), status: () => (S.game ? S.game.status : null),
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
})();
