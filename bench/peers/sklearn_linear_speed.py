"""Speed of occam.sklearn's BayesianRidge and ARDRegression against scikit-learn's own, in one run
on the same data (issue 29 asks for at least 5x faster per fit at N = 100,000, D = 50).

For each (N, D): X ~ N(0, 1) (seed 0), y = X w + 0.5 noise with half of w zero; each estimator
is fitted `--repeats` times with its defaults and the median wall time is kept; the script prints
the times, the ratio sklearn / occam (> 1: Occam faster) and the largest coefficient difference.

Usage: python bench/peers/sklearn_linear_speed.py [--sizes 10000x20,100000x50] [--repeats 3]
(the occam package installed; use a release wheel, scripts/wheel, for numbers worth quoting).
"""

import argparse
import time

import numpy as np
import sklearn
from sklearn import linear_model as sk

import occam
from occam import sklearn as oc


def median_time(make, X, y, repeats):
    times, est = [], None
    for _ in range(repeats):
        est = make()
        t = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t)
    return float(np.median(times)), est


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000x10,10000x20,100000x50")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"scikit-learn {sklearn.__version__}, occam {getattr(occam, '__version__', '?')}")
    print(f"{'estimator':15s} {'N':>7s} {'D':>4s} {'sklearn s':>10s} {'occam s':>9s} "
          f"{'ratio':>7s} {'max |dcoef|':>11s}")
    for size in args.sizes.split(","):
        n, d = (int(v) for v in size.split("x"))
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, d))
        w = rng.standard_normal(d) * (np.arange(d) % 2)
        y = X @ w + 0.5 * rng.standard_normal(n)
        for name in ("BayesianRidge", "ARDRegression"):
            t_sk, e_sk = median_time(getattr(sk, name), X, y, args.repeats)
            t_oc, e_oc = median_time(getattr(oc, name), X, y, args.repeats)
            diff = float(np.max(np.abs(e_sk.coef_ - e_oc.coef_)))
            print(f"{name:15s} {n:7d} {d:4d} {t_sk:10.4f} {t_oc:9.4f} {t_sk / t_oc:7.2f} "
                  f"{diff:11.2e}", flush=True)


if __name__ == "__main__":
    main()
