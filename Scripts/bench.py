#!/usr/bin/env python3
"""Every Sweeper benchmark in one run, beside its anchor, written to BENCHMARKS.md.

Run it through Scripts/bench.sh, which builds the release binaries first:

    Scripts/bench.sh                    # everything: ~3 min after the release build
    Scripts/bench.sh --quick            # fewer moves and repeats, for trying it out
    Scripts/bench.sh --only boards,sync # some sections: boards, sync, lab (= latency,
                                        # discovery, resources), latency (alone), web, hosted,
                                        # startup, classroom
    Scripts/bench.sh --hosts 2,4        # the lab sizes for latency (default 2,4,8)
    Scripts/bench.sh --out FILE         # the report elsewhere (default BENCHMARKS.md)

Sections and their anchors:
  boards     Scripts/bench-boards.sh: no-guess generation vs Tatham's `sgt-mines --generate`
  sync       Scripts/bench-sync.sh: bytes and apply time vs Yjs (pycrdt), catch-up, scale
  lab        real daemons in network namespaces (Scripts/netns-lab.sh), each with its own
             D-Bus and avahi-daemon: move latency with 2, 4 and 8 hosts (keypress to arrival)
             and under load vs its floor (one sign and one verify + half a bare TCP round
             trip; the fsync is beside the path since peer protocol 18); discovery vs avahi-publish to avahi-browse; resident memory with 200
             stored 500×500 games, and idle CPU.
  web        Scripts/bench_web.py: the web board in real browsers (Chromium): a tap to the other
             browser's frame, a 500×500 board's first draw, a remote move's script, memory per board.
  hosted     Scripts/bench_hosted.py: eight hosted players on one host (in the lab when root), each
             moving five times a second for a minute: a tap in one phone's browser to the frame
             in another's, moves and events lost, the host's CPU and memory.
  classroom  Scripts/bench_classroom.py: 32 daemons in the lab, one circle, a full mesh: start to all
             linked, idle CPU, memory and bytes a device, a move to all others, a device's catch-up.
  startup    Scripts/bench_startup.py: `sweeper status` after spawning `sweeperd` over 28 games of
             100,000 ops and over 200 games, the first start (a replay) and the next (snapshots),
             beside a start over nothing; a long game's wake.
  package    (--package DEB) the .deb's size, what it installs, its daemon's idle memory.

Every sub-benchmark prints `result: KEY VALUE` lines; this script gathers them, checks
the goals and writes the report. Traffic stays on loopback and 198.18.0.0/24 inside the
lab's own namespaces; every process started is stopped by its pid.
"""

import argparse
import json
import os
import platform
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB_SCRIPT = os.path.join(ROOT, "Scripts", "netns-lab.sh")
RESULT = re.compile(r"^result: (\S+) (-?[0-9.]+(?:e-?[0-9]+)?)\s*$")


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def results_in(text):
    """The `result: KEY VALUE` lines of a sub-benchmark's output."""
    found = {}
    for line in text.splitlines():
        m = RESULT.match(line)
        if m:
            found[m.group(1)] = float(m.group(2))
    return found


def fields(line):
    """`NAME k=v k=v …` as a dict of floats (where they parse)."""
    out = {}
    for part in line.split()[1:]:
        if "=" in part:
            k, v = part.split("=", 1)
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


def run(argv, env=None, timeout=900):
    """Runs a command, returns its stdout; raises with its stderr when it fails."""
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return p.stdout


# MARK: The lab


class Lab:
    """Hosts h1…hN in network namespaces on a bridge; stops what it started by pid."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.dir = tempfile.mkdtemp(prefix="sweeper-bench-", dir=os.environ.get("BENCH_TMPDIR", "/tmp"))
        self.procs = []
        try:
            run(["bash", LAB_SCRIPT, "up", self.dir, str(hosts)], timeout=120)
        except Exception:
            self.down()
            raise

    def argv(self, i, command):
        # netns-lab.sh exec execs `ip netns exec … env … command`: the pid is the command's.
        return ["bash", LAB_SCRIPT, "exec", self.dir, str(i)] + command

    def spawn(self, i, command, env=None, stdout=None):
        p = subprocess.Popen(self.argv(i, command), env=env, stdin=subprocess.DEVNULL,
                             stdout=stdout if stdout is not None else subprocess.DEVNULL,
                             stderr=subprocess.STDOUT if stdout is not None else subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, grace=5.0):
        if p.poll() is None:
            try:
                p.send_signal(sig)
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
            except ProcessLookupError:
                pass
        if p in self.procs:
            self.procs.remove(p)

    def down(self):
        for p in list(self.procs):
            self.stop(p)
        subprocess.run(["bash", LAB_SCRIPT, "down", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


class Daemon:
    """A sweeperd in one lab host, driven with the sweeper CLI over its control socket."""

    def __init__(self, lab, i, bindir):
        self.lab, self.i, self.bindir = lab, i, bindir
        self.root = f"{lab.dir}/d{i}"
        os.makedirs(self.root, exist_ok=True)
        self.socket = f"{self.root}/control.sock"
        self.proc = None
        # Quiet by default: the figures of most sections are the daemons' work, not their logging.
        self.log_level = "warning"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "SWEEPER_SOCKET", "DBUS_SYSTEM_BUS_ADDRESS")}
        self.env.update(XDG_CONFIG_HOME=f"{self.root}/config", XDG_STATE_HOME=f"{self.root}/xdg-state",
                        XDG_RUNTIME_DIR=f"{self.root}/xdg-run", USER=f"h{i}")

    def launch(self):
        log_file = open(f"{self.root}/log", "ab")
        self.proc = self.lab.spawn(self.i, [f"{self.bindir}/sweeperd", "--state-dir", f"{self.root}/state",
                                            "--socket", self.socket, "--listen", "0.0.0.0:7455",
                                            "--name", f"h{self.i}", "--log-level", self.log_level],
                                   env=self.env, stdout=log_file)
        log_file.close()

    def start(self):
        self.launch()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sweeperd in h{self.i} exited at start:\n{self.log_tail()}")
            if self.try_cli("status") is not None:
                return
            time.sleep(0.05)
        raise RuntimeError(f"sweeperd in h{self.i} did not answer within 30 s:\n{self.log_tail()}")

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            self.lab.stop(self.proc, sig)
            self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    def log_tail(self):
        try:
            with open(f"{self.root}/log", errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return "(no log)"

    def try_cli(self, *args):
        p = subprocess.run([f"{self.bindir}/sweeper", "--socket", self.socket, "--json", *args], env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        if p.returncode != 0:
            return None
        try:
            return json.loads(p.stdout) if p.stdout.strip() else {}
        except json.JSONDecodeError:
            return None

    def cli(self, *args):
        out = self.try_cli(*args)
        if out is None:
            raise RuntimeError(f"h{self.i}: sweeper {' '.join(args)} failed\n{self.log_tail()}")
        return out

    def connected(self):
        peers = (self.try_cli("peers") or {}).get("peers", [])
        return {p["peer"] for p in peers if p.get("state") == "connected"}


def sub_benchmark(argv, timeout):
    """Runs a benchmark script that prints `result: KEY VALUE` lines; its results (its log to stderr)."""
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise RuntimeError(f"{os.path.basename(argv[1])} failed:\n{out.stderr[-3000:]}")
    return {p[1]: float(p[2]) for p in (line.split() for line in out.stdout.splitlines()) if len(p) == 3 and p[0] == "result:"}


def wait_for(condition, seconds, what, interval=0.1):
    """Asks `condition` every `interval` seconds until it gives something true, and returns that."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(interval)
    if value := condition():
        return value
    raise RuntimeError(f"timed out after {seconds} s waiting for {what}")


def circle(lab, bindir):
    """A daemon in every host, one circle (invites made on h1), linked by mDNS alone:
    the daemons restart after joining, so no link depends on the join's timing."""
    daemons = [Daemon(lab, i, bindir) for i in range(1, lab.hosts + 1)]
    for d in daemons:
        d.start()
    for d in daemons[1:]:
        # A code admits one device; a join dials the members mDNS has seen,
        # and right after the start there may be none yet.
        code = daemons[0].cli("invite")["code"]
        wait_for(lambda: d.try_cli("join", code) is not None, 60, f"h{d.i} to join by mDNS")
    for d in daemons:
        d.stop()
    for d in daemons:
        d.start()
    ids = [d.cli("status")["peer"] for d in daemons]
    wait_for(lambda: all(d.connected() >= set(ids) - {ids[k]} for k, d in enumerate(daemons)), 90,
             f"{lab.hosts} daemons to link by mDNS")
    return daemons, ids


def rss_mb(pid, field="VmRSS"):
    """Resident memory in MB: VmRSS (all), or RssAnon (private, not shared library pages)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_ns(pid):
    """CPU time of every thread of `pid`, in nanoseconds (schedstat: finer than clock ticks)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total


