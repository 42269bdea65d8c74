#!/usr/bin/env python3
"""BayesPy's linear state-space demo (bayespy/demos/lssm.py) run twice on the same data, without
and with its parameter-expansion rotation (RotationOptimizer over RotateGaussianMarkovChain(X,
RotateGaussianARD(A, alpha)) and RotateGaussianARD(C, gamma)); prints the sweeps to convergence
and the final bound of each as JSON lines.

The data are the demo's own recipe (`simulate_data`): numpy seed 42, M = 6 observed dimensions,
N = 200 steps, a 3-D state (two oscillating components, rotation by w = 0.3, and a random walk),
x_0 ~ N(0, 10²), unit innovation noise, observation noise std 3. The demo also hides 30% of the
values and steps 30–80; here every value is observed (Occam's example reads a complete table).
`--write FILE` writes y transposed (N rows × M columns, CSV with a header), the file Occam's test
and example use (examples/lds_rotation/y.csv).

The model is the demo's `model(M, N, D=3)`: alpha, gamma ~ Gamma(1e-5, 1e-5) over D; A ~
GaussianARD(0, alpha) rows; X ~ GaussianMarkovChain(0, 1e-3·I, A, ones(D)); C ~ GaussianARD(0,
gamma); tau ~ Gamma(1e-5, 1e-5). Its starts: A = I, X from a draw, gamma = 1e-2, C from a draw,
tau = 1e2 (drawn once here so both runs start from the same point). BayesPy's convergence rule is
relative: (L₁ − L₀) / ½(|L₀| + |L₁|) < tol.
Usage: bayespy_lds_rotation.py [--write examples/lds_rotation/y.csv] [--tol 1e-6] [--maxiter 5000]
"""

import argparse
import json
import time

import numpy as np


def data(m=6, n=200):
    """The demo's simulate_data(M, N) after np.random.seed(42)."""
    np.random.seed(42)
    d = 3
    c = np.random.randn(m, d)
    w = 0.3
    a = np.array([[np.cos(w), -np.sin(w), 0], [np.sin(w), np.cos(w), 0], [0, 0, 1]])
    x = np.empty((n, d))
    y = np.empty((m, n))
    x[0] = 10 * np.random.randn(d)
    y[:, 0] = c @ x[0] + 3 * np.random.randn(m)
    for t in range(n - 1):
        x[t + 1] = a @ x[t] + np.random.randn(d)
        y[:, t + 1] = c @ x[t + 1] + 3 * np.random.randn(m)
    return y


def fit(y, rotate, tol, maxiter, starts):
    from bayespy.inference import VB
    from bayespy.inference.vmp import transformations
    from bayespy.nodes import Gamma, GaussianARD, GaussianMarkovChain, SumMultiply

    m, n = y.shape
    d = 3
    alpha = Gamma(1e-5, 1e-5, plates=(d,), name="alpha")
    a = GaussianARD(0, alpha, shape=(d,), plates=(d,), name="A")
    a.initialize_from_value(np.identity(d))
    x = GaussianMarkovChain(np.zeros(d), 1e-3 * np.identity(d), a, np.ones(d), n=n, name="X")
    x.initialize_from_value(starts["x"])
    gamma = Gamma(1e-5, 1e-5, plates=(d,), name="gamma")
    gamma.initialize_from_value(1e-2 * np.ones(d))
    c = GaussianARD(0, gamma, shape=(d,), plates=(m, 1), name="C")
    c.initialize_from_value(starts["c"][:, None, :])
    tau = Gamma(1e-5, 1e-5, name="tau")
    tau.initialize_from_value(1e2)
    f = SumMultiply("i,i", c, x, name="F")
    obs = GaussianARD(f, tau, name="Y")
    obs.observe(y)
    q = VB(obs, f, c, gamma, x, a, alpha, tau)
    if rotate:
        rot_a = transformations.RotateGaussianARD(a, alpha, axis=0)
        rot_x = transformations.RotateGaussianMarkovChain(x, rot_a)
        rot_c = transformations.RotateGaussianARD(c, gamma, axis=0)
        r = transformations.RotationOptimizer(rot_x, rot_c, d)
        q.set_callback(r.rotate)
    t0 = time.perf_counter()
    q.update(repeat=maxiter, tol=tol, verbose=False)
    seconds = time.perf_counter() - t0
    trace = [float(v) for v in q.L[: q.iter]]
    return {
        "peer": "bayespy",
        "rotate": rotate,
        "iterations": q.iter,
        "bound": trace[-1],
        "converged": bool(q.converged),
        "seconds": seconds,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", default=None)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--maxiter", type=int, default=5000)
    a = ap.parse_args()
    y = data()
    rng = np.random.RandomState(2)
    starts = {"x": rng.randn(y.shape[1], 3), "c": rng.randn(y.shape[0], 3)}
    if a.write:
        header = ",".join(f"o{j}" for j in range(y.shape[0]))
        np.savetxt(a.write, y.T, delimiter=",", fmt="%.17g", header=header, comments="")
    for rotate in (False, True):
        print(json.dumps(fit(y, rotate, a.tol, a.maxiter, starts)), flush=True)


if __name__ == "__main__":
    main()
