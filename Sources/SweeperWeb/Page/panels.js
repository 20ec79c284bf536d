// The panels (games, new game, scores, board of the day, family devices,
// help), the More menu and the questions it asks, and the tap modes.
import { $, S, ago, aim, all, badge, board, clear, dur, failed, forget, h, nameBadge, num, on, pct, plural, recordTime, rpc, say, sendCursor, setPresence, short, size, sizeName, when } from "./app.js";
import { bar, canMove, dailyTable, dl, mayMove, newGame, noteDaily, openGame, racer, renderGame, renderInfo, renderOthers, renderToolbar, sameSize, showEnding, showGame, startReplay } from "./play.js";

// ----- panels -----

const PANELS = ["games", "new", "scores", "daily", "peers", "help"];
export function openPanel(name) {
  closeMenu();
  for (const p of PANELS) $("sheet-" + p).hidden = p !== name;
  $("scrim").hidden = false;
  S.panel = name;
  for (const b of all("#nav button")) b.setAttribute("aria-current", String(b.dataset.open === name));
  refreshPanel();
  sendCursor();
  if (!matchMedia("(pointer: coarse)").matches) $("sheet-" + name).querySelector(".close").focus({ preventScroll: true });
}
export function closePanel() {
  if (!S.panel) return;
  $("sheet-" + S.panel).hidden = $("scrim").hidden = true;
  S.panel = null;
  for (const b of all("#nav button")) b.setAttribute("aria-current", "false");
  sendCursor();
}
export function refreshPanel() {
  ({ games: loadGames, new: prepareNew, scores: loadScores, daily: loadDaily, peers: loadPeers }[S.panel] || (() => {}))();
}

// Games

