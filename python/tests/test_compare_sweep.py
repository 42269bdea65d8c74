"""The plate sweep's warm start through the Python API (guide chapter 7: `occam.compare(...,
plate=...)`): the same fits and bounds as the Rust sweep behind `occam compare --plate`, on the
VIBES tutorial's mixture, where the split of the previous size's fit beats the default start at
K = 4 and 5 (guide chapter 5)."""

import json
import os
import pathlib
import re
import subprocess

import pytest

import occam
from conftest import ROOT, TUTORIAL, load_csv

MODEL = TUTORIAL / "mixture.occam"


def sweep():
    return occam.compare([MODEL], data={"x": load_csv(TUTORIAL / "x.csv")}, plate="K=3..5")


def test_the_warm_start_is_kept_where_the_rust_sweep_keeps_it():
    rows = sweep()
    assert [r.model for r in rows] == [f"{MODEL}[K={k}]" for k in (3, 4, 5)]
    notes = [r.evidence["vb"]["note"] for r in rows]
    assert "warm start" not in notes[0]
    for k, r, note in zip((4, 5), rows[1:], notes[1:]):
        # "warm start from K = 3 (-2254.2773) kept over the default start (-2274.9696), before
        # pruning": both starts' converged bounds, compared as the engine compares candidate
        # starts; the kept one is then pruned, which does not lower its bound.
        m = re.search(r"warm start from K = (\d) \((-?[\d.]+)\) kept over the default start "
                      r"\((-?[\d.]+)\), before pruning", note)
        assert m, note
        assert int(m.group(1)) == k - 1
        warm, default = float(m.group(2)), float(m.group(3))
        assert r.result.bound >= warm - 1e-4
        assert warm > default + 1e-3
    # The bounds chapter 5 prints for this sweep (the Rust test plate_sweep.rs measures them).
    assert rows[1].result.bound == pytest.approx(-2254.2773, abs=1e-4)
    assert rows[2].result.bound == pytest.approx(-2241.4829, abs=1e-4)
    # Same seed, same bits.
    assert [r.result.bound for r in sweep()] == [r.result.bound for r in rows]


def test_the_same_bounds_and_warm_starts_as_the_command_line():
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    if not binary.is_file():
        pytest.skip(f"{binary} is missing")
    out = subprocess.run([str(binary), "compare", str(MODEL), "--data",
                          f"x={TUTORIAL / 'x.csv'}", "--plate", "K=3..5", "--json"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    cli = json.loads(out.stdout)["models"]
    rows = sweep()
    for r, c in zip(rows, cli):
        assert r.result.bound == pytest.approx(c["bound"], abs=1e-12)
        w = c.get("warm_start")
        note = r.evidence["vb"]["note"]
        if w is None:
            assert "warm start" not in note
        else:
            assert ("kept over" in note) == w["kept"], (note, w)
            assert f"({w['default_bound']:.4f})" in note
