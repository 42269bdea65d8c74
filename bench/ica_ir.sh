#!/usr/bin/env bash
# Instruction counts (callgrind Ir, 1 thread) and heap allocations (DHAT blocks) of ICA fits per
# sweep and per start (issue 27), for each bench_ica_cases binary given (engine builds, or the
# hand code's from bench/ica_hand.sh).
#
# Usage:  bench/ica_ir.sh CASE S1 S2 NAME=BIN ...
#   e.g.  bench/ica_ir.sh toy60 10 40 hand=B/hand/bench_ica_cases after=B/after/bench_ica_cases
# Each binary runs `BIN CASE S 1` (one fit of S sweeps, then one fit of one sweep: the harness's
# loops) at S = S1 and S2 under callgrind and under DHAT. "fits" = the inclusive Ir of the
# harness's main less that of the data's generation (synth::ica_toy), so
#   per sweep = (fits(S2) - fits(S1)) / (S2 - S1)
#   start     = (fits(S1) - (S1 + 1) per sweep) / 2   (graph, compile, start, drop; two fits)
#   allocations per sweep = (blocks(S2) - blocks(S1)) / (S2 - S1)  (DHAT's "Total: ... in N blocks")
# (For a case whose work leaves the main thread, e.g. n10000, main's inclusive count misses it.)
# On the shared machine wrap in /work/bin/cslot.
set -euo pipefail
export RAYON_NUM_THREADS=1
case="$1" s1="$2" s2="$3"
shift 3
tmp="$(mktemp -d)"
fits() { # BIN S -> main's inclusive Ir less ica_toy's
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$1" "$case" "$2" 1 >"$tmp/out" 2>/dev/null
    callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg" 2>/dev/null | python3 -c '
import re, sys
main = toy = None
for line in sys.stdin:
    # "IR (PCT%)  FILE:FUNCTION [OBJECT]"
    m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*?)(?: \[[^]]*\])?$", line.rstrip())
    if not m:
        continue
    ir, fn = int(m.group(1).replace(",", "")), m.group(2)
    if main is None and re.search(r"bench_ica_cases::main$", fn):
        main = ir
    if toy is None and re.search(r"synth::ica_toy$", fn):
        toy = ir
print(main - toy)'
}
blocks() { # BIN S -> heap blocks allocated in the whole run
    valgrind --tool=dhat --dhat-out-file=/dev/null "$1" "$case" "$2" 1 2>&1 >/dev/null |
        sed -n 's/.*Total: *[0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' | tr -d ,
}
for nb in "$@"; do
    name="${nb%%=*}" bin="${nb#*=}"
    f1="$(fits "$bin" "$s1")"
    f2="$(fits "$bin" "$s2")"
    bits="$(grep -o 'bound_last.*' "$tmp/out")"
    b1="$(blocks "$bin" "$s1")"
    b2="$(blocks "$bin" "$s2")"
    python3 - "$name" "$case" "$s1" "$s2" "$f1" "$f2" "$b1" "$b2" "$bits" <<'PY'
import sys
name, case, s1, s2, f1, f2, b1, b2, bits = sys.argv[1:]
s1, s2, f1, f2, b1, b2 = map(int, (s1, s2, f1, f2, b1, b2))
sweep = (f2 - f1) / (s2 - s1)
start = (f1 - (s1 + 1) * sweep) / 2
print(f"{case} {name}: fits({s1}) {f1:,} fits({s2}) {f2:,} Ir per sweep {sweep:,.0f} "
      f"start {start:,.0f}; blocks({s1}) {b1:,} blocks({s2}) {b2:,} "
      f"allocations per sweep {(b2 - b1) / (s2 - s1):.2f}; at S2 {bits}")
PY
done
rm -rf "$tmp"