export async function loadGames() {
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
export function renderGamesSoon() { if (!gamesTimer) gamesTimer = setTimeout(() => { gamesTimer = null; renderGames(); }, 250); }
export function renderGames() {
  const f = S.filter, ul = clear($("game-list"));
  for (const t of all("[data-filter]")) t.setAttribute("aria-selected", String(t.dataset.filter === f));
  const list = f === "available" ? S.available || [] : f === "archived" ? S.archived || []
    : S.games.filter((g) => !g.archived && (f === "playing") === (g.status === "playing"));
  if (!list.length) ul.append(h("li", { class: "empty-note" }, f === "available" ? "No games on the other devices that this one lacks." : f === "playing" ? ["No game in progress. ", h("button", { type: "button", class: "link", text: "Start one", onclick: () => openPanel("new") })] : "Nothing here yet."));
  for (const g of list.slice(0, 300)) ul.append(f === "available" ? availableRow(g) : gameRow(g));
}
function gameRow(g) {
  const who = g.chosenPlayerNames || g.playerNames || [];
  const tags = [[g.race, "Race", "race"], [S.dailyIds.has(g.game), "Daily", "daily"], [g.assisted, "Assisted", "warn"], [g.privateGame, "Private"], [g.watching, "Watching", "warn"], [g.onlyHere, "Only here"]];
  return h("li", null, h("button", { type: "button", class: "game-row" + (g.game === S.gid ? " current" : ""), dataset: { game: g.game }, onclick: () => { closePanel(); openGame(g.game); } },
    h("span", { class: "mini-face", dataset: { face: g.status === "won" ? "cool" : g.status === "lost" ? "dead" : "smile" }, "aria-hidden": "true" }),
    h("span", { class: "gr-main" },
      h("span", { class: "gr-title" }, h("b", { text: sizeName(g.width, g.height, g.mines) }), " " + size(g.width, g.height, g.mines), tags.filter((t) => t[0]).map((t) => h("span", { class: "tag " + (t[2] || ""), text: t[1] }))),
      h("span", { class: "gr-sub" }, bar(g.progress), h("span", { text: g.status + " " + pct(g.progress) + " · " + dur(g.elapsedMillis / 1000) + " · " + when(g.createdAt) })),
      who.length ? h("span", { class: "gr-who" }, who.slice(0, 8).map((n) => h("span", { class: "who" }, nameBadge(n), n)), g.chosenPlayerNames ? h("small", { text: "(chosen players)" }) : null) : null),
    h("span", { class: "chev", "aria-hidden": "true", text: "›" })));
}
function availableRow(a) {
  const btn = h("button", { type: "button", class: "primary small", text: a.forgotten ? "Bring back" : "Follow", onclick: async () => {
    btn.disabled = true;
    try {
      const r = await rpc("follow", { game: a.game });
      closePanel();
      if (r.held) return openGame(a.game);
      // It comes from the peers that have it: opened when it arrives.
      S.awaited = a.game;
      say("Fetching the game from the other devices…", "info", 8000);
    } catch (e) { failed(e); btn.disabled = false; }
  } });
  const bits = [a.width ? size(a.width, a.height, a.mines) : "", a.noGuess ? "no-guess" : "", a.status ? a.status + (typeof a.progress === "number" ? " " + pct(a.progress) : "") : "", plural(a.ops, "move")];
  return h("li", { class: "avail" }, h("span", { class: "gr-main" },
    h("span", { class: "gr-title" }, h("b", { text: a.width ? sizeName(a.width, a.height, a.mines) : "Game " + short(a.game) }), " " + bits.filter(Boolean).join(" · "), a.forgotten ? h("span", { class: "tag", text: "Forgotten here" }) : null),
    h("span", { class: "gr-sub", text: "Held by " + (a.heldByNames || []).join(", ") + (a.playerNames ? " · players " + a.playerNames.join(", ") : "") + (a.createdAt ? " · " + when(a.createdAt) : "") })), btn);
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
    for (const m of c.members || []) if (m.peer && m.name) S.names.set(m.peer, m.name);
    forget();
    if (!others.length) box.append(h("p", { class: "note", text: "Nobody else in the family yet (sweeper invite adds a device)." }));
    for (const m of others) box.append(h("label", { class: "check" }, h("input", { type: "checkbox", value: m.peer }), " ", badge(m.peer, m.name), " " + m.name + (m.linked ? "" : " (offline)")));
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

export async function loadScores() {
  const body = $("scores-body"), player = $("score-player").value;
  try {
    const r = await rpc("scores", player ? { player } : {}), sel = $("score-player");
    const names = new Set([...S.names.values(), S.me && S.me.name]), have = new Set([...sel.options].map((o) => o.value));
    for (const s of r.scores || []) for (const n of s.playerNames || []) names.add(n);
    for (const n of [...names].sort()) if (n && !have.has(n)) sel.append(h("option", { value: n, text: n }));
    renderScores(r, clear(body));
  } catch (e) { clear(body).append(h("p", { class: "error", text: e.message })); }
}
function scoreLine(s, label, extra) {
  return h("li", null, h("button", { type: "button", class: "score-row", onclick: () => { closePanel(); openGame(s.game); } },
    label ? h("span", { class: "tag", text: size(s.width, s.height, s.mines) }) : null,
    h("b", { class: "time", text: recordTime(s) }), h("span", { text: (s.playerNames || []).join(", ") }),
    h("small", { text: [when(s.startedAt), typeof s.threeBVPerSecond === "number" ? num(s.threeBVPerSecond, 2) + " 3BV/s" : "", s.noGuess ? "no-guess" : "", extra].filter(Boolean).join(" · ") })));
}
function renderScores(r, body) {
  const p = r.player;
  if (p) body.append(h("h3", { text: p.name }), dl([["Played", p.played], ["Won", p.won], ["Lost", p.lost], ["Mines tripped", p.minesTripped], ["Best 3BV/s", num(p.bestThreeBVPerSecond, 2)]]),
    (p.records || []).length ? [h("h3", { text: "Their best times" }), h("ul", { class: "list" }, p.records.map((s) => scoreLine(s, true)))] : null);
  const classes = r.classes || [];
  if (!classes.length) body.append(h("p", { class: "note", text: "No ranked wins yet. A win counts when nobody asked for a hint or looked at the mines, and its seed was not chosen." }));
  for (const c of classes) body.append(h("h3", { text: c.name || size(c.width, c.height, c.mines) }), h("ol", { class: "list" }, (c.best || []).map((s) => scoreLine(s))));
  for (const [title, list, note] of [["Wins with help", r.assistedWins, "Hints or a look at the mines: not ranked."], ["Practice wins", r.practice, "Games whose seed was chosen: not ranked."]]) {
    if ((list || []).length) body.append(h("details", null, h("summary", { text: title + " (" + list.length + ")" }), h("p", { class: "note", text: note }),
      h("ul", { class: "list" }, list.map((a) => {
        const help = (a.hints || []).map((x) => x.name + " " + plural(x.hintCount, "hint")).concat((a.peeks || []).map((x) => x.name + " looked at the mines"));
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
    const mine = d && S.me && (d.results || []).find((x) => x.peer === S.me.peer);
    $("daily-play").textContent = !mine ? "Play today's board" : mine.status === "playing" ? "Go on with today's board" : "See today's board";
  } catch (e) { clear(body).append(h("p", { class: "error", text: e.message })); }
}
on("daily-play", async () => { try { const g = await rpc("daily"); closePanel(); showGame(g); } catch (e) { failed(e); } });

// Family devices

export function setPeers(list) {
  S.peers.clear();
  for (const p of list || []) if (p && p.peer) { S.peers.set(p.peer, Object.assign({ at: performance.now() }, p)); if (p.name) S.names.set(p.peer, p.name); }
  forget();
  renderPeerCount();
}
export function renderPeerCount() {
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
export function renderPeers() {
  const body = clear($("peers-body")), st = S.status;
  if (st) {
    body.append(h("ul", { class: "list me-card" }, person(st.peer, st.name, st.name + " (this device)", ["Family " + (st.circleTag || "–") + " · listening on " + (st.listening || "–") + " · mDNS " + (st.mdns || "–") + " · sweeperd " + (st.version || "")])));
    if (st.removedNote) body.append(h("p", { class: "error", text: "This device was removed from its family. " + String(st.removedNote) }));
  }
  const peers = [...S.peers.values()].filter((p) => !p.otherCircle).sort((a, b) => (a.name || "").localeCompare(b.name || ""));
  body.append(h("h3", { text: "Devices" }), peers.length ? h("ul", { class: "list" }, peers.map(peerRow)) : h("p", { class: "note", text: "No other device yet. On this computer, `sweeper invite` makes a code another device joins with." }));
  const here = [...S.presence.values()];
  if (here.length) body.append(h("h3", { text: "Playing now" }), h("ul", { class: "list" }, here.map((p) => person(p.peer, p.name, p.name + (p.own ? " (you)" : ""), ["looking at " + short(p.game) + (typeof p.x === "number" ? " · " + p.x + "," + p.y : "")],
    p.game !== S.gid ? h("button", { type: "button", class: "small", text: "Open", onclick: () => { closePanel(); openGame(p.game); } }) : null))));
  const ci = S.circle;
  if (ci && (ci.members || []).length) body.append(h("h3", { text: "Family members" }), h("ul", { class: "list" }, ci.members.map((m) => person(m.peer, m.name, m.name + (m.thisDevice ? " (this device)" : ""),
    [[m.role, m.thisDevice ? "" : m.linked ? "linked" : "not linked", typeof m.lastSeenAt === "number" ? "seen " + ago((Date.now() - m.lastSeenAt) / 1000) : "", m.admittedByName ? "admitted by " + m.admittedByName : "", m.invitationsOffByName ? "invitations off (" + m.invitationsOffByName + ")" : ""].filter(Boolean).join(" · ")]))));
  body.append(h("p", { class: "note", text: "Inviting, joining and removing devices are done on the computer itself (sweeper invite, join, circle)." }));
}
function peerRow(p) {
  const since = (t) => new Date(t).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });
  const state = {
    connected: "connected" + (typeof p.roundTripMillis === "number" ? " · " + p.roundTripMillis + " ms" : ""), connecting: "connecting…", discovered: "seen on the network",
    offline: typeof p.lastHeardAt === "number" ? "offline since " + since(p.lastHeardAt) : "offline (never reached)",
  }[p.state] || p.state || "unknown";
  const sync = !p.sync ? "sync: not compared yet" : p.sync.inSync ? "in sync ✓" : "syncing: they lack " + p.sync.theyLack + ", we lack " + p.sync.weLack;
  return person(p.peer, p.name || short(p.peer), null, [h("small", null, h("span", { class: "dot " + p.state }), " " + state),
    sync + ((p.via || []).length ? " · via " + p.via.join(", ") : "") + ((p.addresses || []).length ? " · " + p.addresses[0] : ""),
    p.versionNote || ""]);
}

// ----- the menu and questions -----

export function ask(text, ok) {
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

export async function askHint() {
  if (!mayMove()) return;
  const g = S.game;
  if (!g.assisted && !await ask("Ask for a hint? The game will be marked assisted for everyone, and it will not count for the scores.", "Hint")) return say("Cancelled.");
  try {
    const r = await rpc("hint", { game: g.game });
    if (typeof r.x === "number" && typeof r.y === "number") { board.flashHint(r.x, r.y); aim(r.x, r.y); board.reveal(r.x, r.y); }
    say(r.message || "No cell can be proven safe.", "info", 6000);
  } catch (e) { failed(e); }
}
export async function togglePeek() {
  const g = S.game;
  if (S.peek) { S.peek = null; board.setPeek(null); return say("Mines hidden (the game stays assisted)."); }
  if (!mayMove() || !await ask("Show the mines? The game will be marked assisted for everyone.", "Show the mines")) return;
  try {
    const r = await rpc("show", { game: g.game, peek: true });
    if (Array.isArray(r.mineLayout)) board.setPeek(S.peek = r.mineLayout);
    g.assisted = true;
    renderInfo();
  } catch (e) { failed(e); }
}
export async function resign() {
  const g = S.game;
  if (!g || !g.race || racer()) return say("Giving up is for your own board in a race.");
  if (g.status !== "playing") return say("Your board is over already.");
  if (!await ask("Give up your board in this race? The others race on.", "Give up")) return say("Cancelled.");
  try { showGame(await rpc("resign", { game: g.game }), { keep: true }); } catch (e) { failed(e); }
}
async function archive() {
  const g = S.game, on = !g.archived;
  try {
    const r = await rpc("archive", { game: g.game, archived: on });
    if (r.archived) g.archived = true; else delete g.archived;
    renderInfo();
    say(on ? "Archived: it leaves every device's list (Games › Archived still shows it)." : "Listed again.");
  } catch (e) { failed(e); }
}
async function addPlayers() {
  const g = S.game, extra = clear($("confirm-extra"));
  try {
    const others = ((await rpc("circle")).members || []).filter((m) => !m.thisDevice && !(g.chosenPlayerNames || []).includes(m.name));
    if (!others.length) return say("Everyone in the family plays this game already.");
    for (const m of others) extra.append(h("label", { class: "check" }, h("input", { type: "checkbox", value: m.peer }), " ", badge(m.peer, m.name), " " + m.name));
    const ok = await ask("Let more players move in this game (players are never removed):", "Add");
    const picked = [...extra.querySelectorAll("input:checked")].map((i) => i.value);
    clear(extra);
    if (!ok || !picked.length) return;
    const r = await rpc("add-players", { game: g.game, players: picked });
    g.chosenPlayerNames = r.chosenPlayerNames;
    say("Added " + plural(r.added, "player") + ".");
    renderGame();
  } catch (e) { clear(extra); failed(e); }
}

export function openMenu() {
  const g = S.game, m = clear($("menu")), mine = g.race && !racer() && g.status === "playing";
  const items = [["Replay the game", startReplay, "r"], [g.ending, "Results", () => showEnding(true)],
    [S.peek || canMove(), S.peek ? "Hide the mines" : "Show the mines…", togglePeek], [mine, "Give up my board…", resign, "G"],
    [g.archived ? "List it again" : "Archive the game", archive],
    [g.chosenPlayerNames && S.me && g.chosenPlayerNames[0] === S.me.name && !g.race, "Add players…", addPlayers],
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
export function closeMenu() { $("menu").hidden = true; $("btn-more").setAttribute("aria-expanded", "false"); }

export function setMode(mode) { S.mode = mode; renderToolbar(); }
export function setPointMode(on) {
  S.pointMode = on;
  $("btn-point").setAttribute("aria-pressed", String(on));
  document.body.classList.toggle("point-mode", on);
  if (on) say("Tap the cell to point at: it flashes on every screen.", "info", 5000);
}
