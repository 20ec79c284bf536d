#!/usr/bin/env python3
"""The web board in real browsers: what a player on a phone or a desktop meets.

    /usr/bin/python3 Scripts/bench_web.py --bindir Benchmarks/.build/release [--quick]

Two daemons on this machine (loopback, joined in one circle), each with
Debian's Chromium (headless, driven by chromedriver through python3-selenium)
showing its board. It prints `result: KEY VALUE` lines, as the other
benchmarks do, and Scripts/bench.py renders them in BENCHMARKS.md:

  web.tap_to_draw_*      a tap by touch in the browser on ann's daemon (the
                         page's touchend) to the frame that shows the cell in
                         the browser on bob's daemon (that frame's
                         requestAnimationFrame), one tap every 200 ms on a
                         30x16 board; both browsers read one clock
  web.first_draw_500_ms  a 500x500 game (50,000 mines) opened in a fresh
                         browser: from the page's navigation start to the
                         frame with the whole board drawn
  web.remote_move_script_*  on that open 500x500 board, what each move made
                         on the other daemon costs the page in script (its
                         event handler and the cells' redraw)
  web.daemon_rss_per_board_kb  the daemon's resident memory per open board
                         (a browser tab with its two WebSockets, subscribed),
                         from 10 tabs of the 500x500 game
  web.page_bytes         the page's five files, as served

Every process started is stopped by its pid; traffic stays on loopback and
on the lab's own 198.18.0.0/24.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(message):
    print(f"bench-web: {message}", file=sys.stderr, flush=True)


def result(key, value):
    print(f"result: {key} {value}", flush=True)


def rss_kb(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class Handle:
    """A daemon's control socket, driven by the sweeper CLI (from any network namespace: the socket is a file)."""

    def __init__(self, bindir, socket, env=None):
        self.bindir, self.socket = bindir, socket
        self.env = env or {k: v for k, v in os.environ.items() if k not in ("SWEEPER_SOCKET", "DISPLAY", "WAYLAND_DISPLAY")}

    def try_cli(self, *args):
        p = subprocess.run([f"{self.bindir}/sweeper", "--socket", self.socket, "--json", *args], env=self.env,
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return None
        return json.loads(p.stdout) if p.stdout.strip() else {}

    def cli(self, *args):
        out = self.try_cli(*args)
        if out is None:
            raise RuntimeError(f"sweeper --socket {self.socket} {' '.join(args)} failed")
        return out


class Daemon(Handle):
    """A sweeperd on loopback with its own folders, driven by the sweeper CLI."""

    def __init__(self, bindir, root, name):
        self.bindir, self.root, self.name = bindir, root, name
        os.makedirs(root, exist_ok=True)
        self.socket = f"{root}/run/control.sock"
        self.env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "SWEEPER_SOCKET", "DISPLAY", "WAYLAND_DISPLAY")}
        self.env.update(XDG_CONFIG_HOME=f"{root}/config", XDG_STATE_HOME=f"{root}/xdg-state", XDG_RUNTIME_DIR=f"{root}/xdg-run")
        self.log = open(f"{root}/log", "ab")
        self.proc = subprocess.Popen(
            [f"{bindir}/sweeperd", "--state-dir", f"{root}/state", "--socket", self.socket, "--no-mdns", "--listen", "127.0.0.1:0",
             "--name", name, "--web-port", "0", "--log-level", "warning"],
            env=self.env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while self.try_cli("status") is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sweeperd {name} did not start")
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def browser(root, phone, remote=None):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    o = Options()
    o.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="chromium-", dir=root)
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
              "--no-first-run", "--disable-background-networking", "--window-size=" + ("390,844" if phone else "1280,900")):
        o.add_argument(a)
    if phone:
        o.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}})
    if remote:
        # A chromedriver in another lab host (its own profile folder there: /tmp is shared).
        return webdriver.Remote(command_executor=remote, options=o)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def open_board(d, daemon, game, seconds=30):
    d.get(daemon.cli("web", "--no-open", "--game", game)["url"])
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if d.execute_script("return window.sweeper && window.sweeper.ready ? window.sweeper.game : null") == game:
            return
        time.sleep(0.02)
    raise RuntimeError(f"the page did not show {game}")


