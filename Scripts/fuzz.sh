#!/usr/bin/env bash
# Fuzzes every decoder that outside bytes reach, with libFuzzer and
# AddressSanitizer (the Fuzz/ package; see Fuzz/Package.swift).
#
#   Scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   build, then run each target
#   Scripts/fuzz.sh --seeds                             rewrite Fuzz/Corpus from the real encoders
#
# Each target starts from its corpus in Fuzz/Corpus/<Target> plus fresh seeds
# from the current encoders, in a temporary copy (the repository stays
# clean). Per target it prints the executions run; any crash, hang, leak or
# broken invariant fails the run, and the input that caused it is kept under
# Fuzz/.build/artifacts/ (its path is printed). CI runs 20 s per target;
# a longer run is the same command with a bigger number.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

ALL_TARGETS=(FuzzPeerFrames FuzzHandshake FuzzSecretStream FuzzOp FuzzSyncMessage FuzzReplica FuzzMembership FuzzControl FuzzInviteCode FuzzBoardText FuzzConfig FuzzDiscovery FuzzWeb)

# The longest input tried per target: room for several messages, frames or
# lines, while keeping executions fast.
max_len() {
    case "$1" in
        FuzzInviteCode) echo 256 ;;
        FuzzDiscovery) echo 1024 ;;
        FuzzHandshake) echo 1024 ;;
        FuzzOp | FuzzConfig) echo 2048 ;;
        *) echo 4096 ;;
    esac
}

# Extra libFuzzer options. The control target's daemon holds Swift weak
# references, whose side tables LeakSanitizer cannot see pointed to (the
# object's refcount word holds them encoded), so it reports them as leaks.
extra_options() {
    case "$1" in
        FuzzControl) echo -detect_leaks=0 ;;
    esac
}

# AddressSanitizer settings per target: for the same reason, FuzzControl's
# leak check is off at exit too (-detect_leaks=0 covers only each input).
asan_options() {
    case "$1" in
        FuzzControl) echo detect_leaks=0 ;;
        *) echo "${ASAN_OPTIONS:-}" ;;
    esac
}

SECONDS_PER_TARGET=20
SEEDS_ONLY=0
if [[ "${1:-}" == "--seeds" ]]; then
    SEEDS_ONLY=1
    shift
elif [[ -n "${1:-}" ]]; then
    SECONDS_PER_TARGET=$1
    shift
fi
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

# Swift's own crash reporter would read memory AddressSanitizer watches
# and bury the report: libFuzzer and the sanitizer report instead.
export SWIFT_BACKTRACE=enable=no

build_start=$(date +%s)
# The fuzz package depends on the product by path: its build plan is made
# again, as one kept from before a source file was deleted fails the build.
rm -f Fuzz/.build/release.yaml Fuzz/.build/x86_64-unknown-linux-gnu/release/description.json
set +e
swift build -c release --package-path Fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing 2>&1 |
    grep -v "Cannot export local symbol"
build_status=${PIPESTATUS[0]}
set -e
if [[ $build_status -ne 0 ]]; then
    echo "fuzz.sh: the fuzz targets did not build" >&2
    exit 1
fi
BIN=$(swift build -c release --package-path Fuzz --show-bin-path)
echo "fuzz.sh: built in $(($(date +%s) - build_start)) s"

if [[ $SEEDS_ONLY -eq 1 ]]; then
    for t in "${TARGETS[@]}"; do
        rm -f "Fuzz/Corpus/$t"/seed-*  # found inputs (regressions) stay
        SWEEPER_FUZZ_SEEDS="Fuzz/Corpus/$t" "$BIN/$t"
        echo "fuzz.sh: $t: $(find "Fuzz/Corpus/$t" -type f | wc -l) seeds"
    done
    exit 0
fi

ARTIFACTS="$PWD/Fuzz/.build/artifacts"
mkdir -p "$ARTIFACTS"
WORK=$(mktemp -d /tmp/sweeper-fuzz.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failed=()
total=0
printf '%-18s %12s %8s %s\n' target executions exec/s result
for t in "${TARGETS[@]}"; do
    corpus="$WORK/$t"
    mkdir -p "$corpus"
    if [[ -d "Fuzz/Corpus/$t" ]]; then cp -r "Fuzz/Corpus/$t/." "$corpus/"; fi
    SWEEPER_FUZZ_SEEDS="$corpus/fresh" "$BIN/$t" && mv "$corpus/fresh/"* "$corpus/" 2>/dev/null || true
    rm -rf "$corpus/fresh"
    log="$WORK/$t.log"
    set +e
    ASAN_OPTIONS="$(asan_options "$t")" "$BIN/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
        -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$t-" $(extra_options "$t") "$corpus" >"$log" 2>&1
    rc=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    total=$((total + ${runs:-0}))
    if [[ $rc -eq 0 ]]; then
        printf '%-18s %12s %8s %s\n' "$t" "${runs:-0}" "${speed:-0}" ok
    else
        printf '%-18s %12s %8s %s\n' "$t" "${runs:-0}" "${speed:-0}" "FAILED (exit $rc)"
        failed+=("$t")
        # The sanitizer's or libFuzzer's report, and where the input was saved.
        grep -E 'ERROR: |invariant failed|Fatal error|SUMMARY|Test unit written to|Base64|panic|deadly signal|timeout' "$log" | head -20 | sed "s/^/    $t: /"
        cp "$log" "$ARTIFACTS/$t.log"
        echo "    $t: full log: $ARTIFACTS/$t.log"
    fi
done
echo "fuzz.sh: $total executions over ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET} s each"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz.sh: FAILED: ${failed[*]} (reproduce: $BIN/<Target> <input>)" >&2
    exit 1
fi
