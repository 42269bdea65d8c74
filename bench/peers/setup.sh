#!/usr/bin/env bash
# Create the peer virtual environment (bench/peers/.venv, git-ignored) with pinned versions of
# BayesPy, scikit-learn, hmmlearn, dynesty and UltraNest, the peers Occam is benchmarked and cross-checked against.
# Idempotent: if the venv already holds exactly these versions it does nothing.
# Needs PyPI only when it installs; nothing at test time uses this venv.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PY="${PYTHON:-python3}"

# numpy 2.4.6 is the version the shared BayesPy fixtures were made with; BayesPy 0.6.6 runs on it
# (quickstart/regression traces reproduce exactly, see bench/peers/make_fixtures.py).
PINS=(
  "bayespy==0.6.6"
  "numpy==2.4.6"
  "scipy==1.17.1"
  "h5py==3.16.0"
  "truncnorm==0.0.2"
  "scikit-learn==1.9.1"
  "joblib==1.6.0"
  "threadpoolctl==3.8.0"
  "hmmlearn==0.3.3"
  "dynesty==3.1.0"
  "ultranest==4.6.3"
)

have_pins() {
  [ -x "$VENV/bin/python" ] || return 1
  "$VENV/bin/python" - "${PINS[@]}" <<'EOF'
import sys
from importlib.metadata import version, PackageNotFoundError
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    try:
        if version(name) != want:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
EOF
}

if have_pins; then
  echo "peers venv ready: $VENV"
  exit 0
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
have_pins || { echo "setup.sh: pinned versions not installed" >&2; exit 1; }
"$VENV/bin/python" -c 'import bayespy, sklearn, numpy; print("peers venv ready:", "bayespy", bayespy.__version__, "sklearn", sklearn.__version__, "numpy", numpy.__version__)'
