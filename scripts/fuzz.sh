#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, with AddressSanitizer) of what a hostile peer or a broken file reaches first:
#   frames   a byte stream split into frames and decoded with one connection's coding references (Fuzz/frames.swift)
#   batch    one BATCH payload, decoded alone and against the references it left (Fuzz/batch.swift)
#   config   a config file, parsed and every value read through each typed reader (Fuzz/config.swift)
#   ingest   stateful: a program of three agents' frames through their connections' state machines into a real
#            SQLite store, with timestamps from 1970 to 2^62 and counters up to 2^63; after each, nothing trapped,
#            what a connection keeps is bounded by what was described, and every interface's buckets plus its
#            unplaced counts equal its counters' growth (Fuzz/Ingest/; corpus Fuzz/corpus/ingest)
#
#   scripts/fuzz.sh [SECONDS]   each target for SECONDS (default: $FUZZ_SECONDS, else 20); scripts/test.sh runs it
#   scripts/fuzz.sh --seeds     rewrite the committed seed corpus (Fuzz/corpus/)
#
# The stateful target links the store (GRDB, SQLite) and the daemon's connection code, which the first three's way of
# compiling cannot: scripts/test.sh builds it with the package (.build/debug/netpulse-fuzz-ingest), and it runs under
# a mutation driver of its own (libFuzzer's kinds of mutation, from the corpus; an input that traps is left in
# .build-fuzz/current). Under libFuzzer itself (coverage-guided; a build of the whole package with the fuzzer
# sanitizer, about as long as a clean build):
#   swift build --scratch-path .build-fuzz-spm --sanitize=fuzzer -Xswiftc -DNETPULSE_LIBFUZZER \
#       --product netpulse-fuzz-ingest && .build-fuzz-spm/debug/netpulse-fuzz-ingest Fuzz/corpus/ingest
#
# The targets are compiled from the decoders' own source files, not from the PulseCore module, so they link no
# BoringSSL and no SwiftNIO. A crash, a leak, a timeout, more than 1 GiB resident or a single allocation over
# 64 MiB fails the run; the input that did it is left in .build-fuzz/ (crash-*, leak-*, oom-*, timeout-*).
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build-fuzz
mkdir -p "$out"
decoders=(
    Sources/PulseCore/Wire/BatchRules.swift Sources/PulseCore/Wire/ColumnCodec.swift Sources/PulseCore/Wire/Messages.swift
    Sources/PulseCore/Wire/WireBatch.swift Sources/PulseCore/Wire/WireCodec.swift
    Sources/PulseCore/Wire/WireReader.swift Sources/PulseCore/Wire/WireWriter.swift
    Sources/PulseCore/Model/*.swift Tests/TestSupport/SplitMix64.swift
)
config=(Sources/PulseCore/Config/*.swift Sources/PulseCore/Support/FileIO.swift Sources/PulseCore/Support/Units.swift)

# One module named PulseCore, so the sources' own `import PulseCore` lines refer to it.
compile() {
    local output=$1
    shift
    swiftc -module-name PulseCore -parse-as-library -O -suppress-warnings "$@" -o "$output"
}

if [ "${1:-}" = "--seeds" ]; then
    compile "$out/make-seeds" "${decoders[@]}" Sources/PulseCore/Support/FileIO.swift Fuzz/seeds.swift
    "$out/make-seeds" Fuzz/corpus
    cp config/agent.toml config/netpulsed.toml Fuzz/corpus/config/
    export PATH="/opt/swift/usr/bin:$PATH"
    swift build --product netpulse-fuzz-ingest >/dev/null
    rm -rf Fuzz/corpus/ingest
    .build/debug/netpulse-fuzz-ingest --write-seeds Fuzz/corpus/ingest
    echo "seed corpus written to Fuzz/corpus/"
    exit 0
fi

seconds=${1:-${FUZZ_SECONDS:-20}}
for target in frames batch config; do
    sources=("${decoders[@]}")
    [ "$target" = config ] && sources+=("${config[@]}")
    echo "==> fuzz target $target: compiling"
    compile "$out/fuzz-$target" -sanitize=fuzzer,address "${sources[@]}" "Fuzz/$target.swift"
    # New inputs go to a scratch corpus; the committed seeds are only read.
    corpus="$out/corpus-$target"
    mkdir -p "$corpus"
    echo "==> fuzz target $target: ${seconds} s"
    log="$out/fuzz-$target.log"
    if ! "$out/fuzz-$target" "$corpus" "Fuzz/corpus/$target" -max_total_time="$seconds" -rss_limit_mb=1024 \
        -malloc_limit_mb=64 -timeout=10 -print_final_stats=1 -artifact_prefix="$out/" >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "fuzz target $target failed; the input is in $out/" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "    $runs executions in ${seconds} s, $coverage, peak RSS ${peak} MiB"
done

echo "==> fuzz target ingest (stateful, into a real SQLite store): ${seconds} s"
[ -x .build/debug/netpulse-fuzz-ingest ] || PATH="/opt/swift/usr/bin:$PATH" swift build --product netpulse-fuzz-ingest
log="$out/fuzz-ingest.log"
if ! .build/debug/netpulse-fuzz-ingest Fuzz/corpus/ingest -max_total_time="$seconds" -artifact_prefix="$out/" \
    >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz target ingest failed; the input is $out/current" >&2
    exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
echo "    $runs programs in ${seconds} s, peak RSS ${peak} MiB"
