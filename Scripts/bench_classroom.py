#!/usr/bin/env python3
"""A classroom: a circle of 32 real daemons in the lab, every one linked to every other.

    sudo python3 Scripts/bench_classroom.py --bindir Benchmarks/.build/release [--hosts 32] [--quick]

The lab of Scripts/netns-lab.sh: each host a network namespace on one bridge with its
own D-Bus and avahi-daemon, each daemon found by mDNS alone. One circle (h1 invites,
the others join), then every daemon restarts at once: the time from the restart to
every daemon linked to every other (a full mesh: N×(N−1)/2 links). Idle, from 120 s
after linking for 120 s (20 and 10 with --quick), and again 10 to 40 s after linking:
each daemon's CPU (schedstat), memory (VmRSS) and the bytes its host sent on the wire
(the bridge port's counter: mDNS included). A move on h1 to each of
the others (`sweeper-bench-latency moves`): per watcher, and to the last of them. Then
h<N> stops, the others play a lesson's worth of moves (`sweeper-bench-latency load`),
and h<N> starts again: the time until it holds the game as h1 does.

It prints `result: classroom.KEY VALUE` lines; render() below says what each is, for
Scripts/bench.py. Needs root. Every process started is stopped by its pid; traffic
stays on the lab's 198.18.0.0/24.
"""

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the lab, the daemons and the circle)


def log(message):
    sys.stderr.write(f"[classroom] {message}\n")
    sys.stderr.flush()


def sent_bytes(lab, i):
    """What host i has sent on the wire: the receive counter of its port on the lab's bridge."""
    prefix = open(f"{lab.dir}/prefix").read().strip()
    out = subprocess.run(["ip", "netns", "exec", f"{prefix}sw", "cat", f"/sys/class/net/{prefix}p{i}/statistics/rx_bytes"],
                         capture_output=True, text=True, timeout=10)
    return int(out.stdout.strip() or 0)


def linked_at(d, offset, peers):
    """When daemon `d`'s links last became all `peers` of them (a wall-clock time), replaying the
    `peer linked` and `peer unlinked` lines of its log from byte `offset` (a duplicate link closed
    leaves one of each)."""
    with open(f"{d.root}/log", "rb") as f:
        f.seek(offset)
        lines = f.read().decode(errors="replace").splitlines()
    up, when = set(), None
    for line in lines:
        m = re.match(r"(\d{4}-\d\d-\d\dT[\d:.]+) \w+ sweeperd: peer (linked|unlinked) peer=(\w+)", line)
        if not m:
            continue
        (up.add if m.group(2) == "linked" else up.discard)(m.group(3))
        if len(up) < peers:
            when = None
        elif when is None:
            when = datetime.datetime.fromisoformat(m.group(1)).timestamp()
    if when is None:
        raise RuntimeError(f"h{d.i}'s log never showed all {peers} of its links up")
    return when


def full_mesh(daemons, ids):
    return all(d.connected() >= set(ids) - {ids[k]} for k, d in enumerate(daemons))


def sample(lab, daemons, seconds):
    """Each daemon's CPU (% of a core) and its host's bytes sent a second, over `seconds`."""
    c0 = [bench.cpu_ns(d.pid) for d in daemons]
    b0 = [sent_bytes(lab, d.i) for d in daemons]
    w0 = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - w0
    return {"cpu_percent": [100.0 * (bench.cpu_ns(d.pid) - c) / 1e9 / wall for d, c in zip(daemons, c0)],
            "bytes_per_s": [(sent_bytes(lab, d.i) - b) / wall for d, b in zip(daemons, b0)]}


def record(results, window, figures):
    """Each per-device figure of `window` as its mean and its max."""
    for name, values in figures.items():
        results[f"classroom.{window}_{name}_mean"] = statistics.mean(values)
        results[f"classroom.{window}_{name}_max"] = max(values)


def digest(d, game):
    shown = d.try_cli("show", game)
    return shown.get("digest") if shown else None


