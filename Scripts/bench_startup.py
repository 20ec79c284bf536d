#!/usr/bin/env python3
"""Start-up: how soon a daemon answers over what it keeps, and how soon a long game wakes.

    python3 Scripts/bench_startup.py --bindir Benchmarks/.build/release [--quick]

For each stored state, `sweeper-bench-sync --write-store` writes a state directory
as the daemon writes it (games on 500×500 boards with 50,000 mines, played by three
players); then `sweeperd` starts over it, alone on loopback without mDNS, and the time
from spawning it to the first `sweeper status` that answers is taken (the CLI tried
every 2 ms; each try spawns a process, so this is what a player running `sweeper`
after a boot meets). Each state is started five times, stopped by SIGTERM between:
the first start is the first of this release over a database written without game
snapshots (it replays every game and writes them down); the next two read the
snapshots (the median of four is the figure). Then `sweeper show` of the longest game
after a start: its wake. The floor is the same start over an empty state directory.

It prints `result: startup.KEY VALUE` lines; render() below says what each is, for
Scripts/bench.py. Every process started is stopped by its pid; traffic stays on
loopback.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (its sub-benchmark runner)


# Starts of each state: the first (a replay), then the ones that read snapshots (their median is the figure).
STARTS = 5


def log(message):
    sys.stderr.write(f"[startup] {message}\n")
    sys.stderr.flush()


class Daemon:
    def __init__(self, bindir, root):
        self.bindir, self.root = bindir, root
        self.socket = f"{root}/control.sock"
        self.env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "SWEEPER_SOCKET")}
        self.env.update(XDG_CONFIG_HOME=f"{root}/config", XDG_RUNTIME_DIR=f"{root}/run")
        self.proc = None

    def cli(self, *args):
        return subprocess.run([f"{self.bindir}/sweeper", "--socket", self.socket, *args], env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)

    def start(self, limit=600):
        """Spawns sweeperd; the seconds until `sweeper status` answers."""
        with open(f"{self.root}/log", "ab") as out:
            t0 = time.monotonic()
            self.proc = subprocess.Popen([f"{self.bindir}/sweeperd", "--state-dir", f"{self.root}/state", "--socket", self.socket,
                                          "--listen", "127.0.0.1:0", "--no-mdns", "--web-port", "0", "--log-level", "info"],
                                         env=self.env, stdout=out, stderr=subprocess.STDOUT)
        while time.monotonic() - t0 < limit:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sweeperd exited at start:\n{self.log_tail()}")
            if self.cli("status").returncode == 0:
                return time.monotonic() - t0
            time.sleep(0.002)
        raise RuntimeError(f"sweeperd did not answer within {limit} s:\n{self.log_tail()}")

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def log_tail(self):
        try:
            with open(f"{self.root}/log", errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return "(no log)"


def measure(bindir, scratch, name, games, ops, results):
    root = os.path.join(scratch, name)
    os.makedirs(root)
    if games:
        t0 = time.monotonic()
        out = subprocess.run([f"{bindir}/sweeper-bench-sync", "--write-store", f"{root}/state", str(games), str(ops)],
                             capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"--write-store failed:\n{out.stderr[-2000:]}")
        log(f"{name}: {out.stdout.strip()} ({time.monotonic() - t0:.0f} s with generation)")
    d = Daemon(bindir, root)
    try:
        starts = []
        for i in range(STARTS):
            starts.append(d.start())
            if i < STARTS - 1:
                d.stop()
        later = statistics.median(starts[1:])
        results[f"startup.{name}.first_ms"] = starts[0] * 1000
        results[f"startup.{name}.snapshots_ms"] = later * 1000
        log(f"{name}: status answered {starts[0] * 1000:.0f} ms after the first start, "
            f"{later * 1000:.0f} ms after a start with snapshots (median of {STARTS - 1}: {[round(s * 1000) for s in starts[1:]]})")
        if games:
            listed = d.cli("--json", "games")
            ids = [g["game"] for g in json.loads(listed.stdout or "{}").get("games", [])] if listed.returncode == 0 else []
            if ids:
                t0 = time.monotonic()
                shown = d.cli("show", ids[-1])
                wake = time.monotonic() - t0
                if shown.returncode != 0:
                    raise RuntimeError(f"show failed: {shown.stderr}")
                results[f"startup.{name}.show_ms"] = wake * 1000
                # The same `show` with the game awake: what the wake adds is the difference.
                awake = []
                for _ in range(3):
                    t0 = time.monotonic()
                    d.cli("show", ids[-1])
                    awake.append(time.monotonic() - t0)
                results[f"startup.{name}.show_awake_ms"] = statistics.median(awake) * 1000
                log(f"{name}: `sweeper show` of a game asleep since the start answered in {wake * 1000:.0f} ms, "
                    f"{statistics.median(awake) * 1000:.0f} ms once awake")
    finally:
        d.stop()
        shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bindir", required=True)
    parser.add_argument("--quick", action="store_true", help="smaller states")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="sweeper-bench-startup-")
    results = {}
    try:
        measure(args.bindir, scratch, "empty", 0, 0, results)
        if args.quick:
            measure(args.bindir, scratch, "long", 4, 20_000, results)
            measure(args.bindir, scratch, "many", 40, 2, results)
        else:
            measure(args.bindir, scratch, "long", 28, 100_000, results)
            measure(args.bindir, scratch, "many", 200, 2, results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for key, value in sorted(results.items()):
        print(f"result: {key} {value:.3f}")


def section(bindir, quick):
    """Runs this benchmark as Scripts/bench.py's `startup` section; its results."""
    argv = [sys.executable, os.path.abspath(__file__), "--bindir", bindir] + (["--quick"] if quick else [])
    return bench.sub_benchmark(argv, timeout=3 * 3600)


