#!/usr/bin/env bash
# The house rules that a script can check, run first by Scripts/test.sh (so
# by CI). Each broken rule prints one line naming the file and the rule,
# and the script exits 1; it prints nothing else when every rule holds.
#
#   bash Scripts/check.sh [ROOT]     (ROOT: the repository, by default this one)
#
# The rules:
#   - no source file under Sources/ is over 600 lines (split a big type by
#     aspect, Type+Aspect.swift, as swift-nio does);
#   - in the daemon, only the control part (Sources/SweeperDaemon/Control/),
#     the composition root (Daemon.swift, DaemonCore.swift) and the
#     settings (Settings/Configuration.swift: the new-game defaults are the
#     control protocol's) import SweeperControl: the games, the peers and
#     the circle know nothing of the control protocol;
#   - the daemon's folders are layers, each above those before it:
#     Settings, System, Web, Players, Games, Circle, Peers, Control, and the
#     composition root (the files directly in Sources/SweeperDaemon); a
#     file names no type declared in a layer above its own (comments
#     aside), so that the parts form no cycle: a part above hands a part
#     below what it needs as a protocol the lower part declares;
#   - the daemon reads the time only through its clock (System/DaemonClock):
#     Date(), Task.sleep and ContinuousClock elsewhere may not grow past
#     the counts in Scripts/check-budgets.txt (they are being moved to the
#     clock: lower a count when a file needs fewer);
#   - nothing stops processes by name: no `pkill -f` or `killall` in
#     Scripts/, Tests/ or .ci/ (a process started is stopped by its pid);
#   - no `fatalError(` or `try!` in Sources/: input never crashes the daemon;
#   - no closure held directly as a lock's value (Mutex, NIOLockedValueBox,
#     NIOLoopBoundBox), alone, optional or in a tuple: the compiler wraps it
#     in two conversion thunks each time `withLock` lends it, so each call
#     runs through those of every call before (hold it in a struct);
#   - no `import Foundation` in the program's Sources/ (FoundationEssentials:
#     the whole of Foundation brings ICU, some 30 MB, into the package);
#   - no peer protocol version written as a number outside PeerCapabilities
#     (Sources/SweeperMessages/PeerMessage.swift): a comparison with a
#     literal drifts when the protocol moves on;
#   - the DocC catalogue of SweeperSync names every op kind (each case of
#     OpPayload as a ``OpPayload/case`` link), and no catalogue page holds
#     Swift code outside a code block (an `import` line);
#   - every Swift file is as swift-format writes it with the repository's
#     .swift-format (4 spaces, 160 columns; semicolons between short
#     statements, `case let`, several variables or enum cases on one line
#     and forEach are the house's choice): `swift format format -i -r` the
#     file, as swift-nio keeps its formatting in CI;
#   - the fixed sleeps of a test file (Thread.sleep, usleep, Task.sleep with
#     a literal) add up to no more than its budget in
#     Scripts/check-budgets.txt, 0.1 s for a file not listed (a poll's
#     interval), and all of them together to under 5 s: wait for what a
#     test waits for instead (eventually), or watch a window (holds).
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
failed=0
fail() {
    echo "check: $1" >&2
    failed=1
}

# Files over 600 lines.
while IFS= read -r file; do
    lines=$(wc -l <"$file")
    if ((lines > 600)); then fail "$file has $lines lines (at most 600: split it by aspect, Type+Aspect.swift)"; fi
done < <(find Sources -name '*.swift' | sort)