def measure(bindir, hosts, quick):
    results = {"classroom.hosts": hosts}
    lab = bench.Lab(hosts)
    try:
        daemons = [bench.Daemon(lab, i, bindir) for i in range(1, hosts + 1)]
        for d in daemons:
            d.start()
        for d in daemons[1:]:
            code = daemons[0].cli("invite")["code"]
            bench.wait_for(lambda: d.try_cli("join", code) is not None, 120, f"h{d.i} to join by mDNS")
        log(f"{hosts} daemons joined one circle")
        for d in daemons:
            d.stop()
        # Every daemon starts at once, at the daemon's default log level (info): each logs a line
        # when a link comes up or goes, and those lines time the start. A poller asking 32 daemons
        # for their peers again and again would share the two cores with them, slow their start and
        # time itself (in this lab it saw the mesh whole 4.6 to 16 s after the daemons' lines did):
        # it asks once a second, only to know when to stop.
        offsets = {}
        for d in daemons:
            d.log_level = "info"
            offsets[d.i] = os.path.getsize(f"{d.root}/log") if os.path.exists(f"{d.root}/log") else 0
        wall0, t0 = time.time(), time.monotonic()
        for d in daemons:
            d.launch()
        ids = [bench.wait_for(lambda: d.try_cli("status"), 60, f"h{d.i} to answer")["peer"] for d in daemons]
        bench.wait_for(lambda: full_mesh(daemons, ids), 300, f"{hosts} daemons to link to each other", interval=1.0)
        polled = time.monotonic() - t0
        linked = max(linked_at(d, offsets[d.i], hosts - 1) for d in daemons) - wall0
        results["classroom.linked_s"] = linked
        results["classroom.linked_polled_s"] = polled
        log(f"all {hosts * (hosts - 1) // 2} links up {linked:.1f} s after every daemon was started, by their logs "
            f"(the poller, asking once a second, saw it at {polled:.1f} s)")

        # Just after the start, mDNS still asks often: every resolver Avahi
        # opened queries at 1, 2, 4, ... s. Idle is measured once that has
        # backed off, over one refresh period of Avahi's host records (their
        # TTL is 120 s; each is asked again at 80% of it).
        time.sleep(10)
        start = sample(lab, daemons, 10 if quick else 30)
        record(results, "start", start)
        settle = 20 if quick else 120
        time.sleep(max(0.0, t0 + linked + settle - time.monotonic()))
        idle = sample(lab, daemons, 10 if quick else 120)
        idle["rss_mb"] = [bench.rss_mb(d.pid) for d in daemons]
        record(results, "idle", idle)
        cpu, rate, rss = idle["cpu_percent"], idle["bytes_per_s"], idle["rss_mb"]
        log(f"10 to 40 s after linking, per device: {statistics.mean(start['bytes_per_s']):.0f} B/s sent "
            f"(max {max(start['bytes_per_s']):.0f}), CPU {statistics.mean(start['cpu_percent']):.3f}%")
        log(f"idle from {settle} s after linking, per device: CPU {statistics.mean(cpu):.3f}% of a core (max {max(cpu):.3f}), "
            f"{statistics.mean(rate):.0f} B/s sent (max {max(rate):.0f}), {statistics.mean(rss):.1f} MB (max {max(rss):.1f})")

        game = bench.new_game(daemons[0], daemons[1:], 200, 200, 8000, 1)
        count = 30 if quick else 100
        out = bench.bench_tool(bindir, "moves", daemons[0].socket, game, str(count), *[d.socket for d in daemons[1:]])
        for line in out.splitlines():
            f = bench.fields(line) if " p50_ms=" in line else None
            if not f:
                continue
            key = {"move-request-to-event": "move", "move-request-to-all": "move_all"}.get(line.split()[0])
            if key:
                results[f"classroom.{key}_p50_ms"], results[f"classroom.{key}_p99_ms"] = f["p50_ms"], f["p99_ms"]
                results[f"classroom.{key}_samples"] = f["n"]
                if "lost" in f:
                    results[f"classroom.{key}_lost"] = f["lost"]
                log(line)

        # h<N> leaves; four others play a lesson's worth of moves; h<N> comes back.
        away = daemons[-1]
        away.stop()
        players, rate_per_player = daemons[:min(4, hosts - 1)], 20
        play = 10 if quick else 45
        out = bench.bench_tool(bindir, "load", game, str(rate_per_player), str(play), *[d.socket for d in players])
        made = bench.fields(next(l for l in out.splitlines() if l.startswith("load-answer-to-event")))["moves"]
        results["classroom.catchup_moves"] = made
        target = digest(daemons[0], game)
        bench.wait_for(lambda: all(digest(d, game) == target for d in daemons[1:-1]), 120, "the others to agree")
        t0 = time.monotonic()
        away.launch()
        bench.wait_for(lambda: digest(away, game) == target, 300, f"h{away.i} to catch up")
        results["classroom.catchup_s"] = time.monotonic() - t0
        log(f"h{away.i}, away for {made:.0f} moves, held the game as h1 does {results['classroom.catchup_s']:.2f} s after it started")
    finally:
        lab.down()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bindir", required=True)
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        parser.error("needs root (network namespaces)")
    if not 2 <= args.hosts <= 200:
        parser.error("--hosts takes 2 to 200")
    for key, value in sorted(measure(args.bindir, args.hosts, args.quick).items()):
        print(f"result: {key} {value:.3f}")


