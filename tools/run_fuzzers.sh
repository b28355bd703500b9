#!/bin/sh
# run_fuzzers: runs each libFuzzer harness DIR/fuzz_NAME for SECONDS on its corpus
# (DIR/corpus/NAME, grown across runs) seeded from DIR/seeds/NAME, and prints one line per
# harness: executions, executions a second, coverage (edges) and corpus size. Exits non-zero
# when a harness finds a crash, a leak or undefined behaviour (its input is kept in DIR/crashes).
#   usage: tools/run_fuzzers.sh DIR SECONDS NAME...
set -u
DIR=$1; SECS=$2; shift 2
mkdir -p "$DIR/crashes"
# the harnesses' scratch files go to a folder of this run's own, removed when it ends
CLSPLAT_FUZZ_SCRATCH=$(mktemp -d /tmp/clsplat-fuzz.XXXXXX) || exit 1
export CLSPLAT_FUZZ_SCRATCH
trap 'rm -rf "$CLSPLAT_FUZZ_SCRATCH"' EXIT
status=0
for t in "$@"; do
    mkdir -p "$DIR/corpus/$t" "$DIR/seeds/$t"
    log="$DIR/fuzz_$t.log"
    # splat_file takes inputs up to 128 KB under a 256 MB memory limit (ASan's quarantine kept
    # small): a decompression bomb (an SPZ of compressed zeros; a seed is one) of that size
    # passes the limit unless it is refused before inflating
    extra=""
    [ "$t" = splat_file ] && extra="-max_len=131072 -rss_limit_mb=256 -malloc_limit_mb=256"
    # shellcheck disable=SC2086
    ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16} "$DIR/fuzz_$t" -max_total_time="$SECS" -timeout=20 ${extra:--rss_limit_mb=2560 -malloc_limit_mb=2560} \
        -artifact_prefix="$DIR/crashes/${t}-" -print_final_stats=1 "$DIR/corpus/$t" "$DIR/seeds/$t" > "$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    corp=$(ls "$DIR/corpus/$t" | wc -l)
    printf 'fuzz %-11s %9s executions %7s/s  coverage %5s edges  corpus %5s  %s\n' "$t" "${execs:-?}" "${rate:-?}" \
        "${cov:-?}" "$corp" "$([ $rc = 0 ] && echo ok || echo "FOUND SOMETHING: see $log")"
    [ $rc = 0 ] || status=1
done
exit $status
