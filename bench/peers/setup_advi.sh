#!/usr/bin/env bash
# The ADVI peer's virtual environment (bench/peers/.venv-advi, git-ignored): NumPyro and JAX at
# pinned versions, for bench/peers/advi_bnn.py (ADVI_VENV=DIR puts it elsewhere). Idempotent; needs
# PyPI only when it installs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${ADVI_VENV:-$HERE/.venv-advi}"
PY="${PYTHON:-python3}"
PINS=(
  "numpyro==0.22.0"
  "jax==0.10.2"
  "jaxlib==0.10.2"
  "numpy==2.4.6"
  "scipy==1.17.1"
  "ml_dtypes==0.6.0"
  "opt_einsum==3.4.0"
  "multipledispatch==1.0.0"
  "tqdm==4.70.1"
)
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
"$VENV/bin/python" -c 'import jax, numpyro; print("advi venv ready: jax", jax.__version__, "numpyro", numpyro.__version__)'