def idle_cpu_percent(pid, seconds):
    t0, c0 = time.monotonic(), cpu_ns(pid)
    time.sleep(seconds)
    t1, c1 = time.monotonic(), cpu_ns(pid)
    return 100.0 * (c1 - c0) / 1e9 / (t1 - t0)


def bench_tool(bindir, *args, lab=None, host=None):
    argv = [f"{bindir}/sweeper-bench-latency", *args]
    if lab is not None:
        argv = lab.argv(host, argv)
    return run(argv, timeout=600)


def new_game(d, others, width, height, mines, seed):
    game = d.cli("new", "--width", str(width), "--height", str(height), "--mines", str(mines), "--seed", str(seed))["game"]
    wait_for(lambda: all(o.try_cli("show", game) is not None for o in others), 60, f"game {game} on every host")
    return game


# A player's keys, one every 200 ms (five a second: a fast player's clicks).
PACE_MS = 200
# A viewer's cursor moves, one every 60 ms (sweeper-bench-latency cursors).
CURSOR_PACE_MS = 60


def paced_relay(lab, bindir, pace_ms, count):
    """The floor of the path a move or a cursor takes, at a player's pace: 64 bytes from this process
    over a unix socket to a relay in h1, over TCP to a relay in h2, over a unix socket back here,
    every `pace_ms`: as many processes woken and links crossed as client → daemon → daemon → client,
    with nothing done on the way."""
    first, last = f"{lab.dir}/relay-first.sock", f"{lab.dir}/relay-last.sock"
    tool = f"{bindir}/sweeper-bench-latency"
    sink = lab.spawn(2, [tool, "relay", "tcp:7998", f"unix:{last}"])
    source = lab.spawn(1, [tool, "relay", f"unix:{first}", "tcp:198.18.0.2:7998"])
    try:
        out = bench_tool(bindir, "paced-relay", f"unix:{first}", f"unix:{last}", str(count), str(pace_ms))
    finally:
        lab.stop(source)
        lab.stop(sink)
    return fields(next(l for l in out.splitlines() if l.startswith("relay")))


def lab_section(args, bindir, results, full):
    """Latency with each number of hosts; with `full`, also discovery and resources (in the 2-host lab)."""
    moves = 200 if args.quick else 1000
    repeats = 2 if args.quick else 5
    sv = fields(bench_tool(bindir, "sign-verify", str(moves)))
    results["latency.sign_verify_ms"] = sv["p50_ms"]

    for hosts in args.hosts:
        log(f"lab of {hosts} hosts")
        lab = Lab(hosts)
        try:
            daemons, ids = circle(lab, bindir)
            if hosts == 2 and full:
                discovery_and_idle(args, lab, daemons, ids, results, repeats)
            echo = lab.spawn(2, [f"{bindir}/sweeper-bench-latency", "echo", "7999"])
            rtt = fields(bench_tool(bindir, "ping", "198.18.0.2", "7999", str(moves), lab=lab, host=1))
            lab.stop(echo)
            results[f"latency.h{hosts}.rtt_ms"] = rtt["p50_ms"]
            game = new_game(daemons[0], daemons[1:], 200, 200, 8000, 1)
            sockets = [d.socket for d in daemons]

            def timed(what, line_name, prefix, extra=()):
                # One timing run of sweeper-bench-latency: its line's figures as latency.hN.PREFIX* results.
                out = bench_tool(bindir, what, sockets[0], game, str(moves), *sockets[1:])
                line = next(l for l in out.splitlines() if l.startswith(line_name))
                f = fields(line)
                for key, name in [("p50_ms", "p50_ms"), ("p99_ms", "p99_ms"), ("n", "samples"), ("lost", "lost"), *extra]:
                    results[f"latency.h{hosts}.{prefix}{name}"] = f[key]
                log(f"{hosts} hosts: {line}")
                return out

            out = timed("moves", "move-answer-to-event", "", extra=[("before_answer", "before_answer")])
            request = fields(next(l for l in out.splitlines() if l.startswith("move-request-to-event")))
            results[f"latency.h{hosts}.request_p50_ms"] = request["p50_ms"]
            results[f"latency.h{hosts}.request_p99_ms"] = request["p99_ms"]
            if hosts == args.hosts[0]:
                results["latency.fsync_ms"] = fsync_ms(daemons[0].root, 200 if args.quick else 1000)
            if hosts == 2:
                # Moves at a player's pace: what a player feels, with every thread and the disk idle between keys.
                paced = 60 if args.quick else 200
                out = bench_tool(bindir, "paced-moves", sockets[0], game, str(paced), str(PACE_MS), *sockets[1:])
                f = fields(next(l for l in out.splitlines() if l.startswith("paced-move-request-to-event")))
                results["latency.paced2.request_p50_ms"] = f["p50_ms"]
                results["latency.paced2.request_p99_ms"] = f["p99_ms"]
                results["latency.paced2.samples"] = f["n"]
                results["latency.paced2.pace_ms"] = PACE_MS
                results["latency.paced_fsync_ms"] = fsync_ms(daemons[0].root, 30 if args.quick else 100, pace=PACE_MS / 1000)
                log(f"2 hosts, paced: {out.strip().splitlines()[-1]}")
                for name, pace in [("relay_paced_ms", PACE_MS), ("relay_cursor_ms", CURSOR_PACE_MS)]:
                    f = paced_relay(lab, bindir, pace, paced if pace == PACE_MS else min(300, moves))
                    results[f"latency.{name}"] = f["p50_ms"]
                    log(f"2 hosts, bare relay every {pace} ms: p50 {f['p50_ms']} ms")
            if hosts == 2:
                # What each daemon spends on a cursor: its CPU time over the run (every thread), less what it
                # used idle in a window just before (both daemons in the same one), per cursor sent (warm-up
                # included). The window's end is the run's start.
                idle_began, idle_cpu = time.monotonic(), [cpu_ns(d.pid) for d in daemons]
                time.sleep(3 if args.quick else 10)
                cpu_before, cursors_began = [cpu_ns(d.pid) for d in daemons], time.monotonic()
                idle_rates = [(c - c0) / 1e9 / (cursors_began - idle_began) for c0, c in zip(idle_cpu, cpu_before)]
            out = timed("cursors", "cursor-to-event", "cursor_")
            if hosts == 2:
                span = time.monotonic() - cursors_began
                sent = moves + int(fields(next(l for l in out.splitlines() if l.startswith("cursor-to-event")))["warmup"])
                for d, before, rate, role in zip(daemons, cpu_before, idle_rates, ["mover", "other"]):
                    spent = cpu_ns(d.pid) - before - rate * span * 1e9
                    results[f"latency.h2.cursor_cpu_{role}_us"] = max(0.0, spent) / sent / 1000
            if hosts == 4:
                seconds = 3 if args.quick else 10
                out = bench_tool(bindir, "load", game, "20", str(seconds), *[d.socket for d in daemons])
                line = next(l for l in out.splitlines() if l.startswith("load-answer-to-event"))
                f = fields(line)
                results["latency.load4x20.p50_ms"] = f["p50_ms"]
                results["latency.load4x20.p99_ms"] = f["p99_ms"]
                results["latency.load4x20.samples"] = f["n"]
                results["latency.load4x20.lost"] = f["lost"]
                results["latency.load4x20.rate_per_player"] = f["rate_per_player"]
                log(f"load: {line}")
            if hosts == 2 and full:
                stored_and_live(args, bindir, daemons, results)
        finally:
            lab.down()

    if args.baseline:
        # The same two-host moves with an earlier release's daemons and CLI, timed by this build's tool.
        log(f"lab of 2 hosts, baseline {args.baseline}")
        lab = Lab(2)
        try:
            daemons, _ = circle(lab, args.baseline)
            game = new_game(daemons[0], daemons[1:], 200, 200, 8000, 1)
            out = bench_tool(bindir, "moves", daemons[0].socket, game, str(moves), daemons[1].socket)
            line = next(l for l in out.splitlines() if l.startswith("move-answer-to-event"))
            f = fields(line)
            results["latency.base2.p50_ms"], results["latency.base2.p99_ms"] = f["p50_ms"], f["p99_ms"]
            log(f"baseline 2 hosts: {line}")
        finally:
            lab.down()


def fsync_ms(directory, count, pace=0.0):
    """The median time of a 4 KiB write and its fsync, in the directory where a daemon keeps its database:
    the mover's commit waits for one (SQLite in WAL mode, synchronous=FULL). With `pace` (seconds), one
    every `pace`, as a player's moves come: the disk and the thread idle in between, and it costs more."""
    path = os.path.join(directory, "fsync-probe")
    times = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        block = os.urandom(4096)
        for _ in range(count):
            if pace:
                time.sleep(pace)
            t0 = time.perf_counter()
            os.write(fd, block)
            os.fsync(fd)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(path)
    return statistics.median(times) * 1000


