"""Speed of occam.sklearn's BayesianRidge and ARDRegression against scikit-learn's own, in one run
on the same data (issue 29 asks for at least 5x faster per fit at N = 100,000, D = 50).

For each (N, D): X ~ N(0, 1) (seed 0), y = X w + 0.5 noise with half of w zero; each estimator
is fitted `--repeats` times with its defaults, scikit-learn's and Occam's alternated, and the
median wall and CPU (getrusage, all threads) times are kept; the script prints the times, the
ratios sklearn / occam (> 1: Occam faster) and the largest coefficient difference.

Usage: python bench/peers/sklearn_linear_speed.py [--sizes 10000x20,100000x50] [--repeats 3]
(the occam package installed; use a release wheel, scripts/wheel, for numbers worth quoting).
"""

import argparse
import resource
import time

import numpy as np
import sklearn
from sklearn import linear_model as sk

import occam
from occam import sklearn as oc


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(make, X, y):
    est = make()
    t, c = time.perf_counter(), cpu()
    est.fit(X, y)
    return time.perf_counter() - t, cpu() - c, est


def alternated(make_a, make_b, X, y, repeats):
    """Median (wall, CPU) of each of two estimators, fitted in turn `repeats` times."""
    a, b = [], []
    for _ in range(repeats):
        *ta, est_a = timed(make_a, X, y)
        *tb, est_b = timed(make_b, X, y)
        a.append(ta)
        b.append(tb)
    return np.median(a, axis=0), np.median(b, axis=0), est_a, est_b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000x10,10000x20,100000x50")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"scikit-learn {sklearn.__version__}, occam {getattr(occam, '__version__', '?')}")
    print(f"{'estimator':15s} {'N':>7s} {'D':>4s} {'sklearn s':>10s} {'occam s':>9s} "
          f"{'ratio':>7s} {'sk cpu':>8s} {'oc cpu':>8s} {'ratio':>7s} {'max |dcoef|':>11s}")
    for size in args.sizes.split(","):
        n, d = (int(v) for v in size.split("x"))
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, d))
        w = rng.standard_normal(d) * (np.arange(d) % 2)
        y = X @ w + 0.5 * rng.standard_normal(n)
        for name in ("BayesianRidge", "ARDRegression"):
            (t_sk, c_sk), (t_oc, c_oc), e_sk, e_oc = alternated(
                getattr(sk, name), getattr(oc, name), X, y, args.repeats)
            diff = float(np.max(np.abs(e_sk.coef_ - e_oc.coef_)))
            print(f"{name:15s} {n:7d} {d:4d} {t_sk:10.4f} {t_oc:9.4f} {t_sk / t_oc:7.2f} "
                  f"{c_sk:8.3f} {c_oc:8.3f} {c_sk / c_oc:7.2f} {diff:11.2e}", flush=True)


if __name__ == "__main__":
    main()
