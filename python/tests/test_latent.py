"""Mixtures of Bayesian PCA from Python (occam.latent.mbpca) and rotations of PCA-type fits
(Model.fit(rotate=True)): the same numbers as the command line and the Rust library."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import occam
from occam.latent import digits as mbpca_digits
from occam.latent import mbpca

ROOT = pathlib.Path(__file__).resolve().parents[2]
SINUSOID = ROOT / "examples" / "mbpca" / "sinusoid.csv"
PCA = ROOT / "examples" / "pca_rotation"


def load_csv(path):
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def cli(*args):
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    assert binary.is_file(), f"{binary} is missing: run `cargo build -p occam-cli` first"
    out = subprocess.run([str(binary), *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout


@pytest.fixture(scope="module")
def sinusoid_fit():
    # A short search (at most 4 components) keeps the debug-build test quick.
    return mbpca(load_csv(SINUSOID), q=1, max_k=4, seed=0)


def test_mbpca_equals_the_cli_on_the_noisy_sinusoid(sinusoid_fit):
    # The search of `occam latent mbpca` (examples/mbpca): same data, q, seed and limit.
    t = load_csv(SINUSOID)
    fit = sinusoid_fit
    ref = json.loads(cli("latent", "mbpca", str(SINUSOID), "--q", "1", "--max-k", "4", "--json"))
    assert fit.bound == pytest.approx(ref["bound"], rel=1e-12, abs=0)
    assert fit.components == ref["components"]
    assert fit.component_dimensions == ref["component_dimensions"]
    assert fit.effective_components() == ref["effective_components"]
    np.testing.assert_allclose(fit.counts, ref["counts"], rtol=1e-12)
    # Shapes and invariants of what the fit exposes.
    k, n, d = fit.components, t.shape[0], t.shape[1]
    assert fit.means.shape == (k, d) and fit.loadings.shape == (k, d, 1)
    assert fit.responsibilities.shape == (n, k) and fit.projections.shape == (n, 1)
    np.testing.assert_allclose(fit.responsibilities.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(fit.responsibilities.sum(axis=0), fit.counts, rtol=1e-9)
    assert fit.weights.sum() == pytest.approx(1.0)
    assert fit.steps[0]["action"] == "start" and fit.steps[-1]["bound"] <= fit.bound + 1e-9


def test_mbpca_predictive_density_prefers_points_on_the_manifold(sinusoid_fit):
    fit = sinusoid_fit
    on = np.array([[1.0, np.sin(1.0)], [4.0, np.sin(4.0)]])
    off = on + np.array([0.0, 1.5])
    lp_on, lp_off = fit.log_predictive(on), fit.log_predictive(off)
    assert lp_on.shape == (2,)
    assert np.all(lp_on > lp_off + 5)
    with pytest.raises(occam.DataShapeError, match="columns"):
        fit.log_predictive(np.zeros((2, 3)))


def test_mbpca_bad_input_is_a_clear_error():
    with pytest.raises(occam.DataShapeError, match="2-D"):
        mbpca(np.zeros(5))
    with pytest.raises(occam.UsageError, match="start_k"):
        mbpca(np.zeros((5, 2)), start_k=4, max_k=2)
    x = np.zeros((5, 2))
    x[3, 1] = np.nan
    with pytest.raises(occam.DataError, match="row 3, column 1"):
        mbpca(x)


def test_rotations_cut_the_sweeps_of_bayespys_pca_example():
    # BayesPy 0.6.6, same data: 1,896 sweeps without rotations, 22 with.
    # Rotations are the default wherever they apply; rotate=False turns them off.
    model = occam.Model(PCA / "pca.occam")
    plain = model.fit(max_iter=5000, rotate=False)
    rotated = model.fit(max_iter=5000, rotate=True)
    default = model.fit(max_iter=5000)
    assert plain.converged and rotated.converged
    assert rotated.iterations * 5 <= plain.iterations
    assert rotated.bound >= plain.bound - 1e-6 * abs(plain.bound)
    assert default.bound == rotated.bound and default.iterations == rotated.iterations


def test_rotate_without_a_product_is_a_usage_error(tutorial_x):
    model = occam.Model(ROOT / "examples" / "vibes_tutorial" / "mixture.occam")
    with pytest.raises(occam.UsageError, match="no dot"):
        model.fit({"x": tutorial_x}, rotate=True)


def test_rotate_a_linear_dynamical_system():
    # BayesPy's lssm demo data (examples/lds_rotation): the chain, its dynamics and the emission
    # rotated together; the Rust test counts 1,493 sweeps without rotations and 50 with.
    lds = ROOT / "examples" / "lds_rotation"
    model = occam.Model(lds / "lssm.occam")
    y = load_csv(lds / "y.csv")
    plain = model.fit({"y": y}, max_iter=20000, rotate=False)
    rotated = model.fit({"y": y}, max_iter=20000, rotate=True)
    assert plain.converged and rotated.converged
    assert rotated.iterations * 5 <= plain.iterations
    assert rotated.bound >= plain.bound - 1e-6 * abs(plain.bound)


def test_pca_outputs_equal_the_files_of_fit_out(tmp_path):
    # The reconstruction and projection of BayesPy's PCA example: Result.pca_outputs() gives the
    # numbers and figures `occam fit --out` writes (same model, data, seed and rotations).
    model = occam.Model(PCA / "pca.occam")
    outputs = model.fit(rotate=True).pca_outputs()
    cli("fit", str(PCA / "pca.occam"), "--rotate", "--out", str(tmp_path))
    written = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("recon", "proj")))
    expected = sorted(f"{name}.{ext}" for name, o in outputs.items()
                      for ext in (("csv", "svg") if o["svg"] is not None else ("csv",)))
    assert written == expected and set(outputs) == {"reconstruction_y", "projection_X"}
    for name, o in outputs.items():
        lines = (tmp_path / f"{name}.csv").read_text().splitlines()
        assert lines[0].split(",") == o["columns"]
        table = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
        assert o["values"].shape == table.shape
        # The CSV holds shortest round-trip numbers: equal bits, not just close.
        np.testing.assert_array_equal(o["values"], table)
        assert o["svg"] == (tmp_path / f"{name}.svg").read_text()
    y = np.loadtxt(PCA / "y.csv", delimiter=",", skiprows=1, ndmin=2)
    recon = outputs["reconstruction_y"]["values"]
    assert recon.shape == y.shape and np.sqrt(np.mean((recon - y) ** 2)) < np.std(y)
    assert outputs["projection_X"]["columns"][0].startswith("X[")


def test_pca_outputs_are_empty_for_other_models(tutorial_x):
    model = occam.Model(ROOT / "examples" / "vibes_tutorial" / "mixture.occam")
    assert model.fit({"x": tutorial_x}).pca_outputs() == {}


def test_write_gives_the_files_of_fit_out(tmp_path):
    # Result.write(dir) writes what `occam fit --out dir` writes, Hinton diagrams of ⟨W⟩ and of
    # the ARD relevances 1/⟨α⟩ included, with the same contents.
    model = occam.Model(PCA / "pca.occam")
    py_dir, cli_dir = tmp_path / "py", tmp_path / "cli"
    model.fit(rotate=True).write(py_dir)
    cli("fit", str(PCA / "pca.occam"), "--rotate", "--out", str(cli_dir))
    names = sorted(p.name for p in py_dir.iterdir())
    assert names == sorted(p.name for p in cli_dir.iterdir())
    assert any(n.startswith("hinton_") and n.endswith("_relevance.svg") for n in names), names
    assert sum(n.startswith("hinton_") for n in names) >= 2, names
    for n in names:
        if n.endswith((".csv", ".svg")):
            assert (py_dir / n).read_bytes() == (cli_dir / n).read_bytes(), n
    with pytest.raises(occam.OccamError):
        model.fit(rotate=True).write(py_dir / "bound.csv")


def test_digits_study_gives_the_clis_confusion_matrices(tmp_path):
    # A small subset of the digits study (10 training and 15 test images per digit, q = 3): the
    # confusion matrices equal the CSVs `occam latent digits --out` writes (both misclassify some).
    path = ROOT / "examples" / "digits" / "digits.npz"
    bayes, ml = mbpca_digits(path, subset=(10, 15), q=3, max_k=2)
    cli("latent", "digits", str(path), "--subset", "10", "15", "--q", "3", "--max-k", "2",
        "--out", str(tmp_path))
    for result, name in ((bayes, "mbpca"), (ml, "mppca")):
        c = result["confusion"]
        assert c.shape == (10, 10) and c.sum() == 150 and np.trace(c) < 150
        assert result["error"] == pytest.approx(1 - np.trace(c) / 150)
        lines = (tmp_path / f"confusion_{name}.csv").read_text().splitlines()
        table = np.array([[int(v) for v in line.split(",")[1:]] for line in lines[1:]])
        np.testing.assert_array_equal(c, table)
    with pytest.raises(occam.UsageError):
        mbpca_digits(path, subset=(1,))
