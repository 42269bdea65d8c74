#!/usr/bin/env bash
# The plate sweep of `occam compare` (issue 28: "comparing K = 1..8 costs less than 8 separate
# processes"): one `compare --plate K=1..8` process against eight `compare` processes, one per K,
# on MODEL (default the VIBES tutorial's mixture, 500 rows; its directory's CSVs are its data),
# release CLI, same seed and restarts,
# alternated over ROUNDS rounds in one run. Prints the wall seconds of each and their ratio
# (separate / sweep), and checks that both give the same bound per K: they do except where the
# sweep keeps its warm start from the previous size (one more candidate start of that size's fit,
# module evidence::sweep), which it reports as NO at those K (on the VIBES tutorial K = 4, 5, 8).
# bench/sweep_reuse.py measures CPU time too.
#
# Usage:  bench/sweep_reuse.sh [OUTFILE]
#   OCCAM=BIN     the CLI (default: $CARGO_TARGET_DIR or target, release/occam, built first)
#   ROUNDS=N      rounds (default 3)
#   RESTARTS=R    restarts per fit (default 10)
#   MODEL=FILE    a model file declaring `plate K = <size>` (default examples/vibes_tutorial/mixture.occam)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${ROUNDS:-3}"
restarts="${RESTARTS:-10}"
out="${1:-/dev/null}"
target="${CARGO_TARGET_DIR:-$root/target}"
occam="${OCCAM:-$target/release/occam}"
if [[ -z "${OCCAM:-}" ]]; then
    (cd "$root" && cargo build --release -p occam-cli)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
model="${MODEL:-$root/examples/vibes_tutorial/mixture.occam}"
cp "$(dirname "$model")"/*.csv "$work/"
for k in 1 2 3 4 5 6 7 8; do
    sed -E "s/^plate K = [0-9]+/plate K = $k/" "$model" > "$work/K$k.occam"
done
cp "$model" "$work/mixture.occam"
now() { date +%s.%N; }
{
echo "# sweep_reuse $(date -u +%FT%TZ) $(cd "$root" && git rev-parse --short HEAD) model=${model#$root/} rounds=$rounds restarts=$restarts"
for r in $(seq 1 "$rounds"); do
    t0=$(now)
    "$occam" compare "$work/mixture.occam" --plate K=1..8 --restarts "$restarts" --json > "$work/sweep.json"
    t1=$(now)
    for k in 1 2 3 4 5 6 7 8; do
        "$occam" compare "$work/K$k.occam" --restarts "$restarts" --json > "$work/one$k.json"
    done
    t2=$(now)
    python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
sweep = [m["bound"] for m in json.load(open(f"{w}/sweep.json"))["models"]]
one = [json.load(open(f"{w}/one{k}.json"))["models"][0]["bound"] for k in range(1, 9)]
bad = [k + 1 for k in range(8) if abs(sweep[k] - one[k]) > 1e-9 * abs(one[k])]
print("bounds per K:", " ".join(f"{b:.4f}" for b in sweep), "| same in both:", "yes" if not bad else f"NO at K = {bad}")
PY
    awk -v r="$r" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { s = b - a; e = c - b; printf "round %d: sweep %.3f s, 8 processes %.3f s, ratio %.2f\n", r, s, e, e / s }'
done
} | tee -a "$out"