# The control protocol stays at the daemon's edge.
while IFS= read -r file; do
    case "$file" in
    Sources/SweeperDaemon/Control/* | Sources/SweeperDaemon/Daemon.swift | Sources/SweeperDaemon/DaemonCore.swift | Sources/SweeperDaemon/Settings/Configuration.swift) ;;
    *) fail "$file imports SweeperControl (only the daemon's Control/ and its composition root may)" ;;
    esac
done < <(grep -rl --include='*.swift' '^import SweeperControl' Sources/SweeperDaemon 2>/dev/null | sort)

# The daemon's folders in layers: no file names a type of a layer above its own.
daemon=Sources/SweeperDaemon
layers=(Settings System Web Players Games Circle Peers Control .)
layerFiles() {
    if [[ $1 == . ]]; then find "$daemon" -maxdepth 1 -name '*.swift'; else find "$daemon/$1" -name '*.swift' 2>/dev/null; fi
}
if [[ -d $daemon ]]; then
    above=$(mktemp)
    for ((i = ${#layers[@]} - 1; i >= 0; i--)); do
        layer=${layers[i]}
        # $above holds "Type Layer" for every layer above this one.
        if [[ -s $above ]]; then
            while IFS= read -r file; do
                while IFS=: read -r line type; do
                    owner=$(awk -v t="$type" '$1 == t { print $2; exit }' "$above")
                    [[ $owner == . ]] && owner="the composition root"
                    fail "$file:$line names $type of $owner, a layer above $(basename "$(dirname "$file")")/ (the daemon's layers, lowest first: ${layers[*]/#./root}): take it as a protocol declared below"
                done < <(sed 's|//.*||' "$file" | grep -nowF -f <(awk '{ print $1 }' "$above") | sort -u -t: -k2,2)
            done < <(layerFiles "$layer" | sort)
        fi
        while IFS= read -r file; do
            grep -hoE '^(public |package |final |private |fileprivate |internal )*(struct|class|actor|enum|protocol|typealias) [A-Z][A-Za-z0-9]*' "$file" |
                awk -v l="$layer" '{ print $NF, l }'
        done < <(layerFiles "$layer") >>"$above"
    done
    rm -f "$above"
fi

# The daemon's time, through its clock, within the budgets.
budgets=Scripts/check-budgets.txt
while IFS= read -r file; do
    [[ "$file" == Sources/SweeperDaemon/System/DaemonClock.swift ]] && continue
    count=$(grep -c -E 'Date\(\)|Task\.sleep|ContinuousClock' "$file")
    allowed=0
    if [[ -f "$budgets" ]]; then
        allowed=$(awk -v f="$file" '$1 == "clock" && $2 == f { print $3 }' "$budgets")
        allowed=${allowed:-0}
    fi
    if ((count > allowed)); then
        fail "$file reads the time directly $count times (Date(), Task.sleep, ContinuousClock; budget $allowed): use the daemon's clock (DaemonClock)"
    fi
done < <(grep -rl --include='*.swift' -E 'Date\(\)|Task\.sleep|ContinuousClock' Sources/SweeperDaemon 2>/dev/null | sort)

# Processes are stopped by pid.
while IFS=: read -r file line _; do
    fail "$file:$line stops processes by name (pkill -f or killall): stop what you start by its pid"
done < <(grep -rn -E '(^|[^[:alnum:]_-])(pkill[[:space:]]+-f|killall)([[:space:]]|$)' Scripts Tests .ci 2>/dev/null | grep -v '^Scripts/check.sh:' | grep -v '^Tests/SweeperPackagingTests/HouseRulesTests.swift:')

# No crash on input.
while IFS=: read -r file line _; do
    fail "$file:$line crashes instead of failing (fatalError or try!): throw, or answer with an error"
done < <(grep -rn --include='*.swift' -E 'fatalError\(|try!' Sources 2>/dev/null | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*///?')

# A closure as a lock's value grows a pair of thunks at each `withLock`.
while IFS=: read -r file line _; do
    fail "$file:$line holds a closure directly as a lock's value: it gains two thunks at each withLock; hold it in a struct"