def section(bindir, quick):
    """Runs this benchmark as Scripts/bench.py's `classroom` section; its results."""
    argv = [sys.executable, os.path.abspath(__file__), "--bindir", bindir] + (["--quick"] if quick else [])
    return bench.sub_benchmark(argv, timeout=3600)


def render(r, goals, fmt, verdict):
    """The report's section for a classroom, and its goals appended to `goals`."""
    linked = r("classroom.linked_s")
    if linked is None:
        return []
    n = int(r("classroom.hosts") or 0)
    p99_all, cpu, rate = r("classroom.move_all_p99_ms"), r("classroom.idle_cpu_percent_max"), r("classroom.idle_bytes_per_s_max")
    checks = [(f"{n} devices all linked within 10 s of starting", linked < 10),
              (f"a move to all {n - 1} others, p99 under 20 ms", p99_all is not None and p99_all < 20),
              (f"{n} devices idle: under 1% of a core each", cpu is not None and cpu < 1),
              (f"{n} devices idle: under 1 KB/s each on the wire", rate is not None and rate < 1024)]
    goals.extend(checks)
    return ["## A classroom: 32 devices", "",
            f"{n} real daemons in the lab (each in a network namespace with its own D-Bus and avahi-daemon, on one bridge, "
            "found by mDNS alone), one circle, every device linked to every other (a full mesh): `Scripts/bench_classroom.py`. "
            "Two cores hold all of them: every figure below is paid by the same two cores the whole class shares, where each "
            "pupil's device would have its own. Start: every daemon restarted at once (at its default log level, info), until "
            "each is linked to every other, as the lines each logs when a link comes up or goes tell (a poller asking "
            "each daemon for its peers, once a second, says when to stop; its calls, one `sweeper` process each, wait behind the "
            "start's work on the two shared cores, and the row below the links says when it saw them all). "
            "Idle: from 120 s after the links are up, over 120 s (one refresh period of Avahi's host records, "
            "whose TTL is 120 s), each daemon's CPU (schedstat), memory (VmRSS) and what its host sent on the wire "
            "(its bridge port's counter, mDNS included); the same from 10 to 40 s after the links are up, while every "
            "new Avahi resolver still asks at 1, 2, 4, ... s. A move: flags on h1, from the request to the `cells` event on each "
            "other daemon's event stream (per watcher), and to the last of them (per move). Catch-up: the last device stops, "
            "four others make the moves below at 20 a second each, and it starts again: until it holds the game as h1 does "
            "(its start and its links included).", "",
            "| | figure | goal |", "|---|---:|---|",
            f"| all {n * (n - 1) // 2} links up after a start | {fmt(linked, ' s')} | under 10 s: {verdict(checks[0][1])} |",
            f"| every daemon answering `status` and listing every other as connected, asked in turn | "
            f"{fmt(r('classroom.linked_polled_s'), ' s')} | – |",
            f"| a move to one other, p50 / p99 | {fmt(r('classroom.move_p50_ms'), ' ms')} / {fmt(r('classroom.move_p99_ms'), ' ms')} | – |",
            f"| a move to all {n - 1} others, p50 / p99 | {fmt(r('classroom.move_all_p50_ms'), ' ms')} / {fmt(p99_all, ' ms')} | "
            f"p99 under 20 ms: {verdict(checks[1][1])} |",
            f"| idle CPU a device, mean (max) | {fmt(r('classroom.idle_cpu_percent_mean'), '%')} ({fmt(cpu, '%')}) | under 1%: {verdict(checks[2][1])} |",
            f"| idle bytes sent a second a device, mean (max) | {fmt(r('classroom.idle_bytes_per_s_mean'), ' B/s')} ({fmt(rate, ' B/s')}) | "
            f"under 1 KB/s: {verdict(checks[3][1])} |",
            f"| bytes sent a second a device 10 to 40 s after the start, mean (max) | "
            f"{fmt(r('classroom.start_bytes_per_s_mean'), ' B/s')} ({fmt(r('classroom.start_bytes_per_s_max'), ' B/s')}) | – |",
            f"| memory a device, mean (max) | {fmt(r('classroom.idle_rss_mb_mean'), ' MB')} ({fmt(r('classroom.idle_rss_mb_max'), ' MB')}) | – |",
            f"| catch-up of a device away for {fmt(r('classroom.catchup_moves'))} moves | {fmt(r('classroom.catchup_s'), ' s')} | – |", ""]


if __name__ == "__main__":
    main()
