#!/usr/bin/env bash
# CPU time of ICA fits (issue 27), engine builds against the hand-derived code: runs the
# bench_ica_cases binaries given, alternated within each round (A B C, A B C, ...), and prints
# each run's line, then per case the median ms per fit and per sweep of each binary and the
# ratios of the FIRST binary's medians to each other's (first = the hand code: > 1 means the
# other is faster), plus the bound bits each binary printed (each must print one pair).
#
# Usage:  bench/ica_cpu.sh ROUNDS CASE[:SWEEPS:REPEATS] ... -- NAME=BIN NAME=BIN ...
#   e.g.  bench/ica_cpu.sh 4 toy60:40:500 -- hand=B/hand/bench_ica_cases \
#             before=B/before/bench_ica_cases after=B/after/bench_ica_cases
#   Defaults per case when SWEEPS:REPEATS are left out: toy60 40:500, toy200 300:40, n10000 10:4.
# Threads: RAYON_NUM_THREADS=1 unless set. The binaries build with
#   cargo build --release -p occam --example bench_ica_cases   (engine trees)
#   bench/ica_hand.sh                                           (the hand code, 57f732b^)
# On the shared 2-core machine hold both job slots for a timing round and keep each call under
# two minutes:  flock /work/.slot-1 flock /work/.slot-2 bench/ica_cpu.sh ...
# The harness's CPU clock is /proc/self/stat's (10 ms ticks): REPEATS should make a loop last
# ~1 s or more.
set -euo pipefail
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-1}"
rounds="$1"
shift
cases=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
    cases+=("$1")
    shift
done
[[ "${1:-}" == "--" ]] || { echo "usage: $0 ROUNDS CASE... -- NAME=BIN..." >&2; exit 2; }
shift
bins=("$@")
log="$(mktemp)"
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) threads: $RAYON_NUM_THREADS"
for spec in "${cases[@]}"; do
    IFS=: read -r case sweeps repeats <<<"$spec"
    case "$case" in
        toy60) sweeps="${sweeps:-40}" repeats="${repeats:-500}" ;;
        toy200) sweeps="${sweeps:-300}" repeats="${repeats:-40}" ;;
        n10000) sweeps="${sweeps:-10}" repeats="${repeats:-4}" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    for ((r = 1; r <= rounds; r++)); do
        for nb in "${bins[@]}"; do
            name="${nb%%=*}" bin="${nb#*=}"
            line="$("$bin" "$case" "$sweeps" "$repeats")"
            echo "round $r $name $line" | tee -a "$log"
        done
    done
done
python3 - "$log" <<'PY'
import re, statistics, sys
runs = {}
order = []
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+) (\S+) case (\S+) .*ms_per_fit (\S+) ms_per_sweep (\S+) "
                 r"bound_first \S+ \((\w+)\) bound_last \S+ \((\w+)\)", line)
    if not m:
        continue
    _, name, case, fit, sweep, b0, b1 = m.groups()
    if name not in order:
        order.append(name)
    r = runs.setdefault((case, name), {"fit": [], "sweep": [], "bits": set()})
    r["fit"].append(float(fit))
    r["sweep"].append(float(sweep))
    r["bits"].add((b0, b1))
for case in dict.fromkeys(c for c, _ in runs):
    med = {n: (statistics.median(runs[case, n]["fit"]), statistics.median(runs[case, n]["sweep"]))
           for n in order if (case, n) in runs}
    first = order[0]
    print(f"{case}: medians of {len(runs[case, first]['fit'])} rounds")
    for n, (f, s) in med.items():
        ratio = "" if n == first else \
            f"  {first}/{n}: fit {med[first][0] / f:.3f} sweep {med[first][1] / s:.3f}"
        print(f"  {n:8} ms/fit {f:.4f} ms/sweep {s:.5f}{ratio}"
              f"  (fits {runs[case, n]['fit']}; sweeps {runs[case, n]['sweep']})")
    for n in order:
        bits = runs[case, n]["bits"]
        flag = "" if len(bits) == 1 else "  MORE THAN ONE BOUND: NOT DETERMINISTIC"
        print(f"  bits {n}: {sorted(bits)}{flag}")
PY
rm -f "$log"
