#!/usr/bin/env bash
# The PyMC peer's virtual environment (bench/peers/.venv-pymc, git-ignored; PYMC_VENV=DIR puts it
# elsewhere): PyMC and PyTensor at pinned versions, for bench/peers/logistic_speed.py --peers ...,pymc.
# PyTensor compiles its graphs with g++ and links a BLAS only if it finds one: pip's NumPy carries
# its OpenBLAS under renamed symbols that PyTensor cannot link, and without a BLAS its dot products
# fall back to slow loops ("PyTensor could not link to a BLAS installation"). So this installs
# Debian's OpenBLAS (libopenblas-dev, apt-get, as root) when it is missing and writes
# $VENV/pytensorrc naming it (-lopenblas; PyTensor's own probe wants libcblas or a libgfortran.so
# link that Debian's OpenBLAS does not bring) with a compile cache inside the venv;
# logistic_speed.py points PYTENSORRC there. Idempotent; needs PyPI and Debian's archive only when
# it installs. Ends by checking that PyTensor links the BLAS without the warning and timing X @ w
# (N = 1e5, D = 20) against NumPy's in the same venv.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${PYMC_VENV:-$HERE/.venv-pymc}"
PY="${PYTHON:-python3}"
PINS=(
  "pymc==5.28.5"
  "pytensor==2.38.3"
  "numpy==2.4.6"
  "scipy==1.17.1"
  "arviz==0.23.4"
  "cachetools==6.2.6"
  "cloudpickle==3.1.3"
  "cons==0.4.7"
  "etuples==0.3.10"
  "filelock==4.3.1"
  "logical-unification==0.4.7"
  "miniKanren==1.0.5"
  "numba==0.65.1"
  "llvmlite==0.47.0"
  "pandas==3.1.1"
  "rich==15.0.0"
  "threadpoolctl==3.8.0"
  "xarray==2026.9.0"
)
if [ ! -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] && [ ! -e /usr/lib/libopenblas.so ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-dev
  else
    echo "setup_pymc.sh: OpenBLAS is missing; run as root or: sudo apt-get install libopenblas-dev" >&2
    exit 1
  fi
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
cat > "$VENV/pytensorrc.tmp" <<RC
[global]
base_compiledir = $VENV/pytensor-cache
[blas]
ldflags = -lopenblas
RC
mv "$VENV/pytensorrc.tmp" "$VENV/pytensorrc"
PYTENSORRC="$VENV/pytensorrc" "$VENV/bin/python" "$HERE/pymc_blas_check.py"
