#!/usr/bin/env python3
"""Hosted players: eight people playing one game from their phones, hosted by one daemon.

    sudo /usr/bin/python3 Scripts/bench_hosted.py --bindir Benchmarks/.build/release --lab [--quick]
    /usr/bin/python3 Scripts/bench_hosted.py --bindir Benchmarks/.build/release   # loopback, no root

One daemon hosts eight players (`sweeper player add P1` … `P8`): with `--lab`
in lab host h1 (Scripts/netns-lab.sh), its board served to that network over
TLS (`sweeper web --lan`), every phone in h2, paired by a code of `player
pair`; else all on loopback, logged in by one-time addresses. Each player's
phone is a WebSocket client (a request socket and a subscribed one, as the
page opens) flagging and unflagging mines of a 50x50 game five times a second
for 60 s (10 s with --quick), while Chromium, phone-sized with touch, logged
in as P1, taps covered safe cells, and a second Chromium, logged in as P2,
shows the game. It prints `result: hosted.KEY VALUE` lines: a tap to P2's
frame that draws it (tap_to_draw_*), the moves and events sent, answered and
lost (moves_*, events_*), the host daemon's CPU (/proc/PID/stat) and memory
(rss_*, hwm_kb); render() below says what each is, for Scripts/bench.py.

Every process started is stopped by its pid; traffic stays on loopback and
on the lab's own 198.18.0.0/24.
"""

import argparse
import base64
import http.client
import json
import os
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_web import Daemon, Handle, percentile, result, rss_kb  # noqa: E402

PLAYERS, RATE, WIDTH, HEIGHT, MINES, SEED = 8, 5, 50, 50, 500, 31
CELLS_EACH = 12  # mines each player flags and unflags in turn
MOVE_KINDS = {"reveal", "chord", "flag", "question", "unmark"}
TLS = ssl.create_default_context()
TLS.check_hostname, TLS.verify_mode = False, ssl.CERT_NONE  # the daemon's own certificate, as a phone accepts it


def log(message):
    print(f"bench-hosted: {message}", file=sys.stderr, flush=True)


def login(url):
    """Opens a login or pairing address once, as a browser does: the board's origin and the cookie it set."""
    u = urllib.parse.urlsplit(url)
    conn = (http.client.HTTPSConnection(u.hostname, u.port, context=TLS, timeout=30) if u.scheme == "https"
            else http.client.HTTPConnection(u.hostname, u.port, timeout=30))
    conn.request("GET", u.path + ("?" + u.query if u.query else ""))
    r = conn.getresponse()
    r.read()
    cookie = r.getheader("Set-Cookie")
    conn.close()
    if r.status != 303 or not cookie:
        raise RuntimeError(f"{u.scheme}://{u.netloc}{u.path}: {r.status}, no session")
    return f"{u.scheme}://{u.netloc}", cookie.split(";", 1)[0]