def render(r, goals, fmt, verdict):
    """The report's section for start-up, and its goals appended to `goals`."""
    floor = r("startup.empty.snapshots_ms")
    if floor is None:
        return []
    lines = ["## Start-up", "",
             "How soon `sweeper status` answers after `sweeperd` is spawned, over what it keeps: `Scripts/bench_startup.py`. "
             "Each state directory is written as the daemon writes it (`sweeper-bench-sync --write-store`: games on 500×500 "
             "boards with 50,000 mines, played by three players); the daemon starts alone on loopback without mDNS, and the "
             "CLI is tried every 2 ms (each try a process of its own, as a player's `sweeper` after a boot). The first start is "
             "the first of this release over a database without game snapshots, as the last release left it: it replays every "
             "game (as every start of the last release did) and writes each one's snapshot. A start after it reads the "
             "snapshots (the median of four starts). The floor is the same median over an empty state directory. Then `sweeper show` of a game asleep "
             "since the start, as a player runs it (a process of its own, the whole board drawn): it wakes, from its frozen board "
             "when it is long, and beside it the same `show` once the game is awake (median of three): the difference is the wake. "
             "Goal: status within 200 ms of the start whatever is stored (the wake's goal is judged in *Scale*, on the wake alone).", "",
             "| state | first start (replays) | a start with snapshots | floor (empty) | goal | `show` of a game asleep | `show` awake |",
             "|---|---:|---:|---:|---|---:|---:|"]
    for key, label in [("long", "long games"), ("many", "many games")]:
        first, snap, show = r(f"startup.{key}.first_ms"), r(f"startup.{key}.snapshots_ms"), r(f"startup.{key}.show_ms")
        if snap is None:
            continue
        ok = snap < 200
        goals.append((f"status within 200 ms of a start over {label}", ok))
        lines.append(f"| {label} | {fmt(first, ' ms')} | {fmt(snap, ' ms')} | {fmt(floor, ' ms')} | under 200 ms: {verdict(ok)} | "
                     f"{fmt(show, ' ms')} | {fmt(r(f'startup.{key}.show_awake_ms'), ' ms')} |")
    lines += ["", "Long games: 28 of 100,000 ops each (4 of 20,000 with --quick); many games: 200 games of two ops each "
                  "(40 with --quick), each a 500×500 board with 50,000 mines. The `show` columns show the last game `games` lists. "
                  "A long game wakes from the frozen board its first start wrote down (games of fewer than 1,024 ops replay).", ""]
    return lines


if __name__ == "__main__":
    main()
