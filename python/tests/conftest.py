"""Shared paths and data for the Python tests (run by scripts/test after building the package)."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "examples" / "vibes_tutorial"
GOLDEN = ROOT / "crates" / "occam-cli" / "tests" / "golden"


def golden_json(case):
    """The JSON the current `occam` binary prints for a golden case (its arguments are in
    crates/occam-cli/tests/golden/cases.txt): Python must give what the CLI gives, bit for bit in
    practice and to 1e-12 in the tests. The binary is target/debug/occam, built by the
    `cargo test --workspace` that scripts/test runs first, or $OCCAM_BIN."""
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    assert binary.is_file(), f"{binary} is missing: run `cargo build -p occam-cli` first"
    for line in (GOLDEN / "cases.txt").read_text().splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        name, args = (part.strip() for part in line.split("|", 1))
        if name == case:
            out = subprocess.run([str(binary), *args.split()], cwd=ROOT, capture_output=True,
                                 text=True, check=True)
            return json.loads(out.stdout)
    raise KeyError(f"no golden case {case}")


def load_csv(path):
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


@pytest.fixture(scope="session")
def tutorial_x():
    return load_csv(TUTORIAL / "x.csv")


def blobs(n, d, k, seed):
    """Well separated Gaussian clusters (for the mixture estimator)."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, size=(k, d))
    labels = rng.integers(0, k, size=n)
    scales = rng.uniform(0.5, 1.5, size=(k, d))
    return centres[labels] + rng.standard_normal((n, d)) * scales[labels]
