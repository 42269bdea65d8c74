#!/usr/bin/env bash
# Run the GMM benchmark: BayesPy and scikit-learn (peer venv) and Occam's bench_gmm example on the
# same generated data with the same initial labels, then print a table with peer/occam time ratios.
#
# Usage: bench/peers/compare.sh [--cases a,b,c[,d]] [--iters 50] [--out DIR] [--occam CMD|none]
#   --cases  data sets of gen_data.py: a=N10k D2 K10, b=N2k D10 K40, c=N100k D2 K10, d=N1M D2 K10
#   --out    keep data and results.jsonl there (default: a temp dir, removed at the end)
#   --occam  command template for Occam (also env OCCAM_CMD); placeholders {data} {k} {iters}
#            {init} {case}. 'none' skips Occam. Default:
#              cargo run --release -q -p occam-core --example bench_gmm -- --data {data} --k {k} --iters {iters} --init {init}
#            (bench_gmm also takes --threads T for its rayon pool).
# Env PEER_THREADS (default 1): BLAS/OpenMP threads of the Python peers (OMP_NUM_THREADS,
# OPENBLAS_NUM_THREADS, MKL_NUM_THREADS). One thread gives stable per-core timings on the 2-core
# machine; 2-thread OpenBLAS showed large outliers there. Occam's command gets no such variables.
# Occam must print one JSON line with "peer": "occam" (same format as the peers); if its command
# fails, that case is reported without Occam and the table shows '-' as ratio.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CASES="a,b,c"
ITERS=50
OUT=""
OCCAM_DEFAULT='cargo run --release -q -p occam-core --example bench_gmm -- --data {data} --k {k} --iters {iters} --init {init}'
OCCAM="${OCCAM_CMD:-$OCCAM_DEFAULT}"

while [ $# -gt 0 ]; do
  case "$1" in
    --cases) CASES="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --occam) OCCAM="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

"$HERE/setup.sh" >/dev/null
PY="$HERE/.venv/bin/python"

if [ -z "$OUT" ]; then
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
fi
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: > "$RESULTS"

"$PY" "$HERE/gen_data.py" "$OUT" --cases "$CASES" >&2
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

# case name, data file, init file, K for each generated case
mapfile -t ROWS < <("$PY" -c 'import json,sys
for c in json.load(open(sys.argv[1])): print(c["case"], c["data"], c["init"], c["K"])' "$OUT/cases.json")

THREADS="${PEER_THREADS:-1}"
peer_env=(env OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS")

for row in "${ROWS[@]}"; do
  read -r case data init k <<<"$row"
  for peer in bayespy sklearn; do
    echo "== $case: $peer" >&2
    "${peer_env[@]}" "$PY" "$HERE/${peer}_gmm.py" --data "$data" --init "$init" --k "$k" --iters "$ITERS" \
      --case "$case" | tee -a "$RESULTS" >&2
  done
  if [ "$OCCAM" = "none" ]; then
    echo "== $case: occam skipped (--occam none)" >&2
    continue
  fi
  cmd="${OCCAM//\{data\}/$data}"; cmd="${cmd//\{init\}/$init}"; cmd="${cmd//\{k\}/$k}"
  cmd="${cmd//\{iters\}/$ITERS}"; cmd="${cmd//\{case\}/$case}"
  echo "== $case: occam: $cmd" >&2
  if line="$(cd "$ROOT" && bash -c "$cmd" | grep '^{' | tail -n 1)" && [ -n "$line" ]; then
    # label Occam's line with this case name so the table can pair it with the peers
    "$PY" -c 'import json,sys; r=json.loads(sys.argv[1]); r["case"]=sys.argv[2]; print(json.dumps(r))' \
      "$line" "$case" | tee -a "$RESULTS" >&2
  else
    echo "== $case: occam command failed or printed no JSON line; skipping Occam for this case" >&2
  fi
done

echo >&2
"$PY" "$HERE/table.py" "$RESULTS"
# Other processes on the machine skew timings: show how busy it was.
echo "machine: $(nproc) cores; load average (1/5/15 min) at start: $LOAD_START, at end: $(cut -d' ' -f1-3 /proc/loadavg); peer BLAS threads: $THREADS; $(date -u '+%Y-%m-%d %H:%M UTC')"