def centre(d, x, y, w, h):
    r = d.execute_script("const r = document.getElementById('board').getBoundingClientRect(); return [r.left, r.top, r.width, r.height];")
    return r[0] + (x + 0.5) * r[2] / w, r[1] + (y + 0.5) * r[3] / h


def cell(d, x, y):
    return d.execute_script(f"const r = window.sweeper.board; return r[{y}][{x}];")


def mines_of(daemon, game):
    layout = daemon.cli("show", game, "--peek")["mineLayout"]
    return {(x, y) for y, row in enumerate(layout) for x, c in enumerate(row) if c == "*"}


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def wait_held(daemon, game, seconds):
    """Waits until `daemon` holds `game` (it came from the other daemon)."""
    deadline = time.monotonic() + seconds
    while daemon.try_cli("show", game) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{daemon.socket} never got game {game}")
        time.sleep(0.1)


def tap_to_draw(ann, bob, root, samples, remote=None):
    game = ann.cli("new", "--width", "30", "--height", "16", "--mines", "99", "--seed", "31")["game"]
    wait_held(bob, game, 30)
    mines = mines_of(ann, game)
    phone, desktop = browser(root, True), browser(root, False, remote)
    try:
        open_board(phone, ann, game)
        open_board(desktop, bob, game)
        latencies = []
        while len(latencies) < samples:
            rows = ann.cli("show", game)["board"]
            covered = [(x, y) for y in range(16) for x in range(30) if rows[y][x] == "#" and (x, y) not in mines]
            if not covered:
                break
            x, y = covered[len(latencies) * 7 % len(covered)]
            before = desktop.execute_script("return window.sweeper.eventsApplied")
            px, py = centre(phone, x, y, 30, 16)
            phone.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": px, "y": py}]})
            phone.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
            end = time.monotonic() + 5
            while time.monotonic() < end:
                if desktop.execute_script("return window.sweeper.eventsApplied") > before and cell(desktop, x, y) != "#":
                    break
                time.sleep(0.005)
            time.sleep(0.05)  # the frame that shows it
            tapped = phone.execute_script("return window.sweeper.lastInputAt")
            drawn = desktop.execute_script("return window.sweeper.lastDrawAt")
            if tapped and drawn and drawn >= tapped:
                latencies.append(drawn - tapped)
            time.sleep(0.15)
        return latencies
    finally:
        phone.quit()
        desktop.quit()


def big_board(ann, bob, root, moves, tabs):
    game = ann.cli("new", "--width", "500", "--height", "500", "--mines", "50000", "--seed", "9")["game"]
    wait_held(bob, game, 120)
    figures = {}
    d = browser(root, False)
    try:
        open_board(d, ann, game, seconds=60)
        time.sleep(0.5)
        figures["first_draw_500_ms"] = d.execute_script("return window.sweeper.firstDrawMs")
        # Moves on bob's daemon: each a remote move on ann's open board.
        rows = bob.cli("show", game)["board"]
        covered = [(x, y) for y in range(500) for x in range(500) if rows[y][x] == "#"][:moves]
        costs = []
        for x, y in covered:
            before = d.execute_script("return window.sweeper.eventsApplied")
            bob.cli("flag", game, str(x), str(y), "--mark", "flag")
            end = time.monotonic() + 5
            while time.monotonic() < end and d.execute_script("return window.sweeper.eventsApplied") == before:
                time.sleep(0.005)
            costs.append(d.execute_script("return window.sweeper.lastEventScriptMs"))
        figures["remote_costs"] = [c for c in costs if c is not None]
        # Memory: the daemon with this one board open, then with `tabs` more.
        time.sleep(2)
        base = rss_kb(ann.proc.pid)
        url = d.current_url
        handles = []
        for _ in range(tabs):
            d.switch_to.new_window("tab")
            d.get(url)
            handles.append(d.current_window_handle)
        for h in handles:
            d.switch_to.window(h)
            end = time.monotonic() + 60
            while time.monotonic() < end and not d.execute_script("return window.sweeper && window.sweeper.ready"):
                time.sleep(0.05)
        time.sleep(3)
        figures["rss_per_board_kb"] = (rss_kb(ann.proc.pid) - base) / tabs
        return figures
    finally:
        d.quit()