done < <(grep -rn --include='*.swift' -E '(Mutex|NIOLockedValueBox|NIOLoopBoundBox)<[[:space:]]*(\(|@|\(@)[^=]*->' Sources 2>/dev/null \
    | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*///?')

# The program links FoundationEssentials, never the whole of Foundation (its
# ICU data alone is some 30 MB of the package and of a daemon's memory).
while IFS=: read -r file line _; do
    fail "$file:$line imports Foundation: import FoundationEssentials (the whole of Foundation brings ICU into the program)"
done < <(grep -rn --include='*.swift' -E '^(@preconcurrency )?import Foundation$' Sources 2>/dev/null)

# Peer protocol versions by name.
while IFS=: read -r file line _; do
    fail "$file:$line writes a peer protocol version as a number: name it in PeerCapabilities"
done < <(grep -rn --include='*.swift' --include='*.js' -E '[pP]rotocolVersion[A-Za-z]*[[:space:]]*(==|!=|<=|>=|<|>|=)[[:space:]]*[0-9]' Sources 2>/dev/null |
    grep -v '^Sources/SweeperMessages/PeerMessage.swift:' | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*///?')

# The DocC catalogues keep up with the code.
catalogue=Sources/SweeperSync/SweeperSync.docc/SweeperSync.md
ops=$(find Sources/SweeperSync -name Op.swift 2>/dev/null | head -n 1)
if [[ -n "$ops" && -f "$catalogue" ]]; then
    while IFS= read -r kind; do
        grep -q "\`\`OpPayload/$kind" "$catalogue" || fail "$catalogue does not name the op kind $kind (\`\`OpPayload/$kind…\`\`)"
    done < <(awk '/public (indirect )?enum OpPayload/,/^}/' "$ops" |
        grep -oE '^    (indirect )?case [a-zA-Z]+' | awk '{ print $NF }')
fi
while IFS=: read -r file line _; do
    fail "$file:$line holds a Swift line outside a code block"
done < <(find Sources -path '*.docc/*' -name '*.md' -exec grep -Hn -E '^import [A-Z]' {} + 2>/dev/null)

# One format: swift-format's, configured by .swift-format. At most 20 lines
# of findings, then how many more, so that a reformat of many files is
# still told in a screen.
if [[ -f .swift-format ]]; then
    formatted=()
    for path in Sources Tests Benchmarks/Sources Benchmarks/Package.swift Fuzz/Sources Fuzz/Package.swift Plugins Package.swift; do
        [[ -e "$path" ]] && formatted+=("$path")
    done
    if ! command -v swift >/dev/null || ! swift format --version >/dev/null 2>&1; then
        fail ".swift-format is here but swift-format is not (it comes with the Swift toolchain, 6.0 and later)"
    elif ((${#formatted[@]} > 0)); then
        findings=$(swift format lint --strict --parallel --configuration .swift-format -r "${formatted[@]}" 2>&1 | grep -E '^[^:]+:[0-9]+:[0-9]+: (error|warning): ')
        count=$(grep -c . <<<"$findings")
        while IFS=: read -r file line _ _ message; do
            [[ -n "$file" ]] && fail "$file:$line is not as swift-format writes it:${message#*:} (swift format format -i $file, or by hand)"
        done < <(head -n 20 <<<"$findings")
        if ((count > 20)); then fail "$((count - 20)) more lines are not as swift-format writes them (swift format format -i -r ${formatted[*]})"; fi
    fi
fi

# Fixed sleeps in the tests, within the budgets (seconds), and under 5 s in all.
sleeps=0
while IFS= read -r file; do
    total=$(grep -ohE 'Thread\.sleep\(forTimeInterval: *[0-9._]+\)|usleep\([0-9_]+\)|Task\.sleep\(for: *\.(seconds|milliseconds)\([0-9_.]+\)\)' "$file" |
        awk '{ gsub(/_/, ""); v = $0; sub(/^.*[(:] */, "", v); sub(/\).*$/, "", v)
               if ($0 ~ /usleep/) v /= 1000000; else if ($0 ~ /milliseconds/) v /= 1000
               t += v } END { printf "%.3f", t }')
    allowed=0.1
    if [[ -f "$budgets" ]]; then
        listed=$(awk -v f="$file" '$1 == "sleep" && $2 == f { print $3 }' "$budgets")
        allowed=${listed:-0.1}
    fi
    if awk -v t="$total" -v a="$allowed" 'BEGIN { exit !(t > a + 0.0005) }'; then
        fail "$file sleeps $total s in fixed sleeps (budget $allowed s): wait for what the test waits for"
    fi
    sleeps=$(awk -v s="$sleeps" -v t="$total" 'BEGIN { printf "%.3f", s + t }')
done < <(grep -rl --include='*.swift' -E 'Thread\.sleep\(|usleep\(|Task\.sleep\(' Tests 2>/dev/null | grep -v '^Tests/SweeperPackagingTests/HouseRulesTests.swift$' | sort)
if awk -v s="$sleeps" 'BEGIN { exit !(s >= 5) }'; then
    fail "the tests sleep $sleeps s in fixed sleeps in all (at most 5 s): wait for what a test waits for, or watch with holds()"
fi

exit $failed
