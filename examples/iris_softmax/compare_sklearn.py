"""Test errors and log loss on the 75 test rows of iris_softmax.occam fitted by Occam beside
scikit-learn's LogisticRegression (C = 1, the same prior on the weights as its MAP) and
occam.sklearn.BayesianLogisticRegression, all on the training half that prepare.py writes.

Occam's class probabilities are the posterior predictive E softmax(w x + b) under q, by Monte
Carlo: 20,000 draws of (w, b) from q, seed 0, the same draws for every test row. Each Occam model
is fitted twice: as shipped (`softmax`, exact for K = 3) and with Böhning's bound
(`softmax_bohning`; the estimator's `method="bohning"`).

Usage (from this directory, after `python prepare.py`, with the occam package installed):
    python compare_sklearn.py
"""

import numpy as np
from sklearn.linear_model import LogisticRegression

import occam
from occam.sklearn import BayesianLogisticRegression


def load(name):
    return np.loadtxt(f"{name}.csv", delimiter=",", skiprows=1, ndmin=2)


def report(label, proba, c):
    errors = int((proba.argmax(axis=1) != c).sum())
    loss = -np.mean(np.log(proba[np.arange(c.size), c]))
    print(f"{label:52s} test errors {errors}/{c.size}, log loss {loss:.4f}")


def predictive(r, xt):
    """E softmax(w x + b) under q by Monte Carlo: 20,000 joint draws of (w, b), seed 0."""
    w, b = r.posterior("w"), r.posterior("b")
    k, d = w["mean"].shape
    rng = np.random.default_rng(0)
    s = 20000
    # q(w) is one Gaussian over every class's weights: draw them jointly.
    kd = w["mean"].size
    W = rng.multivariate_normal(w["mean"].ravel(), w["joint_covariance"].reshape(kd, kd), s)
    W = W.reshape(s, k, -1)
    B = rng.multivariate_normal(b["mean"], b["covariance"], s)
    logits = np.einsum("skd,nd->nsk", W, xt) + B[None, :, :]
    return np.exp(logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)).mean(axis=1)


def main():
    x, c = load("X"), load("c").ravel().astype(int)
    xt, ct = load("X_test"), load("c_test").ravel().astype(int)
    text = open("iris_softmax.occam").read()
    # The model as shipped (`softmax`: exact for K = 3) and with Böhning's bound.
    for label, source in [("softmax", text),
                          ("softmax_bohning", text.replace("softmax(w", "softmax_bohning(w"))]:
        r = occam.Model.from_string(source, name=label).fit(data={"X": x, "c": c})
        print(f"Occam {label}: lower bound {r.bound:.6f} after {r.iterations} sweeps")
        report(f"Occam iris_softmax.occam, {label} (predictive)", predictive(r, xt), ct)
    report("scikit-learn LogisticRegression(C=1)",
           LogisticRegression(max_iter=1000).fit(x, c).predict_proba(xt), ct)
    for method in ("quadrature", "bohning"):
        report(f"occam.sklearn.BayesianLogisticRegression(method={method!r})",
               BayesianLogisticRegression(method=method).fit(x, c).predict_proba(xt), ct)


if __name__ == "__main__":
    main()
