#!/usr/bin/env bash
# BayesPy's linear state-space demo (examples/lds_rotation) with and without rotations, Occam and
# BayesPy on the same data in one run: Occam's sweeps and bound from its test
# (crates/occam/src/rotation/lds/tests.rs, printed with --nocapture), BayesPy's from
# bench/peers/bayespy_lds_rotation.py. Writes bench/results/lds_rotation_<date>_<time>utc.txt.
# Usage: bench/peers/lds_rotation.sh [PYTHON]   (default: bench/peers/.venv/bin/python)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY="${1:-$HERE/.venv/bin/python}"
OUT="$ROOT/bench/results/lds_rotation_$(date -u +%Y-%m-%d_%H%M)utc.txt"
TMP="$(mktemp)"
trap 'rm -f "$TMP"' EXIT
{
  echo "# LDS rotations on BayesPy's lssm demo data (examples/lds_rotation/y.csv), $(date -u +%FT%TZ)"
  echo "# machine: $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# occam $(git -C "$ROOT" rev-parse --short HEAD); BayesPy $("$PY" -c 'import bayespy; print(bayespy.__version__)')"
  echo "## Occam (tol 1e-6 nats per observed value, strict mode)"
  (cd "$ROOT" && cargo test -q -p occam --lib rotation::lds::tests::bayespy -- --nocapture 2>&1) \
    | grep "LSSM demo"
  echo "## BayesPy (relative tolerance 1e-6; seconds are wall-clock under the load above)"
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$PY" "$HERE/bayespy_lds_rotation.py" --tol 1e-6 --maxiter 5000
  echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$TMP"
mkdir -p "$(dirname "$OUT")"
mv "$TMP" "$OUT"
trap - EXIT
cat "$OUT"
