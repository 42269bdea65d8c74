"""Shared paths and data for the Python tests (run by scripts/test after building the package)."""

import json
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "examples" / "vibes_tutorial"
GOLDEN = ROOT / "crates" / "occam-cli" / "tests" / "golden"


def golden_json(case):
    """The JSON the CLI printed for a golden case (crates/occam-cli/tests/golden/cases.txt)."""
    return json.loads((GOLDEN / f"{case}.stdout").read_text())


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