class WebSocket:
    """The board's /ws, as a page opens it: its Origin, its cookie; text messages only. Non-blocking reads."""

    def __init__(self, origin, cookie):
        u = urllib.parse.urlsplit(origin)
        raw = socket.create_connection((u.hostname, u.port), timeout=30)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = TLS.wrap_socket(raw) if u.scheme == "https" else raw
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n"
                           f"Cookie: {cookie}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("the WebSocket closed in its handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise RuntimeError(f"WebSocket refused: {status.decode()}")
        self.sock.setblocking(False)
        self.parts, self.closed = [], False

    def fileno(self):
        return self.sock.fileno()

    def _write(self, data):
        while data:
            try:
                n = self.sock.send(data)
                data = data[n:]
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                select.select([], [self.sock], [], 1)

    def send(self, text, opcode=1):
        payload = text.encode() if isinstance(text, str) else text
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
        self._write(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def messages(self):
        """The text messages that arrived (reads what is there, never waits)."""
        while True:
            try:
                chunk = self.sock.recv(262144)
                if not chunk:
                    self.closed = True
                    break
                self.buf += chunk
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                break
        out = []
        while len(self.buf) >= 2:
            b0, b1 = self.buf[0], self.buf[1]
            n, at = b1 & 0x7F, 2
            if n >= 126:
                at = 4 if n == 126 else 10
                if len(self.buf) < at:
                    break
                n = int.from_bytes(self.buf[2:at], "big")
            if len(self.buf) < at + n:
                break
            payload, self.buf = self.buf[at:at + n], self.buf[at + n:]
            opcode = b0 & 0x0F
            if opcode == 9:
                self.send(payload, opcode=10)
            elif opcode == 8:
                self.closed = True
            elif opcode in (0, 1):
                self.parts.append(payload)
                if b0 & 0x80:
                    out.append(b"".join(self.parts).decode())
                    self.parts = []
        return out


class Player:
    """A hosted player's phone: a request socket and a subscribed one; its moves and what it received."""

    def __init__(self, name, peer, url, game, cells):
        self.name, self.peer, self.game, self.cells = name, peer, game, cells
        origin, cookie = login(url)
        self.req, self.ev = WebSocket(origin, cookie), WebSocket(origin, cookie)
        self.next_id, self.moves = 1, 0
        self.answers, self.answered, self.refused = {}, {}, []
        self.events, self.dropped, self.subscribed = [], 0, False
        self.ev.send(json.dumps({"id": "events", "command": "subscribe", "game": game}))

    def request(self, command, **fields):
        i = self.next_id
        self.next_id += 1
        self.req.send(json.dumps({"id": i, "command": command, **fields}))
        return i

    def move(self):
        """The next flag: each of its mines flagged in turn, then unflagged in turn."""
        j = self.moves
        self.moves += 1
        x, y = self.cells[j % len(self.cells)]
        return self.request("flag", game=self.game, x=x, y=y, mark="flag" if j // len(self.cells) % 2 == 0 else "none"), x, y

    def read(self, now):
        for text in self.req.messages():
            a = json.loads(text)
            i = a.get("id")
            self.answers[i], self.answered[i] = a, now
            if not a.get("ok"):
                self.refused.append(a.get("error"))
        for text in self.ev.messages():
            e = json.loads(text)
            if e.get("id") == "events":
                self.subscribed = bool(e.get("ok"))
            elif e.get("event") == "cells" and e.get("game") == self.game:
                self.events.append((now, e.get("byPeer"), e.get("x"), e.get("y"), e.get("cells")))
            elif e.get("event") == "events-dropped":
                self.dropped += e.get("dropped", 0)


class Load(threading.Thread):
    """Every player's moves at RATE a second, staggered, and everything they receive: one thread, one select."""

    def __init__(self, players):
        super().__init__(daemon=True)
        self.players, self.start_at, self.stop_at, self.sends, self.error = players, None, None, [], None

    def pump(self, timeout):
        socks = [s for p in self.players for s in (p.req, p.ev) if not s.closed]
        ready = [s for s in socks if isinstance(s.sock, ssl.SSLSocket) and s.sock.pending()]
        if not ready:
            ready, _, _ = select.select(socks, [], [], max(0.0, timeout))
        now = time.monotonic()
        for p in self.players:
            if p.req in ready or p.ev in ready:
                p.read(now)

    def run(self):
        try:
            period = 1.0 / RATE
            due = [self.start_at + k * period / len(self.players) for k in range(len(self.players))]
            while True:
                k = min(range(len(due)), key=due.__getitem__)
                if due[k] >= self.stop_at:
                    break
                now = time.monotonic()
                if now < due[k]:
                    self.pump(due[k] - now)
                    continue
                t = time.monotonic()
                self.sends.append((self.players[k], *self.players[k].move(), t))
                due[k] += period
            # The last answers and events, read as they come (not stamped when the taps end).
            self.drain(15, lambda: all(len(p.answers) == p.next_id - 1 for p in self.players))
            self.drain(0.5, lambda: False)
        except Exception as e:  # reported by the driver
            self.error = e

    def drain(self, seconds, done):
        end = time.monotonic() + seconds
        while time.monotonic() < end and not done():
            self.pump(0.05)


def phone(root, tls):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              "--disable-background-networking", "--window-size=390,844", f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-', dir=root)}"):
        o.add_argument(a)
    if tls:
        o.add_argument("--ignore-certificate-errors")  # the daemon's own certificate, which a player accepts by its fingerprint
    o.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def open_as(d, url, game):
    """Logs the browser in by a pairing or login address, then shows `game`."""
    d.get(url)
    u = urllib.parse.urlsplit(url)
    d.get(f"{u.scheme}://{u.netloc}/?game={game}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if d.execute_script("return window.sweeper && window.sweeper.ready ? window.sweeper.game : null") == game:
            return
        time.sleep(0.05)
    raise RuntimeError(f"the page at {u.netloc} did not show {game}")


# In the watcher's page: a tap to wait for (its index k and cell), seen in the first frame
# whose board has the cell; returns the taps seen since the last call, as [k, when].
WATCH = """const [k, x, y] = arguments, W = window.benchWants || (window.benchWants = new Map());
if (k >= 0) { const w = { x, y, at: 0 }; W.set(k, w);
  const look = () => { const rows = window.sweeper.board;
    if (rows[y] && rows[y][x] !== "#") w.at = performance.timeOrigin + performance.now(); else requestAnimationFrame(look); };
  requestAnimationFrame(look); }
const seen = []; for (const [j, w] of W) if (w.at) { seen.push([j, w.at]); W.delete(j); }
return [seen, W.size];"""


def taps(tapper, watcher, mines, until):
    """Taps a covered safe cell in the tapper's page every 1/RATE s until `until`; the draw time of each in the watcher's."""
    look = "const r = document.getElementById('board').getBoundingClientRect(); const s = window.sweeper;" \
           "return [s.lastInputAt, s.board, [r.left, r.top, r.width, r.height]];"
    last = tapper.execute_script(look)[0]
    tapped, drawn, k = {}, {}, 0
    while True:
        begun = time.monotonic()
        # The page as it is now (where the board is: the players' list above it grows), and the last tap's time.
        at, rows, r = tapper.execute_script(look)
        if at and at != last and k:
            tapped[k - 1] = last = at
        covered = [(x, y) for y in range(HEIGHT) for x in range(WIDTH) if rows[y][x] == "#" and (x, y) not in mines]
        if not covered or begun >= until:
            break
        x, y = covered[(k * 7919) % len(covered)]
        drawn.update(watcher.execute_script(WATCH, k, x, y)[0])
        px, py = r[0] + (x + 0.5) * r[2] / WIDTH, r[1] + (y + 0.5) * r[3] / HEIGHT
        tapper.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": px, "y": py}]})
        tapper.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        k += 1
        time.sleep(max(0.0, begun + 1.0 / RATE - time.monotonic()))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        seen, waiting = watcher.execute_script(WATCH, -1, 0, 0)
        drawn.update(seen)
        if not waiting:
            break
        time.sleep(0.05)
    drawn = {int(j): t for j, t in drawn.items()}
    latencies = [drawn[j] - t for j, t in tapped.items() if j in drawn and drawn[j] >= t]
    missed = k - len(latencies)
    if missed:
        log(f"{missed} of {k} taps not drawn in the other browser within 5 s (or not taken by the page)")
    return latencies, missed


def phones(config_path):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stopped: the browsers quit all the same
    cfg = json.load(open(config_path))
    game, mines = cfg["game"], {tuple(c) for c in cfg["mines"]}
    # A code or login address for each phone as it comes to pair, as a host hands them out: the
    # daemon keeps four pairing codes open at once, so eight made in a row leave the first four dead.
    host = Handle(cfg["bindir"], cfg["socket"])
    address = lambda name: host.cli("player", "pair", name)["url"]  # noqa: E731
    players = [Player(p["name"], p["peer"], address(p["name"]), game, [tuple(c) for c in p["cells"]]) for p in cfg["players"]]
    load = Load(players)
    for p in players:
        p.request("status")
    load.drain(20, lambda: all(p.subscribed and len(p.answers) == 1 for p in players))
    for p in (p for p in players if not p.subscribed or p.answers.get(1, {}).get("result", {}).get("peer") != p.peer):
        raise RuntimeError(f"{p.name}'s sockets: not subscribed, or playing as another: {p.answers.get(1)}")
    print("connected", flush=True)
    sys.stdin.readline()
    root = tempfile.mkdtemp(prefix="sweeper-bench-hosted-phones-")
    tapper = watcher = None
    try:
        tapper, watcher = phone(root, cfg["tls"]), phone(root, cfg["tls"])
        open_as(tapper, address(players[0].name), game)
        open_as(watcher, address(players[1].name), game)
        load.drain(2, lambda: False)
        print("browsers", flush=True)
        sys.stdin.readline()
        load.start_at = time.monotonic() + 0.2
        load.stop_at = load.start_at + cfg["seconds"]
        print("start", flush=True)
        load.start()
        time.sleep(1.2)  # every player has moved: the page's list of players, above the board, is whole
        latencies, missed = taps(tapper, watcher, mines, load.stop_at)
        load.join()
        print("end", flush=True)
        if load.error:
            raise load.error
        asker = players[0]
        replay_id = asker.request("replay", game=game)
        load.drain(30, lambda: replay_id in asker.answers)
        load.drain(2, lambda: False)  # the last events
    finally:
        for d in filter(None, (tapper, watcher)):
            d.quit()
        shutil.rmtree(root, ignore_errors=True)
    moves = [m for m in asker.answers[replay_id]["result"]["moves"] if m.get("kind") in MOVE_KINDS]
    print("report " + json.dumps(check(players, load, moves, latencies, missed)), flush=True)


def check(players, load, moves, latencies, missed):
    """What was sent, answered, refused and delivered, and how fast."""
    by_peer = {p.peer: p for p in players}
    sent_at = {}  # (peer, x, y) → the send times of its moves, in order
    for p, i, x, y, t in load.sends:
        a = p.answers.get(i)
        if a and a.get("ok"):
            sent_at.setdefault((p.peer, x, y), []).append(t)
    expected = {}
    for m in moves:
        key = (m.get("authorPeer"), m.get("x"), m.get("y"))
        expected[key] = expected.get(key, 0) + 1
    missing, extra, to_event = 0, 0, []
    for p in players:
        got = {}
        for now, by, x, y, cells in p.events:
            if x is None and cells and len(cells) == 1:
                x, y = cells[0]["x"], cells[0]["y"]
            key = (by, x, y)
            n = got.get(key, 0)
            got[key] = n + 1
            times = sent_at.get(key)
            if by != p.peer and by in by_peer and times and n < len(times):
                to_event.append((now - times[n]) * 1000)
        missing += sum(max(0, n - got.get(k, 0)) for k, n in expected.items())
        extra += sum(max(0, n - expected.get(k, 0)) for k, n in got.items())
    refused = [e for p in players for e in p.refused]
    load_moves = sum(1 for m in moves if m.get("authorPeer") in by_peer and m.get("kind") in ("flag", "unmark"))
    return {"sent": len(load.sends), "ok": sum(1 for p, i, *_ in load.sends if p.answers.get(i, {}).get("ok")),
            "refused": len(refused), "refusals": refused[:5], "unanswered": sum(1 for p, i, *_ in load.sends if i not in p.answers),
            "replay_moves": len(moves), "replay_load_moves": load_moves, "expected": len(moves) * len(players),
            "missing": missing, "extra": extra, "dropped": sum(p.dropped for p in players),
            "answer_ms": [(p.answered[i] - t) * 1000 for p, i, x, y, t in load.sends if i in p.answered], "to_event_ms": to_event,
            "taps": latencies, "taps_missed": missed}


def cpu_ticks(pid=None):
    """A process's utime+stime, or (no pid) every CPU's busy time, in clock ticks."""
    if pid is None:
        with open("/proc/stat") as f:
            t = [int(v) for v in f.readline().split()[1:]]
        return sum(t[:8]) - t[3] - t[4]  # all but idle and iowait
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def bench(host, pid, tls, spawn, seconds, root):
    """Adds the players, runs the phones (`spawn` starts the phones' process), measures the host; returns results."""
    game = host.cli("new", "--width", str(WIDTH), "--height", str(HEIGHT), "--mines", str(MINES), "--seed", str(SEED))["game"]
    mines = [(x, y) for y, row in enumerate(host.cli("show", game, "--peek")["mineLayout"]) for x, c in enumerate(row) if c == "*"]
    time.sleep(2)
    figures = {"rss_no_players_kb": rss_kb(pid)}
    added = [host.cli("player", "add", f"P{k}") for k in range(1, PLAYERS + 1)]
    time.sleep(2)
    figures["rss_players_kb"] = rss_kb(pid)
    config = {"game": game, "tls": tls, "seconds": seconds, "mines": mines, "bindir": host.bindir, "socket": host.socket,
              "players": [{"name": a["player"]["name"], "peer": a["player"]["peer"],
                           "cells": mines[k * CELLS_EACH:(k + 1) * CELLS_EACH]} for k, a in enumerate(added)]}
    path = os.path.join(root, "phones.json")
    with open(path, "w") as f:
        json.dump(config, f)
    proc = spawn(["/usr/bin/python3", os.path.abspath(__file__), "--phones", path])
    report = None
    try:
        for line in iter(proc.stdout.readline, ""):
            word = line.strip()
            if word in ("connected", "browsers"):  # the players' sockets, then both browsers too
                time.sleep(3 if word == "connected" else 0)
                figures[f"rss_{word}_kb"] = rss_kb(pid)
                proc.stdin.write("go\n")
                proc.stdin.flush()
            elif word == "start":
                t0, c0, m0 = time.monotonic(), cpu_ticks(pid), cpu_ticks()
                log(f"8 players × {RATE} moves/s for {seconds} s, and taps in a browser")
            elif word == "end":
                t1, c1, m1 = time.monotonic(), cpu_ticks(pid), cpu_ticks()
                figures["cpu_percent"] = 100.0 * (c1 - c0) / os.sysconf("SC_CLK_TCK") / (t1 - t0)
                figures["machine_cpu_percent"] = 100.0 * (m1 - m0) / os.sysconf("SC_CLK_TCK") / (t1 - t0)
                figures["rss_end_kb"], figures["hwm_kb"] = rss_kb(pid), rss_kb(pid, "VmHWM")
            elif word.startswith("report "):
                report = json.loads(word[7:])
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.terminate()  # its browsers quit, then it ends
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if report is None or proc.returncode != 0:
        raise RuntimeError(f"the phones' process failed ({proc.returncode})")
    return figures, report


def emit(figures, report, lab, seconds):
    for key, value in [("lab", int(lab)), ("players", PLAYERS), ("rate_per_player", RATE), ("seconds", seconds),
                       ("tap_to_draw_samples", len(report["taps"])), ("taps_not_drawn", report["taps_missed"])] + \
            [(f"moves_{k}", report[k]) for k in ("sent", "ok", "refused", "unanswered")] + \
            [(k, report[k]) for k in ("replay_moves", "replay_load_moves")] + \
            [(f"events_{k}", report[k]) for k in ("expected", "missing", "extra", "dropped")]:
        result(f"hosted.{key}", value)
    for name, values in (("tap_to_draw", report["taps"]), ("move_answer", report["answer_ms"]), ("move_to_event", report["to_event_ms"])):
        if values:
            if name != "tap_to_draw":
                result(f"hosted.{name}_samples", len(values))
            for q in (50, 90, 99):
                result(f"hosted.{name}_p{q}_ms", f"{percentile(values, q):.3f}")
            result(f"hosted.{name}_max_ms", f"{max(values):.3f}")
    for key, value in sorted(figures.items()):
        result(f"hosted.{key}", f"{value:.1f}" if isinstance(value, float) else value)
    result("hosted.rss_per_player_kb", f"{(figures['rss_connected_kb'] - figures['rss_no_players_kb']) / PLAYERS:.0f}")
    for e in report["refusals"]:
        log(f"a move refused: {json.dumps(e)}")


def run_lab(bindir, seconds):
    from bench import Lab, Daemon as LabDaemon

    class Host(LabDaemon):
        def launch(self):
            with open(f"{self.root}/log", "ab") as log_file:
                self.proc = self.lab.spawn(self.i, [f"{self.bindir}/sweeperd", "--state-dir", f"{self.root}/state", "--socket", self.socket,
                                                    "--listen", "0.0.0.0:7455", "--no-mdns", "--name", "host", "--web-port", "8391",
                                                    "--web-lan-port", "8392", "--log-level", "warning"], env=self.env, stdout=log_file)

    lab = Lab(2)
    try:
        host = Host(lab, 1, bindir)
        host.start()
        deadline = time.monotonic() + 60
        while not host.cli("web", "--lan").get("port"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the board is not served to the lab's network: {host.cli('web', '--lan')}")
            time.sleep(0.5)

        def spawn(argv):
            p = subprocess.Popen(lab.argv(2, argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            lab.procs.append(p)
            return p

        figures, report = bench(host, host.pid, True, spawn, seconds, lab.dir)
        emit(figures, report, True, seconds)
    finally:
        lab.down()


def run_loopback(bindir, seconds):
    root = tempfile.mkdtemp(prefix="sweeper-bench-hosted-")
    host = None
    try:
        host = Daemon(bindir, f"{root}/host", "host")
        figures, report = bench(host, host.proc.pid, False,
                                lambda argv: subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True), seconds, root)
        emit(figures, report, False, seconds)
    finally:
        if host:
            host.stop()
        shutil.rmtree(root, ignore_errors=True)


def section(bindir, quick):
    """Runs this benchmark as Scripts/bench.py's `hosted` section (in the lab when root); its results."""
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable  # Debian's, with selenium
    argv = [python, os.path.abspath(__file__), "--bindir", bindir] + (["--lab"] if os.geteuid() == 0 else []) + (["--quick"] if quick else [])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise RuntimeError(f"bench_hosted.py failed:\n{out.stderr[-3000:]}")
    return {p[1]: float(p[2]) for p in (line.split() for line in out.stdout.splitlines()) if len(p) == 3 and p[0] == "result:"}


def render(r, goals, fmt, verdict):
    """The report's section for hosted players, and its goals appended to `goals`."""
    p99 = r("hosted.tap_to_draw_p99_ms")
    if p99 is None:
        return []
    mb = lambda key: r(key) / 1024 if r(key) is not None else None  # noqa: E731
    lost = sum(r(f"hosted.{k}") or 0 for k in ("moves_refused", "moves_unanswered", "events_missing", "events_dropped", "taps_not_drawn"))
    checks = [("a tap on a hosted player's phone drawn on another's, 8 players at 5 moves/s, p99 under 50 ms", p99 < 50),
              ("8 hosted players at 5 moves/s: every move answered ok, every cells event delivered", lost == 0)]
    goals.extend(checks)
    where = ("the host in one lab host (a network namespace), every phone in another, over the bridge and TLS (the board served "
             "to the home network, each phone paired by its code)" if r("hosted.lab") else "on loopback (not the lab: run it as root with --lab)")
    return ["## Hosted players: eight phones on one host", "",
            f"One daemon hosts eight players (`sweeper player add P1` … `P8`), {where}: `Scripts/bench_hosted.py`. Each player's "
            f"phone is a WebSocket client of its own (a request socket and a subscribed one, as the page opens), flagging and "
            f"unflagging mines of a 50×50 game (500 mines) {fmt(r('hosted.rate_per_player'))} times a second for "
            f"{fmt(r('hosted.seconds'))} s. Meanwhile Debian's Chromium, phone-sized with touch and logged in as P1, taps a covered "
            "safe cell (every 200 ms, or as soon after as its driver can), and a second Chromium, logged in as P2, shows the game: a "
            "tap is timed from the page's `touchend` on P1's phone to the first frame (`requestAnimationFrame`) of P2's page whose "
            "board has the cell; both read one clock. Every move of the game (its replay) should reach all eight subscribed sockets "
            "as a `cells` event. The host's CPU is its utime+stime over the load, in % of one core; its memory VmRSS (and VmHWM, "
            "the peak). The phones run on the host's machine (the lab's hosts are namespaces, not computers): the whole machine's "
            "CPU over the load is beside the host's.", "",
            "| | figure | goal |", "|---|---:|---|",
            f"| a tap on P1's phone to the frame on P2's, p99 ({fmt(r('hosted.tap_to_draw_samples'))} taps) | {fmt(p99, ' ms')} "
            f"(p50 {fmt(r('hosted.tap_to_draw_p50_ms'), ' ms')}, p90 {fmt(r('hosted.tap_to_draw_p90_ms'), ' ms')}, "
            f"max {fmt(r('hosted.tap_to_draw_max_ms'), ' ms')}) | under 50 ms: {verdict(checks[0][1])} |",
            f"| the players' moves: sent / answered ok / refused / unanswered | {fmt(r('hosted.moves_sent'))} / {fmt(r('hosted.moves_ok'))} / "
            f"{fmt(r('hosted.moves_refused'))} / {fmt(r('hosted.moves_unanswered'))} | all answered ok: {verdict(checks[1][1])} |",
            f"| `cells` events on the eight subscribed sockets: expected ({fmt(r('hosted.replay_moves'))} moves × 8) / missing / "
            f"dropped; taps not drawn | {fmt(r('hosted.events_expected'))} / {fmt(r('hosted.events_missing'))} / "
            f"{fmt(r('hosted.events_dropped'))}; {fmt(r('hosted.taps_not_drawn'))} | none lost: {verdict(checks[1][1])} |",
            f"| the phones' sockets: a move's answer, p50 / p99; its event on the other seven, p50 / p99 | "
            f"{fmt(r('hosted.move_answer_p50_ms'), ' ms')} / {fmt(r('hosted.move_answer_p99_ms'), ' ms')}; "
            f"{fmt(r('hosted.move_to_event_p50_ms'), ' ms')} / {fmt(r('hosted.move_to_event_p99_ms'), ' ms')} | – |",
            f"| the host's CPU over the load (the whole machine's, phones and browsers too) | {fmt(r('hosted.cpu_percent'), '%')} of a core "
            f"({fmt(r('hosted.machine_cpu_percent'), '%')}) | – |",
            f"| the host's memory: no player / 8 added / their 16 sockets connected / both browsers too / at the end; peak | "
            f"{fmt(mb('hosted.rss_no_players_kb'), ' MB')} / {fmt(mb('hosted.rss_players_kb'), ' MB')} / "
            f"{fmt(mb('hosted.rss_connected_kb'), ' MB')} / {fmt(mb('hosted.rss_browsers_kb'), ' MB')} / {fmt(mb('hosted.rss_end_kb'), ' MB')}; "
            f"{fmt(mb('hosted.hwm_kb'), ' MB')} | – |",
            f"| per hosted player: (connected − no player) ÷ 8 | {fmt(r('hosted.rss_per_player_kb'), ' KB')} | – |", ""]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bindir")
    parser.add_argument("--quick", action="store_true", help="10 s of load, not 60")
    parser.add_argument("--lab", action="store_true", help="the host in a lab namespace, the phones in another (needs root)")
    parser.add_argument("--phones", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phones:
        return phones(args.phones)
    if not args.bindir:
        parser.error("--bindir is required")
    for tool in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.path.exists(tool):
            sys.exit(f"bench-hosted: needs {tool} (Scripts/install-deps.sh)")
    bindir = os.path.abspath(args.bindir)
    seconds = 10 if args.quick else 60
    if args.lab:
        run_lab(bindir, seconds)
    else:
        log("on loopback (--lab puts the host and the phones in two lab hosts; it needs root)")
        run_loopback(bindir, seconds)


if __name__ == "__main__":
    main()