def report_taps(latencies, prefix="web.tap_to_draw"):
    log(f"tap to draw: {len(latencies)} samples")
    result(f"{prefix}_samples", len(latencies))
    result(f"{prefix}_p50_ms", f"{percentile(latencies, 50):.3f}")
    result(f"{prefix}_p90_ms", f"{percentile(latencies, 90):.3f}")
    result(f"{prefix}_max_ms", f"{max(latencies):.3f}")


def lab_taps(bindir, samples):
    """The taps between two hosts of the lab (network namespaces on a bridge,
    Scripts/netns-lab.sh): ann's daemon and a phone-sized Chromium in h1,
    bob's daemon and a desktop Chromium in h2, whose chromedriver h1 reaches
    over the bridge. The timing runs in h1 (this script, --lab-driver)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench import Lab, Daemon as LabDaemon, wait_for
    lab = Lab(2)
    try:
        ann, bob = LabDaemon(lab, 1, bindir), LabDaemon(lab, 2, bindir)
        ann.start()
        bob.start()
        code = ann.cli("invite")["code"]
        bob.cli("join", code, "--address", "198.18.0.1:7455")
        wait_for(lambda: len(bob.connected()) >= 1, 60, "h2 to link to h1")
        lab.spawn(2, ["/usr/bin/chromedriver", "--port=9515", "--allowed-ips=198.18.0.1", "--allowed-origins=*"])
        time.sleep(1)
        driver = subprocess.run(
            lab.argv(1, ["/usr/bin/python3", os.path.abspath(__file__), "--lab-driver", "--bindir", bindir, "--ann", ann.socket,
                         "--bob", bob.socket, "--remote", "http://198.18.0.2:9515", "--samples", str(samples)]),
            capture_output=True, text=True, timeout=900)
        sys.stderr.write(driver.stderr[-4000:])
        sys.stdout.write(driver.stdout)
        if driver.returncode != 0:
            raise RuntimeError("the lab driver failed")
    finally:
        lab.down()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bindir", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--lab", action="store_true", help="time taps between two lab hosts (needs root)")
    parser.add_argument("--lab-driver", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ann", help=argparse.SUPPRESS)
    parser.add_argument("--bob", help=argparse.SUPPRESS)
    parser.add_argument("--remote", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, default=150, help=argparse.SUPPRESS)
    args = parser.parse_args()
    for tool in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.path.exists(tool):
            sys.exit(f"bench-web: needs {tool} (Scripts/install-deps.sh)")
    samples = 30 if args.quick else 150
    if args.lab_driver:
        root = tempfile.mkdtemp(prefix="sweeper-bench-web-driver-")
        try:
            report_taps(tap_to_draw(Handle(args.bindir, args.ann), Handle(args.bindir, args.bob), root, args.samples, args.remote))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    page = os.path.join(ROOT, "Sources", "SweeperWeb", "Page")
    result("web.page_bytes", sum(os.path.getsize(os.path.join(page, f)) for f in os.listdir(page)))
    if args.lab:
        lab_taps(args.bindir, samples)
    root = tempfile.mkdtemp(prefix="sweeper-bench-web-")
    daemons = []
    try:
        ann = Daemon(args.bindir, f"{root}/ann", "ann")
        daemons.append(ann)
        bob = Daemon(args.bindir, f"{root}/bob", "bob")
        daemons.append(bob)
        code = ann.cli("invite")["code"]
        port = ann.cli("status")["listening"][0].rsplit(":", 1)[1]
        bob.cli("join", code, "--address", f"127.0.0.1:{port}")
        if not args.lab:
            report_taps(tap_to_draw(ann, bob, root, samples))
        figures = big_board(ann, bob, root, 20 if args.quick else 100, 5 if args.quick else 10)
        result("web.first_draw_500_ms", f"{figures['first_draw_500_ms']:.1f}")
        costs = figures["remote_costs"]
        result("web.remote_move_script_p50_ms", f"{statistics.median(costs):.3f}")
        result("web.remote_move_script_p99_ms", f"{percentile(costs, 99):.3f}")
        result("web.remote_move_script_max_ms", f"{max(costs):.3f}")
        result("web.daemon_rss_per_board_kb", f"{figures['rss_per_board_kb']:.0f}")
    finally:
        for d in daemons:
            d.stop()
        shutil.rmtree(root, ignore_errors=True)


def section(bindir, quick):
    """Runs this benchmark as Scripts/bench.py's `web` section; its results."""
    # Debian's python3, which python3-selenium is installed for (not a python3 of pyenv or a venv).
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    argv = [python, os.path.abspath(__file__), "--bindir", bindir, "--lab"] + (["--quick"] if quick else [])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise RuntimeError(f"bench_web.py failed:\n{out.stderr[-3000:]}")
    results = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "result:":
            results[parts[1]] = float(parts[2])
    return results