def package_section(args, results):
    """The Debian package: its size, what it installs, and the idle memory of the daemon it installs."""
    deb = args.package
    results["package.deb_mb"] = os.path.getsize(deb) / 1e6
    installed_kb = subprocess.run(["dpkg-deb", "-f", deb, "Installed-Size"], capture_output=True, text=True, check=True).stdout
    results["package.installed_mb"] = int(installed_kb.strip()) * 1024 / 1e6
    with tempfile.TemporaryDirectory(prefix="sweeper-bench-pkg-") as tmp:
        subprocess.run(["dpkg-deb", "-x", deb, f"{tmp}/root"], check=True)
        program = f"{tmp}/root/usr/bin/sweeper"
        results["package.binary_mb"] = os.path.getsize(program) / 1e6
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "SWEEPER_SOCKET")}
        env.update(XDG_CONFIG_HOME=f"{tmp}/config", XDG_STATE_HOME=f"{tmp}/state", XDG_RUNTIME_DIR=f"{tmp}/run")
        os.makedirs(f"{tmp}/run", mode=0o700)
        socket = f"{tmp}/run/sweeper/control.sock"
        # The daemon as installed: /usr/bin/sweeperd, a link to the one program. Loopback only, no mDNS.
        proc = subprocess.Popen([f"{tmp}/root/usr/bin/sweeperd", "--no-mdns", "--listen", "127.0.0.1:0", "--name", "bench"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: subprocess.run([program, "--socket", socket, "status"], env=env, capture_output=True).returncode == 0,
                     30, "the packaged daemon answering")
            time.sleep(5)
            results["package.idle_rss_mb"] = rss_mb(proc.pid)
            results["package.idle_anon_mb"] = rss_mb(proc.pid, "RssAnon")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    log(f"package: .deb {results['package.deb_mb']:.1f} MB, installs {results['package.installed_mb']:.1f} MB, "
        f"idle {results['package.idle_rss_mb']:.1f} MB")


def discovery_and_idle(args, lab, daemons, ids, results, repeats):
    """Start-to-linked over mDNS vs avahi-publish-to-avahi-browse; idle memory and CPU."""
    h1, h2 = daemons
    # Which device starts decides who dials. Of two devices that met before, the one with the
    # smaller id dials the other at once; the larger waits (PeerNodeConfiguration's
    # largerIDDialDelay, 1.5 s) for the other to dial it, which it does when mDNS shows it back,
    # so that a circle whose devices start together makes one link a pair. The ids are random,
    # so each side is timed: a device starting beside a running one, smaller id, then larger.
    for side, k in zip(("smaller", "larger"), sorted(range(2), key=lambda k: ids[k])):
        d, other = daemons[k], ids[1 - k]
        times = []
        for _ in range(repeats):
            d.stop()
            time.sleep(1.0)
            t0 = time.monotonic()
            d.launch()
            # The time is read as the answer that shows the link comes, not after asking once more.
            while other not in d.connected():
                if time.monotonic() - t0 > 60:
                    raise RuntimeError(f"h{d.i} did not link to its peer within 60 s of starting:\n{d.log_tail()}")
                time.sleep(0.02)
            times.append(time.monotonic() - t0)
        results[f"discovery.{side}_ms"] = statistics.median(times) * 1000
        log(f"discovery: start to linked, {side} id {[round(t * 1000) for t in times]} ms")

    browse = lab.spawn(2, ["stdbuf", "-oL", "avahi-browse", "-rp", "_sweeperbench._tcp"], stdout=subprocess.PIPE)
    anchor = []
    try:
        for k in range(repeats):
            name = f"bench{k}-{os.getpid()}"
            t0 = time.monotonic()
            pub = lab.spawn(1, ["avahi-publish", "-s", name, "_sweeperbench._tcp", "9999"])
            seen = None
            buffer = b""
            while seen is None and time.monotonic() < t0 + 30:
                ready, _, _ = select.select([browse.stdout], [], [], 0.5)
                if not ready:
                    continue
                chunk = os.read(browse.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk
                for line in buffer.split(b"\n"):
                    if line.startswith(b"=") and name.encode() in line:
                        seen = time.monotonic()
                buffer = buffer.rsplit(b"\n", 1)[-1]
            lab.stop(pub)
            if seen is None:
                raise RuntimeError("avahi-browse in h2 never resolved avahi-publish's service from h1")
            anchor.append(seen - t0)
    finally:
        lab.stop(browse)
    results["discovery.avahi_ms"] = statistics.median(anchor) * 1000
    log(f"discovery: avahi-publish to avahi-browse {[round(t * 1000) for t in anchor]} ms")

    time.sleep(5)
    results["resources.idle_rss_mb"] = rss_mb(h2.pid)
    results["resources.idle_anon_mb"] = rss_mb(h2.pid, "RssAnon")
    results["resources.idle_cpu_percent"] = idle_cpu_percent(h2.pid, 10 if args.quick else 30)
    log(f"idle: {results['resources.idle_rss_mb']:.1f} MB, {results['resources.idle_cpu_percent']:.3f}% of a core")


def stored_and_live(args, bindir, daemons, results):
    """Memory with 200 stored 500×500 games: on the peer that caught up with all of them, and on the
    host that made them after a restart loads them; then with a live 500×500 game."""
    h1, h2 = daemons
    count = 50 if args.quick else 200
    before = len((h2.try_cli("games") or {}).get("games", []))
    for k in range(count):
        h1.cli("new", "--width", "500", "--height", "500", "--mines", "50000", "--seed", str(1000 + k))
    wait_for(lambda: len((h2.try_cli("games") or {}).get("games", [])) >= before + count, 600, f"{count} games on h2")
    # h1 pushed its games live: h2 holds their ops unsigned until h1 pauses
    # (SyncSession.headPause, 10 s) and signs its heads. Measured after that.
    time.sleep(15)
    results["resources.games200.count"] = count
    results["resources.games200_peer_rss_mb"] = rss_mb(h2.pid)
    results["resources.games200_peer_anon_mb"] = rss_mb(h2.pid, "RssAnon")
    h1.stop()
    h1.start()
    time.sleep(3)
    results["resources.games200_rss_mb"] = rss_mb(h1.pid)
    results["resources.games200_anon_mb"] = rss_mb(h1.pid, "RssAnon")
    t0 = time.monotonic()
    game = new_game(h1, [h2], 500, 500, 50000, 7)
    results["resources.new500_ms"] = (time.monotonic() - t0) * 1000
    out = bench_tool(bindir, "moves", h1.socket, game, "200" if args.quick else "1000", h2.socket)
    f = fields(next(l for l in out.splitlines() if l.startswith("move-answer-to-event")))
    results["latency.board500.p50_ms"] = f["p50_ms"]
    results["latency.board500.p99_ms"] = f["p99_ms"]
    time.sleep(2)
    results["resources.live500_rss_mb"] = max(rss_mb(h1.pid), rss_mb(h2.pid))
    results["resources.live500_anon_mb"] = max(rss_mb(h1.pid, "RssAnon"), rss_mb(h2.pid, "RssAnon"))
    log(f"memory: {count} games of 500x500 {results['resources.games200_rss_mb']:.1f} MB after a restart, "
        f"{results['resources.games200_peer_rss_mb']:.1f} MB on the peer; live 500x500 {results['resources.live500_rss_mb']:.1f} MB")


# MARK: The other sections


def best_time(argv, repeats):
    """The best wall-clock time of `repeats` runs of a command, in seconds (its output discarded)."""
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best


def boards_section(args, results):
    """Generation against Tatham's. With --package, the program timed is the packaged one, as a
    player runs it (the Swift runtime linked in); the release build of Benchmarks/ (the runtime in
    shared libraries) is timed beside it on expert, with both programs' start-up."""
    env = dict(os.environ, SKIP_BUILD="1", SCRATCH=args.scratch)
    if not args.quick:
        env["WITH_TATHAM_500"] = "1"
    build = os.path.join(args.bindir, "sweeper")
    def expert(count):
        return ["board", "generate", "--no-guess", "--width", "30", "--height", "16", "--mines", "99", "--count", str(count),
                "--seed", "1"]
    with tempfile.TemporaryDirectory(prefix="sweeper-bench-boards-") as tmp:
        if args.package:
            subprocess.run(["dpkg-deb", "-x", args.package, f"{tmp}/root"], check=True)
            env["SWEEPER"] = f"{tmp}/root/usr/bin/sweeper"
            results["boards.packaged"] = 1
            results["boards.start_ms"] = best_time([env["SWEEPER"], "--version"], 20) * 1000
            # One expert board: the start, the command line and one board's making.
            results["boards.one_expert_ms"] = best_time([env["SWEEPER"]] + expert(1), 20) * 1000
        out = run(["bash", os.path.join(ROOT, "Scripts", "bench-boards.sh")], env=env, timeout=1200)
    sys.stderr.write(out)
    results.update(results_in(out))
    if args.package:
        results["boards.build.30x16n99_s"] = best_time([build] + expert(100), 3)
        results["boards.build.start_ms"] = best_time([build, "--version"], 20) * 1000


def sync_section(args, results):
    env = dict(os.environ, SCRATCH=args.scratch)
    out = run(["bash", os.path.join(ROOT, "Scripts", "bench-sync.sh")], env=env, timeout=1200)
    sys.stderr.write(out)
    results.update(results_in(out))


def viewer_section(args, results):
    out = run([os.path.join(args.bindir, "sweeper-bench-viewer")], timeout=600)
    sys.stderr.write(out)
    results.update(results_in(out))


def membership_section(args, results):
    out = run([os.path.join(args.bindir, "sweeper-bench-membership")], timeout=600)
    sys.stderr.write(out)
    results.update(results_in(out))


# MARK: The report


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = 0
    with open("/proc/meminfo") as f:
        mem = int(next(l for l in f if l.startswith("MemTotal")).split()[1]) / 1024 / 1024
    swift = subprocess.run(["swift", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.splitlines()
    distro = ""
    try:
        with open("/etc/os-release") as f:
            distro = next((l.split("=", 1)[1].strip().strip('"') for l in f if l.startswith("PRETTY_NAME=")), "")
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB memory, {distro}, Linux {platform.release()}, "
            f"{swift[0] if swift else 'swift'}")


def generation_why(ours_s, tatham_s, start_ms, one_ms, inprocess_ms):
    """Where the 100 expert boards' time goes, beside a tenth of Tatham's."""
    if None in (ours_s, tatham_s, start_ms, one_ms, inprocess_ms):
        return []
    one_board = inprocess_ms / 100
    command_line = max(0.0, one_ms - start_ms - one_board)
    return ["", f"Where the 100 expert boards' {fmt(ours_s * 1000, ' ms')} go, against a tenth of Tatham's, "
                f"{fmt(tatham_s * 100, ' ms')}: the program's start, {fmt(start_ms, ' ms')} (`sweeper --version`); "
                f"its command line, {fmt(command_line, ' ms')} (one board's run, {fmt(one_ms, ' ms')}, less the start and "
                f"one board's making; swift-argument-parser builds its parsers by reflection, in a program that is the "
                f"daemon too); and the boards, {fmt(inprocess_ms, ' ms')} for the same 100 in process "
                f"(`sweeper-bench-game`, the release build of `Benchmarks/`, best of 5), "
                f"{inprocess_ms / 1000 / tatham_s:.3f}× Tatham's whole run. Those three add to "
                f"{fmt(start_ms + command_line + inprocess_ms, ' ms')}; the rest is not apportioned (the packaged program "
                "and the release build of `Benchmarks/` are two builds, timed in different runs)."
                + (" The making alone is under a tenth; the start and the command line, paid once a run, take the whole "
                   "over it." if inprocess_ms / 1000 <= tatham_s / 10 < ours_s else "")]


def cursor_why(mover_us, other_us, p50, floor):
    """Why a cursor takes longer than its floor: what the daemons spend on one, which the relays do not."""
    if None in (mover_us, other_us, p50, floor):
        return ""
    return (f" The median is {fmt((p50 - floor) * 1000, ' µs')} above the floor. What the relays do not do, the daemons "
            f"do: a cursor costs the mover's daemon {fmt(mover_us, ' µs')} of CPU and the other's {fmt(other_us, ' µs')}, "
            "beyond what each uses idle (every thread's CPU time over the run, less its idle rate measured just before), "
            "where a relay only copies bytes: the line read and its game looked up, the play clock told, the note "
            "encoded and sealed, the sealed frame opened and decoded, the `presence` event encoded and written. Not all "
            "of it is on the way (the mover's own viewer is sent the cursor too, after the other daemon), but all of it "
            "runs on the two cores that both viewers and the network share.")


def fmt(x, unit=""):
    if x is None:
        return "–"
    if not unit and float(x).is_integer():
        return f"{int(x):,}"
    if abs(x) >= 1000:
        s = f"{x:,.0f}"
    elif abs(x) >= 100:
        s = f"{x:.0f}"
    elif abs(x) >= 10:
        s = f"{x:.1f}"
    elif abs(x) >= 1:
        s = f"{x:.2f}"
    else:
        s = f"{x:.3f}"
    return s + unit


def verdict(ok):
    return "met" if ok else "**not met**"


def report(results, args, started, wall):
    r = results.get
    lines = ["# Benchmarks", "",
             f"Written by `Scripts/bench.sh{' --quick' if args.quick else ''}` on {time.strftime('%Y-%m-%d', time.gmtime(started))} "
             f"in {wall / 60:.1f} minutes of measuring, after the release build. Machine: {machine()}. Release builds. Every figure below comes from that one run; "
             "anchors ran beside ours in the same run. Rerun with `sudo Scripts/bench.sh` (needs root for the network "
             "namespaces; `Scripts/install-deps.sh` installs what it uses).", ""]
    intro = len(lines)
    goals = []

    # Boards.
    if r("boards.9x9n10.ours_s") is not None:
        program = ("the packaged program (the .deb's `/usr/bin/sweeper`, as a player runs it)"
                   if r("boards.packaged") else "the release build of `Benchmarks/`")
        lines += ["## Boards: no-guess generation", "",
                  f"100 boards of each size, best of 3 runs, `sweeper board generate --no-guess` of {program} against Tatham's "
                  "`sgt-mines --generate` (Debian's sgt-puzzles, no-guess by default). Goal: at most 1.0× Tatham, aim 0.5×; "
                  "from expert up, at most 0.1×.", "",
                  "| board | Sweeper | Tatham | ratio | goal |", "|---|---:|---:|---:|---|"]
        for key, label in [("9x9n10", "beginner 9×9/10"), ("16x16n40", "intermediate 16×16/40"),
                           ("30x16n99", "expert 30×16/99"), ("100x100n2000", "100×100/2000")]:
            ours, theirs = r(f"boards.{key}.ours_s"), r(f"boards.{key}.tatham_s")
            if ours is None or theirs is None:
                continue
            ratio = ours / theirs
            goals.append((f"generation {label}", ratio <= 1.0))
            tenth = ""
            if key in ("30x16n99", "100x100n2000"):
                # From expert up, the goal is a tenth of Tatham's time.
                goals.append((f"generation {label} at most 0.1× Tatham", ratio <= 0.1))
                tenth = f"; at most 0.1×: {verdict(ratio <= 0.1)}"
            lines.append(f"| {label} | {fmt(ours, ' s')} | {fmt(theirs, ' s')} | {ratio:.2f}× | "
                         f"{verdict(ratio <= 1.0)}{' (aim 0.5× met)' if ratio <= 0.5 else ''}{tenth} |")
        big, big_t = r("boards.500x500n50000.ours_s"), r("boards.500x500n50000.tatham_s")
        if big is not None:
            lines.append(f"| one 500×500/50000 (20%) | {fmt(big, ' s')} | {fmt(big_t, ' s') if big_t else 'not run'} | "
                         f"{f'{big / big_t:.2f}×' if big_t else '–'} | {verdict(big < 10)} (under 10 s) |")
        if r("boards.flood_500x500_ms") is not None:
            lines += ["", f"Context: opening a 500×500 board with one mine (a flood over 249,999 cells) takes "
                          f"{fmt(r('boards.flood_500x500_ms'), ' ms')} (median of 15)."]
        build_s, expert_t = r("boards.build.30x16n99_s"), r("boards.30x16n99.tatham_s")
        if build_s is not None and expert_t:
            lines += ["", f"Each time above counts the program's start: {fmt(r('boards.start_ms'), ' ms')} for the packaged "
                          f"program (`sweeper --version`, best of 20). The release build of `Benchmarks/`, which loads the "
                          f"Swift runtime from shared libraries, starts in {fmt(r('boards.build.start_ms'), ' ms')} and "
                          f"made the 100 expert boards in {fmt(build_s, ' s')}: {build_s / expert_t:.2f}× Tatham."]
        lines += generation_why(r("boards.30x16n99.ours_s"), expert_t, r("boards.start_ms"), r("boards.one_expert_ms"),
                                r("boards.inprocess.30x16n99_ms"))
        lines.append("")

    # Sync.
    if any(k.startswith("sync.") for k in results):
        lines += ["## Sync: bytes and apply time against Yjs", "",
                  "Recorded multi-player games (real moves with the real engine, players taking turns, 0.3–4.3 s a "
                  "move by the recorded clock) as our ops against the same actions as Yjs updates (pycrdt: one Doc "
                  "per player, one Map keyed by cell, one transaction per action). Ours live = what each player's "
                  "daemon sends a peer linked to it, as it sends it: the game's creator (the creator's: the second "
                  "player), linked before the game began, so that the creator's live genesis named the game (a link "
                  "where neither side named it adds 16 bytes once); its own moves as live pushes (no author key, "
                  "previous hash, membership proof, game id or signature; a reveal is the cell clicked and the "
                  "exceptions to its flood) and "
                  "its chain heads signed every 32 moves, with the move that ends the game, and in a heads message "
                  "after a pause of 10 s and after its last move (Docs/peer-protocol.md, *Live pushes*). Before live "
                  "pushes: one signed op per message, as a peer of version 7 is still sent. Ours catch-up = what the "
                  "creator's daemon sends a device of the circle that holds the genesis and plays in none of them, "
                  "in answer to its summary on a link of version 15: chain segments in the link's compact form, one "
                  "signature per author (*Segments*); the two first summaries before it are not counted, as Yjs's "
                  "state vectors are not; before version 15 the same segments went in an ops message (in brackets). "
                  "Our apply = every message decoded, each op rebuilt (or its "
                  "signature verified, before) and applied, every head signature verified, on a fresh replica, CPU; "
                  "Yjs apply = every update applied to a fresh Doc, CPU; best of 3. Goals: live bytes at most 1.0× "
                  "Yjs; CPU per received move lower than before live pushes.", "",
                  "| game | ops | ours live | heads signed | before live pushes | ours catch-up | Yjs | live/Yjs | catch-up/Yjs | our apply, a move | before, a move | Yjs apply, a move | goal live | goal catch-up | goal CPU |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|"]
        for game, label in [("beginner2", "beginner, 2 players"), ("expert3", "expert, 3 players"),
                            ("huge4", "100×100, 4 players")]:
            live, push, chain, yjs = (r(f"sync.{game}.ours_live_bytes"), r(f"sync.{game}.ours_push_bytes"),
                                      r(f"sync.{game}.ours_chain_bytes"), r(f"sync.{game}.yjs_bytes"))
            if live is None:
                continue
            moves = max(1, (r(f"sync.{game}.actions") or 1))
            live_ratio = live / yjs if yjs else None
            chain_ratio = chain / yjs if yjs and chain else None
            live_cpu, signed_cpu, yjs_cpu = (r(f"sync.{game}.ours_live_apply_ms"), r(f"sync.{game}.ours_apply_ms"),
                                             r(f"sync.{game}.yjs_apply_ms"))
            cpu_ok = live_cpu is not None and signed_cpu is not None and live_cpu < signed_cpu
            if live_ratio is not None:
                goals.append((f"bytes {label}, live pushes", live_ratio <= 1.0))
            if chain_ratio is not None:
                goals.append((f"bytes {label}, catch-up", chain_ratio <= 1.0))
            goals.append((f"CPU per received move {label}, lower than before live pushes", cpu_ok))
            per = lambda ms: None if ms is None else ms * 1000 / moves
            lines.append(
                f"| {label} | {fmt(r(f'sync.{game}.ops'))} | {fmt(live, ' B')} | {fmt(r(f'sync.{game}.ours_live_heads'))} | "
                f"{fmt(push, ' B')} | {fmt(chain, ' B')} ({fmt(r(f'sync.{game}.ours_segments_bytes'), ' B')}) | {fmt(yjs, ' B')} | "
                f"{fmt(live_ratio)}× | {fmt(chain_ratio)}× | {fmt(per(live_cpu), ' µs')} | {fmt(per(signed_cpu), ' µs')} | "
                f"{fmt(per(yjs_cpu), ' µs')} | "
                f"{verdict(live_ratio is not None and live_ratio <= 1.0)} | "
                f"{verdict(chain_ratio is not None and chain_ratio <= 1.0)} | {verdict(cpu_ok)} |")
        summaries = r("sync.beginner2.summary_bytes")
        if summaries is not None:
            lines += ["", f"- The two first summaries a link sends before any catch-up, for the beginner game: "
                          f"{fmt(summaries, ' B')} (each names the game and its authors; the compact segments name the "
                          f"authors by their place in the sender's)."]
        flood = r("sync.flood10.op_bytes")
        if flood is not None:
            lines += ["", f"- The largest flood of a 500×500 board with 25,000 mines (10%): {fmt(r('sync.flood10.cells'))} cells; "
                          f"the flood op is {fmt(flood, ' B')} signed ({fmt(r('sync.flood10.push_bytes'), ' B')} as a signed push), "
                          f"against {fmt(r('sync.flood10.runs_push_bytes'), ' B')} as cell runs before flood ops — goal: op under 200 bytes: "
                          f"{verdict(flood < 200)}."]
            goals.append(("the largest 10% flood of a 500×500 board, op under 200 bytes", flood < 200))
        c = r("sync.catchup_10k_ms")
        lines += ["", f"- Catch-up of a 10,000-op game (decode, verify, apply): {fmt(c, ' ms')} — goal under 20 ms "
                      f"(48.9 ms before the work on catch-up, 10.5 ms in the last release): {verdict(c is not None and c < 20)}.",
                  f"- Apply rate, every signature verified, one core: {fmt(r('sync.apply_rate_ops_per_s'))} ops/s.", ""]
        if c is not None:
            goals.append(("catch-up of 10,000 ops under 20 ms", c < 20))
        scale = sorted({(k.split(".")[1], int(k.split(".")[2])) for k in results if k.startswith("scale.")},
                       key=lambda t: (int(t[0].split("x")[0]) * int(t[0].split("x")[1]), t[1]))
        if scale:
            open500, long500 = r("scale.500x500.50.memory_bytes"), r("scale.500x500.100000.memory_bytes")
            if open500 is not None:
                goals.append(("a 500×500 game just begun (50 ops) in 1 MiB", open500 <= 1024 * 1024))
            if long500 is not None:
                goals.append(("a 500×500 game with 100,000 ops under 5 MiB", long500 < 5 * 1024 * 1024))
            lines += ["### Scale", "", "How catch-up time and a game's memory grow with its ops and its board. Goals: a "
                      "500×500 game just begun in 1 MiB (before the work on memory: 9.3 MiB; the last release: 0.079 MiB), under 5 MiB with "
                      "100,000 ops (two releases before: 79 MiB; the last release: 4.8 MiB). A game's board takes a bit a cell for its "
                      "layout (each number is counted from the bits of three rows when it is read; half a byte a cell before) "
                      "and what is revealed: the cells while fewer than one in 48 are, a bit a cell past that; who uncovered each cell first, 4 bytes a cell once many are; "
                      "each reveal's stamp, 20 bytes; each marked cell's register, 12 bytes. Its ops go to the store: "
                      "memory keeps 8 bytes of each op's hash "
                      "and each author's newest 64 ops, and reads older ones back when a peer catches up from far "
                      "behind, a game is replayed or a removal derives a board again. Memory is the replica as the daemon holds "
                      "it: its ops written to a SQLite store, heap in use with the replica minus after it is freed (SQLite's "
                      "page cache, shared by every game, not counted). Beside it, the same replica with every op in memory, as "
                      "the last release held it. Then the game asleep, as the daemon holds a game nobody uses (its version "
                      "vector and what `games` lists), and the wall time to wake it as the daemon does (the file in the page "
                      "cache): a game of 1,024 ops or more from the frozen board written down as it went to sleep (its state and "
                      "each op's hash prefix) and each author's newest ops, a shorter one by reading its ops back and rebuilding it, "
                      "one chain segment per author as a catch-up brings them. Beside it, that replay for every game, as the "
                      "release before woke them all. Goal: a wake of a 100,000-op game under 50 ms (the release before: 285 ms).", "",
                      "| board | ops | catch-up | memory | every op in memory | asleep | frozen board | woken in | replayed in |",
                      "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
            for board, ops in scale:
                lines.append(f"| {board.replace('x', '×')} | {ops:,} | {fmt(r(f'scale.{board}.{ops}.catchup_ms'), ' ms')} | "
                             f"{fmt((r(f'scale.{board}.{ops}.memory_bytes') or 0) / 1024 / 1024, ' MiB')} | "
                             f"{fmt((r(f'scale.{board}.{ops}.all_held_bytes') or 0) / 1024 / 1024, ' MiB')} | "
                             f"{fmt(r(f'scale.{board}.{ops}.asleep_bytes'), ' B')} | "
                             f"{fmt((r(f'scale.{board}.{ops}.board_bytes') or 0) / 1024, ' KiB')} | "
                             f"{fmt(r(f'scale.{board}.{ops}.wake_ms'), ' ms')} | "
                             f"{fmt(r(f'scale.{board}.{ops}.replay_ms'), ' ms')} |")
            wake = r("scale.500x500.100000.wake_ms")
            if wake is not None:
                goals.append(("a wake of a 100,000-op game under 50 ms", wake < 50))
            lines.append("")

    # The viewer.
    vb = r("viewer.move_bytes")
    if vb is not None:
        lines += ["## The viewer: what a remote move costs it", "",
                  "`sweeper-bench-viewer`, one thread, median of 200 moves: a viewer with a 500×500 board open takes another "
                  "player's flag. It applies the move's `cells` event; the release before fetched the whole board again after "
                  "each event (a `show` answer of 250,000 cells, decoded and loaded). CPU counts decoding, applying, drawing "
                  "and the terminal diff; the daemon's side of a fetch is not counted.", "",
                  "| per remote move | applies the event | fetched the board again (before) |", "|---|---:|---:|",
                  f"| control-socket bytes | {fmt(vb, ' B')} | {fmt(r('viewer.refetch_bytes'), ' B')} |",
                  f"| viewer CPU | {fmt(r('viewer.move_ms'), ' ms')} | {fmt(r('viewer.refetch_ms'), ' ms')} |", ""]

    # Membership.
    d = r("membership.derive4096_ms")
    if d is not None:
        flood = r("membership.flood_longest_ms")
        inc = r("membership.incremental_ms")
        lines += ["## Membership: deriving who is in the circle", "",
                  "`sweeper-bench-membership`, one thread, wall clock, best of 3. A circle of 4,096 budgeted records (a founder "
                  "and 64 members, each at its budget of invitations); every insert checks each new record's signature and "
                  "derives the view again from every record. The daemon takes a peer's records off its event loop, on a copy "
                  "of the circle that replaces the one the loop reads once the insert is done: the loop reads the circle "
                  "with every note a peer sends, and waits for none of those inserts (`CircleMembersWriterTests`). A record "
                  "made here (an invitation, a removal), and the admission of a device that redeems an invitation of "
                  "this one, wait for the insert under way off the loop too (`PeerNodeAdmissionTests`). No insert runs "
                  "on the loop, then; the goal still judges a flood's longest insert, which is how long every change "
                  "made here may wait.", "",
                  "| what | time | goal |", "|---|---:|---|",
                  f"| derive the view, holding 4,096 (one more record: a removal, its signature and the derivation) | "
                  f"{fmt(inc, ' ms')} | under 100 ms, and under 20 ms on the event loop: {verdict(inc is not None and inc < 20)} |",
                  f"| 4,096 records taken in one message (4,096 signatures, one derivation) | {fmt(d, ' ms')} | – |",
                  f"| a flood of 4,096 records, one per message: longest insert | {fmt(flood, ' ms')} | under 20 ms: "
                  f"{verdict(flood is not None and flood < 20)} |",
                  f"| that flood, all inserts | {fmt(r('membership.flood_total_ms'), ' ms')} | – |",
                  f"| a chain of 1,024 admissions (each device admits the next) in one message | {fmt(r('membership.deep1024_ms'), ' ms')} | – |",
                  f"| 64 removals by the founder, one at a time, holding 4,096: longest | "
                  f"{fmt(r('membership.removal_longest_ms'), ' ms')} | – |", ""]
        goals.append(("membership: derive the view of 4,096 records under 100 ms", inc is not None and inc < 100))
        goals.append(("membership: no insert of a record flood holds the event loop 20 ms", flood is not None and flood < 20))

    # Hostile messages.
    if r("floods.heads_outsider_ms") is not None:
        rows = [
            ("a heads message naming 200 sleeping games, signatures forged (a never-admitted key holder)", "heads_outsider", False),
            ("a heads message naming 200 sleeping games, valid signatures of chains signed already (a member)", "heads_member", False),
            ("describe 200 sleeping games (a member taking only its own)", "describe", False),
            ("a non-member's op for each of 200 sleeping games, in one message", "ops_outsider", False),
            ("a member's valid next op in each of 200 sleeping games, in one message", "ops_member", False),
            ("a summary of 1,000,000 made-up games in 10 parts: the longest part", "summary", True),
            ("1,024 membership records of 100 KB naming parents nobody has, one per message: the longest", "records", True),
        ]
        table = ["| one message | event loop held | goal | memory the flood left | goal |", "|---|---:|---|---:|---|"]
        met_all = True
        for what, key, has_mb in rows:
            t = r(f"floods.{key}_ms")
            mb = r(f"floods.{key}_mb") if has_mb else None
            ok_t = t is not None and t < 20
            ok_mb = mb is None or mb < 20
            met_all = met_all and ok_t and ok_mb
            table.append(f"| {what} | {fmt(t, ' ms')} | under 20 ms: {verdict(ok_t)} | "
                         f"{fmt(mb, ' MB') if has_mb else '–'} | {'under 20 MB: ' + verdict(ok_mb) if has_mb else '–'} |")
        lines += ["## Hostile messages: what one costs the event loop", "",
                  "`sweeper-bench-membership`, one thread, wall clock: each message handled by the code the daemon runs "
                  "on its loop for it (the sync session and the replica, or the membership insert), timed alone; for a "
                  "flood, the longest message and the resident memory it left. 200 games of 100×100 with 400 moves each, "
                  f"asleep: waking one takes {fmt(r('floods.wake_one_ms'), ' ms')}, which the release before paid for every "
                  f"game a message named before any check (a heads message of 3 KB held the loop 4.3 s). Games woken by "
                  f"the first four: {fmt(r('floods.woken'), '')}. A message of 16 KiB or more is decoded, and its "
                  "segments' signatures checked, on another thread before its turn (not counted here); on the loop one "
                  "message reads back at most 4,096 ops to wake games or answer a catch-up, and the games past that are "
                  f"woken off it: of the member's {fmt(r('floods.ops_member_sent'), '')}, {fmt(r('floods.ops_member_woken'), '')} "
                  f"woke on the loop and {fmt(r('floods.ops_member_deferred'), '')} were left to wake off it.", ""] + table + [""]
        goals.append(("hostile messages: none holds the event loop 20 ms, no flood leaves 20 MB", met_all))

    # Latency.
    if r("latency.h2.p50_ms") is not None:
        sv = r("latency.sign_verify_ms")
        fs = r("latency.fsync_ms")
        lines += ["## Latency: a keypress on one host to the move on the others", "",
                  "Real daemons in network namespaces on one bridge, linked by mDNS. A move (a flag on a 200×200 "
                  "board) is timed as a player feels it: from its request on the mover's control socket (the key "
                  "pressed) to its `cells` event on every other host's event stream. On the way: the mover's daemon "
                  "signs the op and pushes it to its peers (of peer protocol 18: live, unsigned) before its commit "
                  "(SQLite in WAL mode, `synchronous=FULL`: one fsync, so that nothing answered is lost), and answers "
                  "once it is committed; each peer applies the op and publishes the event. So the fsync "
                  f"({fmt(fs, ' ms')} where the daemons keep their database, a 4 KiB write and its fsync, median) is "
                  "beside the path, not on it: the floor is the sum of the parts on it, measured in the same run: one "
                  f"Ed25519 signature and one verification ({fmt(sv, ' ms')}; a peer verifies no live push, so this "
                  "overstates the floor a little), and half a bare TCP round trip between "
                  "two hosts (64 bytes). The table times moves back to back (each as the last arrives, every thread "
                  "on the way still awake), as the releases before did; a player's keys come slower, and the line "
                  "below it times moves at a player's pace, which is the figure a player feels and the one the 2-host "
                  "goal judges. Goals: 2 hosts p50 at most 1.0 ms; 8 hosts p99 under 5 ms. For context, "
                  "the last columns time the same moves from the mover's answer (which the push beats: those "
                  "count as 0 or less), as the release before reported them.", "",
                  "| hosts | samples | request → arrival p50 | p99 | floor | p50 / floor | bare RTT p50 | p50 goal | p99 goal | answer → arrival p50 | p99 | arrived before the answer |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"]
        for hosts in sorted({int(k.split(".")[1][1:]) for k in results if re.match(r"latency\.h\d+\.p50_ms", k)}):
            p50, p99, rtt = r(f"latency.h{hosts}.p50_ms"), r(f"latency.h{hosts}.p99_ms"), r(f"latency.h{hosts}.rtt_ms")
            q50, q99 = r(f"latency.h{hosts}.request_p50_ms"), r(f"latency.h{hosts}.request_p99_ms")
            if p50 is None or q50 is None or q99 is None:
                continue
            floor = sv + rtt / 2
            # The 2-host goal is judged at a player's pace (the line below the table) when that ran.
            paced50 = r("latency.paced2.request_p50_ms")
            p50_goal = (paced50 if paced50 is not None else q50) <= 1.0 if hosts == 2 else None
            p99_goal = q99 < 5 if hosts == 8 else None
            if p50_goal is not None:
                goals.append(("a move from keypress to the other host at a player's pace, 2 hosts, p50 at most 1.0 ms"
                              if paced50 is not None else "a move from keypress to the other host, 2 hosts, p50 at most 1.0 ms",
                              p50_goal))
            if p99_goal is not None:
                goals.append(("a move from keypress to the other hosts, 8 hosts, p99 under 5 ms", p99_goal))
            lost = r(f"latency.h{hosts}.lost") or 0
            lines.append(f"| {hosts} | {fmt(r(f'latency.h{hosts}.samples'))}{f' ({lost:.0f} lost)' if lost else ''} | "
                         f"{fmt(q50, ' ms')} | {fmt(q99, ' ms')} | {fmt(floor, ' ms')} | {q50 / floor:.2f}× | {fmt(rtt, ' ms')} | "
                         f"{('at pace, below' if paced50 is not None else verdict(p50_goal)) if p50_goal is not None else '–'} | "
                         f"{verdict(p99_goal) if p99_goal is not None else '–'} | "
                         f"{fmt(p50, ' ms')} | {fmt(p99, ' ms')} | {fmt(r(f'latency.h{hosts}.before_answer'))} |")
        paced50, paced99, pfs = r("latency.paced2.request_p50_ms"), r("latency.paced2.request_p99_ms"), r("latency.paced_fsync_ms")
        rtt2 = r("latency.h2.rtt_ms")
        relay_paced, relay_cursor = r("latency.relay_paced_ms"), r("latency.relay_cursor_ms")
        if paced50 is not None and paced99 is not None and pfs is not None and rtt2 is not None:
            pfloor = sv + (relay_paced if relay_paced is not None else rtt2 / 2)
            lines += ["", f"At a player's pace, 2 hosts, one move every {fmt(r('latency.paced2.pace_ms'))} ms: "
                          f"{fmt(r('latency.paced2.samples'))} moves, request → arrival p50 **{fmt(paced50, ' ms')}**, "
                          f"p99 {fmt(paced99, ' ms')} (goal p50 at most 1.0 ms: {verdict(paced50 <= 1.0)}). Its floor is "
                          f"{fmt(pfloor, ' ms')} ({pfloor and paced50 / pfloor:.2f}× it): a signature and its verification, and "
                          + (f"the path itself at the same pace with nothing done on the way ({fmt(relay_paced, ' ms')}: 64 bytes "
                             "from the measuring process over a unix socket to a relay in h1, over TCP to a relay in h2, over a "
                             "unix socket back; each process on the way, and the network, woken from idle, which no figure back "
                             "to back shows). The fsync after the same pause, beside the path, took "
                             f"{fmt(pfs, ' ms')} (against {fmt(fs, ' ms')} back to back)." if relay_paced is not None else
                             "half a bare round trip; every thread on the way (the viewer's, both daemons', the network's) also "
                             "wakes from idle, which no figure back to back shows.")]
        if r("latency.load4x20.p50_ms") is not None:
            p50, p99 = r("latency.load4x20.p50_ms"), r("latency.load4x20.p99_ms")
            goals.append(("latency p99 under load (answer to arrival)", p99 < 5))
            lines += ["", f"Under load, 4 hosts, each a player making {fmt(r('latency.load4x20.rate_per_player'))} moves/s: "
                          f"{fmt(r('latency.load4x20.samples'))} moves from the answer to their arrival, p50 {fmt(p50, ' ms')}, "
                          f"p99 {fmt(p99, ' ms')} (goal under 5 ms: {verdict(p99 < 5)})."]
        p50, p99 = r("latency.h2.p50_ms"), r("latency.h2.p99_ms")
        b50, b99 = r("latency.base2.p50_ms"), r("latency.base2.p99_ms")
        if p50 is not None and p99 is not None and b50 is not None and b99 is not None:
            lines += ["", f"Two hosts against an earlier release ({args.baseline}: its daemons and CLI in the same lab, "
                          f"right after ours, timed by the same tool): ours p50 {fmt(p50, ' ms')}, p99 {fmt(p99, ' ms')}; "
                          f"it p50 {fmt(b50, ' ms')}, p99 {fmt(b99, ' ms')} — goal no worse: p50 {verdict(p50 <= b50)}, "
                          f"p99 {verdict(p99 <= b99)}."]
            goals.append(("latency p50, 2 hosts, no worse than the earlier release", p50 <= b50))
            goals.append(("latency p99, 2 hosts, no worse than the earlier release", p99 <= b99))
        cursor_hosts = sorted({int(k.split(".")[1][1:]) for k in results if re.match(r"latency\.h\d+\.cursor_p50_ms", k)})
        if cursor_hosts:
            c50 = r("latency.h2.cursor_p50_ms")
            if c50 is not None:
                goals.append(("a cursor to the other viewer, 2 hosts, p50 under 0.5 ms", c50 < 0.5))
            cfloor = relay_cursor + sv if relay_cursor is not None else None
            lines += ["", "Cursors, beside the moves: a viewer's cursor moved on h1 (a `cursor` line on its subscription, "
                          "one move every 60 ms, slower than the 20-a-second coalescing) to the `presence` event with that "
                          f"cell on every other host's event stream. Goal: 2 hosts p50 under 0.5 ms: "
                          f"{verdict(c50 is not None and c50 < 0.5)}."
                          + (f" Its floor, 2 hosts: {fmt(cfloor, ' ms')} ({c50 / cfloor:.2f}× it), the same path at the same pace "
                             f"with relays in place of the daemons ({fmt(relay_cursor, ' ms')}, as above) plus the note's signature "
                             "and its verification." if cfloor is not None and c50 is not None else "")
                          + cursor_why(r("latency.h2.cursor_cpu_mover_us"), r("latency.h2.cursor_cpu_other_us"), c50, cfloor),
                      "",
                      "| hosts | samples | cursor p50 | cursor p99 | move p50 | move p99 |", "|---|---:|---:|---:|---:|---:|"]
            for hosts in cursor_hosts:
                lost = r(f"latency.h{hosts}.cursor_lost") or 0
                lines.append(f"| {hosts} | {fmt(r(f'latency.h{hosts}.cursor_samples'))}{f' ({lost:.0f} lost)' if lost else ''} | "
                             f"{fmt(r(f'latency.h{hosts}.cursor_p50_ms'), ' ms')} | {fmt(r(f'latency.h{hosts}.cursor_p99_ms'), ' ms')} | "
                             f"{fmt(r(f'latency.h{hosts}.p50_ms'), ' ms')} | {fmt(r(f'latency.h{hosts}.p99_ms'), ' ms')} |")
        if r("latency.board500.p50_ms") is not None:
            lines += ["", f"Context: on a live 500×500 board between two hosts, p50 {fmt(r('latency.board500.p50_ms'), ' ms')}, "
                          f"p99 {fmt(r('latency.board500.p99_ms'), ' ms')}."]
        lines.append("")

    if r("discovery.smaller_ms") is not None:
        smaller, larger, avahi = r("discovery.smaller_ms"), r("discovery.larger_ms"), r("discovery.avahi_ms")
        lines += ["## Discovery", "",
                  "From starting `sweeperd` on one host (the other's running, the two met before) to it listing "
                  "the other as connected — process start, database open, a dial of the address it met the other "
                  "at or mDNS browse and resolve, TCP, handshake — beside Avahi's own announcement time: from "
                  "starting `avahi-publish` on h1 to `avahi-browse -r` on h2 printing the resolved service. "
                  "Medians of several runs. Of two devices, the one with the smaller id dials at once; the "
                  "larger waits up to 1.5 s for the other to dial it, which the other does as soon as mDNS shows "
                  "it back, so that devices that start together make one link a pair, not two (the ids are "
                  "random: each side is timed).", "",
                  "| | Sweeper | avahi-publish → avahi-browse | ratio |", "|---|---:|---:|---:|",
                  f"| start to first peer, the starting device's id the smaller | {fmt(smaller, ' ms')} | {fmt(avahi, ' ms')} | {smaller / avahi:.2f}× |",
                  f"| start to first peer, its id the larger | {fmt(larger, ' ms')} | {fmt(avahi, ' ms')} | {larger / avahi:.2f}× |", ""]

    if r("resources.idle_rss_mb") is not None:
        rss, cpu = r("resources.idle_rss_mb"), r("resources.idle_cpu_percent")
        goals.append(("idle resident memory under 30 MB", rss < 30))
        goals.append(("idle CPU under 0.5% of a core", cpu < 0.5))
        stored, peer = r("resources.games200_rss_mb"), r("resources.games200_peer_rss_mb")
        n = fmt(r("resources.games200.count"))
        if stored is not None and peer is not None:
            goals.append((f"{n} stored 500×500 games under 100 MB, after a restart", stored < 100))
            goals.append((f"{n} stored 500×500 games under 100 MB, on the peer that caught up", peer < 100))
        per_game = None
        if r("resources.games200_anon_mb") is not None and r("resources.idle_anon_mb") is not None:
            per_game = (r("resources.games200_anon_mb") - r("resources.idle_anon_mb")) * 1024 / r("resources.games200.count")
        lines += ["## Resources", "",
                  "Resident memory (VmRSS) and CPU of `sweeperd` (release build, Swift runtime and FoundationEssentials "
                  "as shared libraries) in the lab. In brackets, the private part (RssAnon): the rest is pages of shared "
                  "libraries (the Swift runtime, FoundationEssentials, SQLite, the binary's own code), which other "
                  "Swift programs share; the last release also loaded full Foundation and ICU, and idled at 40.5 MB. "
                  "The earlier release held 36 bytes a cell of every game in memory (about 9 MB "
                  "a 500×500 game): 200 such games took a member to 1.87 GB. The last release held each stored game's "
                  "board, layout and newest ops (about 54 KB private a 500×500 game, measured so); a game nobody uses now sleeps, "
                  "its version vector and what `games` lists kept, the rest read back from the store when a player or "
                  "a peer needs it.", "",
                  "| state | figure | goal |", "|---|---:|---|",
                  f"| idle, one peer linked, no games | {fmt(rss, ' MB')} ({fmt(r('resources.idle_anon_mb'), ' MB')}) | "
                  f"under 30 MB: {verdict(rss < 30)} |",
                  f"| idle CPU over {10 if args.quick else 30} s, linked (pings, anti-entropy) | {fmt(cpu, '%')} of a core | "
                  f"under 0.5%: {verdict(cpu < 0.5)} |",
                  f"| {n} stored 500×500 games (50,000 mines each), after a restart loads them | {fmt(stored, ' MB')} "
                  f"({fmt(r('resources.games200_anon_mb'), ' MB')}) | under 100 MB: {verdict(stored is not None and stored < 100)} |",
                  f"| of that, private memory per stored game: (the above − idle) ÷ {n}, SQLite's page cache "
                  f"(at most 2 MB) included | {fmt(per_game, ' KB')} | – |",
                  f"| the same games on the peer, once it caught up with all of them and their head signatures came | {fmt(peer, ' MB')} "
                  f"({fmt(r('resources.games200_peer_anon_mb'), ' MB')}) | under 100 MB: {verdict(peer is not None and peer < 100)} |",
                  f"| then a live 500×500 game (50,000 mines), moves made | {fmt(r('resources.live500_rss_mb'), ' MB')} "
                  f"({fmt(r('resources.live500_anon_mb'), ' MB')}) | – |",
                  f"| making that 500×500 game, to it being on both hosts | {fmt(r('resources.new500_ms'), ' ms')} | – |", ""]

    if r("package.deb_mb") is not None:
        deb, installed, idle = r("package.deb_mb"), r("package.installed_mb"), r("package.idle_rss_mb")
        goals.append(("the .deb under 12 MB", deb < 12))
        goals.append(("installed under 45 MB", installed < 45))
        goals.append(("idle resident memory of the packaged daemon under 20 MB", idle < 20))
        lines += ["## The package", "",
                  "`Packaging/build-deb.sh`: one static program (the Swift runtime and FoundationEssentials inside), "
                  "installed as `sweeper` and, by a link, as `sweeperd` (it is the daemon when called so). The release "
                  "before last shipped two static programs of 64 and 72 MB: a .deb of 34 MB that installed 136 MB, "
                  "whose daemon idled at 33 MB; the last release's one program, with full Foundation and its ICU "
                  "(about 30 MB of data, for GRDB's `DateFormatter`), made a .deb of 18.4 MB that installed 74.4 MB and "
                  "idled at 34.4 MB. Nothing links full Foundation now: the store speaks to SQLite through its C API, "
                  "and dates, numbers and names are formatted and compared by the C library and the standard library. "
                  "The kernel maps a program's code 64 KiB around each page it first runs; the idle daemon runs some 170 "
                  "places spread over 16 MB of code, and so mapped 13 MB of it (22.3 MB idle in the last run before). "
                  "The program is now linked by lld with each function in a section of its own, the functions a daemon "
                  "runs to start, serve and idle placed together (`Packaging/hot-functions.txt`, made by "
                  "`Packaging/order-functions.sh` under callgrind), and its relative relocations packed (RELR: 12 KB for "
                  "the loader to read at each start, not 1.4 MB). "
                  "The idle daemon below is the packaged one, "
                  "started alone on loopback without mDNS; in brackets its private memory (RssAnon): the rest is the "
                  "program's own pages, shared with every `sweeper` command running.", "",
                  "| | figure | goal |", "|---|---:|---|",
                  f"| .deb | {fmt(deb, ' MB')} | under 12 MB: {verdict(deb < 12)} |",
                  f"| installed | {fmt(installed, ' MB')} | under 45 MB: {verdict(installed < 45)} |",
                  f"| the one program, stripped | {fmt(r('package.binary_mb'), ' MB')} | – |",
                  f"| idle daemon | {fmt(idle, ' MB')} ({fmt(r('package.idle_anon_mb'), ' MB')}) | under 20 MB: {verdict(idle < 20)} |", ""]

    import bench_web
    lines += bench_web.render(r, goals, fmt, verdict)
    import bench_hosted
    lines += bench_hosted.render(r, goals, fmt, verdict)
    import bench_startup
    lines += bench_startup.render(r, goals, fmt, verdict)
    import bench_classroom
    lines += bench_classroom.render(r, goals, fmt, verdict)

    met = [g for g in goals if g[1]]
    missed = [g for g in goals if not g[1]]
    summary = ["## Goals", "", f"{len(met)} of {len(goals)} goals met."]
    if missed:
        summary += ["", "Missed:"] + [f"- {name}" for name, _ in missed]
    summary.append("")
    lines[intro:intro] = summary
    lines += ["## Raw figures", "", "```"] + [f"{k} {v:g}" for k, v in sorted(results.items())] + ["```", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description="Runs every benchmark and writes BENCHMARKS.md.")
    parser.add_argument("--quick", action="store_true", help="fewer moves and repeats")
    parser.add_argument("--only", default="boards,sync,lab,web,hosted,startup,classroom",
                        help="comma-separated: boards, sync, lab (latency, discovery, resources), latency (alone), web, hosted, startup, classroom")
    parser.add_argument("--hosts", default="2,4,8", help="lab sizes for latency, comma-separated (2 to 9)")
    parser.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    parser.add_argument("--bindir", required=True, help="the release binaries")
    parser.add_argument("--scratch", default="Benchmarks/.build", help="the build directory (for bench-sync.sh)")
    parser.add_argument("--package", help="the Debian package built by Packaging/build-deb.sh: its size and its idle daemon")
    parser.add_argument("--baseline", help="an earlier release's binaries (sweeperd, sweeper): two-host move latency beside ours")
    args = parser.parse_args()
    sections = set(args.only.split(","))
    unknown = sections - {"boards", "sync", "lab", "latency", "web", "hosted", "startup", "classroom"}
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; allowed: boards, sync, lab, latency, web, hosted, startup, classroom")
    try:
        args.hosts = [int(h) for h in args.hosts.split(",")]
        assert all(2 <= h <= 9 for h in args.hosts)
    except (ValueError, AssertionError):
        parser.error(f"--hosts takes sizes from 2 to 9, comma-separated, not {args.hosts!r}")
    started = time.time()
    results = {}
    if "boards" in sections:
        log("boards")
        boards_section(args, results)
    if "sync" in sections:
        log("sync")
        sync_section(args, results)
        log("membership")
        membership_section(args, results)
        log("viewer")
        viewer_section(args, results)
    if "lab" in sections or "latency" in sections:
        lab_section(args, args.bindir, results, full="lab" in sections)
    if "web" in sections:
        log("web")
        import bench_web
        results.update(bench_web.section(args.bindir, args.quick))
    if "hosted" in sections:
        log("hosted")
        import bench_hosted
        results.update(bench_hosted.section(args.bindir, args.quick))
    if "startup" in sections:
        log("startup")
        import bench_startup
        results.update(bench_startup.section(args.bindir, args.quick))
    if "classroom" in sections:
        log("classroom")
        import bench_classroom
        results.update(bench_classroom.section(args.bindir, args.quick))
    if args.package:
        log("package")
        package_section(args, results)
    text = report(results, args, started, time.time() - started)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    log(f"wrote {args.out} in {(time.time() - started) / 60:.1f} minutes")


if __name__ == "__main__":
    main()
