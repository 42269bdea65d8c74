"""Test error on Pima.te (332 cases) of scikit-learn's LogisticRegression (default L2, C = 1,
and unpenalised) beside Occam's ARD logistic model fitted by `occam fit` on Pima.tr (200 cases),
both on the inputs standardised by prepare.py. Occam's class is the sign of the posterior mean
of the log-odds (the predictive probability σ(μ/√(1 + πs²/8)) has the same sign).

Usage (from this directory, after `python prepare.py`):
    python compare_sklearn.py [path/to/occam]     # default: `occam` on PATH
"""

import json
import subprocess
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression


def load(name):
    return np.loadtxt(f"{name}.csv", delimiter=",", skiprows=1, ndmin=2)


def main():
    x, y = load("X"), load("y").ravel()
    xt, yt = load("X_test"), load("y_test").ravel()
    rows = []
    for label, model in [
        ("scikit-learn LogisticRegression (C=1)", LogisticRegression()),
        ("scikit-learn LogisticRegression (C=inf, no penalty)", LogisticRegression(C=np.inf)),
    ]:
        model.fit(x, y)
        rows.append((label, np.mean(model.predict(xt) != yt)))
    occam = sys.argv[1] if len(sys.argv) > 1 else "occam"
    out = subprocess.run([occam, "fit", "pima_logistic.occam", "--json"], check=True,
                         capture_output=True, text=True).stdout
    post = json.loads(out)["variables"]
    w = np.array(post["w"]["parameters"]["mean"]).ravel()
    b = post["b"]["parameters"]["mean"][0]
    rows.append(("Occam ARD logistic (JJ bound)", np.mean(((xt @ w + b) > 0) != yt)))
    for label, err in rows:
        print(f"{label:48s} test error {err:.4f} ({round(err * len(yt))}/{len(yt)})")


if __name__ == "__main__":
    main()
