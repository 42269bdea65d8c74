#!/usr/bin/env bash
# Importance sampling (`compare --method is`) on the VIBES tutorial mixture at several K (issue 28:
# `is` for K > 6), an earlier build against this one in the same run: user+sys CPU seconds of the
# whole process (fit and `is`) and `is`'s own seconds, on one thread (RAYON_NUM_THREADS=1), the
# builds alternated over ROUNDS rounds; the estimate, standard error and ESS of each, and their
# difference in bits. With IR=1, instruction counts instead: one callgrind run per build and K with
# --samples $IR_SAMPLES, the total Ir and the functions above 2% of it (callgrind_annotate).
#
# Usage:  BEFORE=BIN OCCAM=BIN bench/is_speed.sh [OUTFILE]
#   OCCAM=BIN       the CLI to measure (default: $CARGO_TARGET_DIR or target, release/occam)
#   BEFORE=BIN      the earlier build
#   KS="6 8 10 12"  the sizes (plate K of examples/vibes_tutorial/mixture.occam; `is` refuses K > 12)
#   ROUNDS=N        rounds of the CPU measurement (default 3)
#   IR=1            callgrind instead; IR_SAMPLES draws per run (default 2000)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/dev/null}"
target="${CARGO_TARGET_DIR:-$root/target}"
occam="${OCCAM:-$target/release/occam}"
before="${BEFORE:?BEFORE=path of the earlier build}"
ks="${KS:-6 8 10 12}"
rounds="${ROUNDS:-3}"
ir_samples="${IR_SAMPLES:-2000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
model="$root/examples/vibes_tutorial/mixture.occam"
data="x=$root/examples/vibes_tutorial/x.csv"
export RAYON_NUM_THREADS=1
{
echo "# is_speed $(date -u +%FT%TZ) $(cd "$root" && git rev-parse --short HEAD) before=$before after=$occam ks='$ks' rounds=$rounds ir=${IR:-0}"
if [[ -n "${IR:-}" ]]; then
    for k in $ks; do
        for which in before after; do
            bin="$before"; [[ $which == after ]] && bin="$occam"
            valgrind --tool=callgrind --callgrind-out-file="$work/cg.$which.$k" "$bin" compare "$model" \
                --data "$data" --plate "K=$k" --method is --samples "$ir_samples" --json > "$work/$which.$k.json" 2> /dev/null
            ir=$(callgrind_annotate "$work/cg.$which.$k" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
            echo "K=$k $which Ir $ir"
            callgrind_annotate --threshold=98 "$work/cg.$which.$k" 2> /dev/null \
                | awk '/file:function/ {on = 1; next} on && NF {print "    " $0}' | head -12
        done
        python3 - "$work/before.$k.json" "$work/after.$k.json" "$k" <<'PY'
import json, sys
e = [[r for r in json.load(open(f))["models"][0]["evidence"] if r["method"] == "is"][0] for f in sys.argv[1:3]]
print(f"K={sys.argv[3]} is before {e[0]['log_evidence']!r} ± {e[0]['se']:.4g}, after {e[1]['log_evidence']!r} ± "
      f"{e[1]['se']:.4g}, after - before {e[1]['log_evidence'] - e[0]['log_evidence']:.3g}")
PY
    done
    exit 0
fi
for r in $(seq 1 "$rounds"); do
    for k in $ks; do
        order="before after"; (( r % 2 == 0 )) && order="after before"
        for which in $order; do
            bin="$before"; [[ $which == after ]] && bin="$occam"
            /usr/bin/time -f "%U %S %e" -o "$work/time" "$bin" compare "$model" --data "$data" --plate "K=$k" \
                --method is --json > "$work/$which.json"
            python3 - "$work/$which.json" "$work/time" "$r" "$k" "$which" <<'PY'
import json, sys
e = [r for r in json.load(open(sys.argv[1]))["models"][0]["evidence"] if r["method"] == "is"][0]
u, s, w = map(float, open(sys.argv[2]).read().split())
print(f"round {sys.argv[3]} K={sys.argv[4]} {sys.argv[5]:6} cpu {u + s:7.2f} wall {w:7.2f} is_seconds {e['seconds']:7.2f} "
      f"is {e['log_evidence']!r} se {e['se']:.4g} ess {e['ess']:.0f}")
PY
        done
    done
done
} | tee -a "$out"
