"""The multinomial (examples/iris_softmax) and Poisson (examples/poisson_regression) examples:
their scripts write the shipped data, and the fits give the numbers their READMEs report, beside
scikit-learn's LogisticRegression and PoissonRegressor in the same run."""

import shutil
import subprocess
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression, PoissonRegressor

import occam
from conftest import ROOT, load_csv

IRIS = ROOT / "examples" / "iris_softmax"
POISSON = ROOT / "examples" / "poisson_regression"


def rewritten(directory, script, inputs, outputs, tmp_path):
    for name in [script, *inputs]:
        shutil.copy(directory / name, tmp_path / name)
    subprocess.run([sys.executable, script], cwd=tmp_path, check=True)
    for name in outputs:
        np.testing.assert_array_equal(load_csv(tmp_path / name), load_csv(directory / name), err_msg=name)
        assert (tmp_path / name).read_text().splitlines()[0] == (directory / name).read_text().splitlines()[0]


def test_iris_split_is_prepare_py(tmp_path):
    rewritten(IRIS, "prepare.py", ["iris.csv"], ["X.csv", "c.csv", "X_test.csv", "c_test.csv"], tmp_path)


def test_poisson_data_are_generate_py(tmp_path):
    rewritten(POISSON, "generate.py", [], ["X.csv", "y.csv"], tmp_path)


def iris_predictive(r, xt):
    """E softmax(w x + b) under q: 20,000 joint draws of (w, b), seed 0 (compare_sklearn.py)."""
    w, b = r.posterior("w"), r.posterior("b")
    rng = np.random.default_rng(0)
    # q(w) is one Gaussian over every class's weights (the softmax q-block): drawn jointly.
    W = rng.multivariate_normal(w["mean"].ravel(), w["joint_covariance"].reshape(12, 12), 20000)
    W = W.reshape(20000, 3, 4)
    B = rng.multivariate_normal(b["mean"], b["covariance"], 20000)
    logits = np.einsum("skd,nd->nsk", W, xt) + B[None, :, :]
    return np.exp(logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)).mean(axis=1)


def test_iris_softmax_beside_sklearn():
    """The model as shipped (`softmax`, exact for K = 3) and with Böhning's bound
    (`softmax_bohning`), beside scikit-learn: bounds, sweeps, test errors and log loss; only
    Böhning's fit reports understated sds."""
    x, c = load_csv(IRIS / "X.csv"), load_csv(IRIS / "c.csv").ravel().astype(int)
    xt, ct = load_csv(IRIS / "X_test.csv"), load_csv(IRIS / "c_test.csv").ravel().astype(int)
    text = (IRIS / "iris_softmax.occam").read_text()
    fits = {link: occam.Model.from_string(text.replace("softmax(w", f"{link}(w"), name=link)
            .fit(data={"X": x, "c": c}) for link in ("softmax", "softmax_bohning")}
    exact, bohning = fits["softmax"], fits["softmax_bohning"]
    print("iris_softmax (bound, sweeps):", [(f.bound, f.iterations) for f in fits.values()])
    assert abs(exact.bound - (-32.181490)) < 1e-5 and exact.iterations == 28
    assert abs(bohning.bound - (-38.922881)) < 1e-5 and bohning.iterations == 217
    assert exact.bound_quality == "exact" and exact.sds_understated == {}
    assert bohning.bound_quality == "lower_bound"
    assert sorted(bohning.sds_understated) == ["b", "w"]
    assert "sds 8–15% and class-contrast sds 28–49% too small" in bohning.sds_understated["w"]
    sk = LogisticRegression(max_iter=1000).fit(x, c).predict_proba(xt)
    rows = np.arange(ct.size)
    probs = [iris_predictive(exact, xt), iris_predictive(bohning, xt), sk]
    measured = [(int((q.argmax(1) != ct).sum()), -np.mean(np.log(q[rows, ct]))) for q in probs]
    print("iris_softmax (errors, log loss): softmax, softmax_bohning, scikit-learn", measured)
    assert [m[0] for m in measured] == [0, 0, 0]
    # Böhning's fit and scikit-learn's as recorded before `softmax` was exact (the same family
    # and q, so the same numbers), the exact fit's measured beside them.
    np.testing.assert_allclose([m[1] for m in measured], [0.1392, 0.1389, 0.1290], atol=5e-5)


def test_poisson_regression_beside_glm():
    X, y = load_csv(POISSON / "X.csv"), load_csv(POISSON / "y.csv").ravel()
    r = occam.Model(str(POISSON / "poisson_regression.occam")).fit(data={"X": X, "y": y})
    assert abs(r.bound - (-149.704033)) < 1e-5
    w = r.posterior("w")
    mean, sd = w["mean"], np.sqrt(np.diag(w["covariance"]))
    mle = PoissonRegressor(alpha=0.0, fit_intercept=False, solver="newton-cholesky", tol=1e-12,
                           max_iter=1000).fit(X, y).coef_
    se = np.sqrt(np.diag(np.linalg.inv((X * np.exp(X @ mle)[:, None]).T @ X)))
    print(f"poisson: occam means {mean} sds {sd}; GLM MLE {mle} se {se}")
    np.testing.assert_allclose(mean, [0.4481, 0.6564, -1.0623], atol=5e-5)
    np.testing.assert_allclose(mle, [0.4559, 0.6576, -1.0545], atol=5e-5)
    assert np.max(np.abs(mean - mle)) < 0.01
    np.testing.assert_allclose(sd, se, rtol=0.005)