def render(r, goals, fmt, verdict):
    """The report's section for the web board, and its goals appended to `goals`."""
    if r("web.tap_to_draw_p50_ms") is None:
        return []
    tap, first, script, rss, page = (r("web.tap_to_draw_p50_ms"), r("web.first_draw_500_ms"), r("web.remote_move_script_p99_ms"),
                                     r("web.daemon_rss_per_board_kb"), r("web.page_bytes"))
    checks = [("a tap in one browser drawn in a browser on another daemon, p50 under 16 ms", tap < 16),
              ("a 500×500 board drawn within 1 s of opening", first < 1000),
              ("a remote move on an open 500×500 board under 2 ms of the page's script (p99)", script < 2),
              ("daemon memory per open web board under 1 MB", rss < 1024),
              ("the page under 150 KB", page < 150_000)]
    goals.extend(checks)
    return ["## The web board: what a browser player meets", "",
            "Two daemons in one circle, each with Debian's Chromium (headless, driven by chromedriver) showing its "
            "board: `Scripts/bench_web.py`. The taps run between two hosts of the lab (network namespaces on one "
            "bridge, a daemon and a browser in each, the one in h2 driven from h1 over the bridge); the rest between "
            "two daemons on loopback. A tap is timed as a player sees it: from the "
            "page's `touchend` in the phone-sized browser on one daemon (a reveal on a 30×16 board, one every 200 ms) "
            "to the start of the frame that shows the cell in the browser on the other (its `requestAnimationFrame`); "
            "both browsers read one clock. On the way: the page's request over its WebSocket, the daemon's signed and "
            "committed op (one fsync), the push to the other daemon, its event to the other page, that page's redraw "
            "of the changed cells, and the wait for the next frame, 0 to 16.7 ms at 60 Hz (8.3 ms on average): so the "
            "floor is about 10 ms, the daemons' own path (about 2 ms between two hosts at a player's pace, in the latency section) plus half a frame, and "
            "the goal is one frame.", "",
            "| | figure | goal |", "|---|---:|---|",
            f"| a tap to the other browser's frame, p50 ({fmt(r('web.tap_to_draw_samples'))} taps) | {fmt(tap, ' ms')} "
            f"(p90 {fmt(r('web.tap_to_draw_p90_ms'), ' ms')}, max {fmt(r('web.tap_to_draw_max_ms'), ' ms')}) | under 16 ms: {verdict(checks[0][1])} |",
            f"| a 500×500 game (50,000 mines) opened: navigation start to the whole board drawn | {fmt(first, ' ms')} | "
            f"under 1 s: {verdict(checks[1][1])} |",
            f"| a remote move on that open board: the page's script, p50 / p99 / max | "
            f"{fmt(r('web.remote_move_script_p50_ms'), ' ms')} / {fmt(script, ' ms')} / {fmt(r('web.remote_move_script_max_ms'), ' ms')} | "
            f"p99 under 2 ms: {verdict(checks[2][1])} |",
            f"| the daemon's resident memory per open board (a tab, two WebSockets, subscribed; from 10 tabs of the 500×500 game) | "
            f"{fmt(rss, ' KB')} | under 1 MB: {verdict(checks[3][1])} |",
            f"| the page: HTML, CSS and JavaScript, as served (no compression) | {fmt(page / 1000, ' KB')} | under 150 KB: {verdict(checks[4][1])} |",
            ""]


if __name__ == "__main__":
    main()
