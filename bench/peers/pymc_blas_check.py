"""Checks that PyTensor (in the PyMC venv that setup_pymc.sh builds) links a BLAS: its
``blas__ldflags`` is not empty, importing it raises no "could not link to a BLAS" warning (turned into
an error here), X @ w compiles to a BLAS op (CGemv), and its time against NumPy's on the benchmark's
shape (N = 1e5, D = 20, median of 51; X.T @ (X @ w) too, the shape of the gradient)."""

import time
import warnings

import numpy as np

warnings.simplefilter("error", UserWarning)
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

ldflags = pytensor.config.blas__ldflags
if not ldflags:
    raise SystemExit("pymc_blas_check: pytensor.config.blas__ldflags is empty (no BLAS linked)")
rng = np.random.default_rng(0)
X, w = rng.standard_normal((100_000, 20)), rng.standard_normal(20)
xs, ws = pt.matrix("X"), pt.vector("w")
f = pytensor.function([xs, ws], pt.dot(xs, ws))
g = pytensor.function([xs, ws], pt.dot(xs.T, pt.dot(xs, ws)))
ops = sorted({type(n.op).__name__ for n in f.maker.fgraph.toposort()})
if not np.allclose(f(X, w), X @ w) or not np.allclose(g(X, w), X.T @ (X @ w)):
    raise SystemExit("pymc_blas_check: PyTensor's X @ w differs from NumPy's")


def med(fn, k=51):
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))


print(f"pytensor {pytensor.__version__} blas__ldflags {ldflags!r}; X @ w ops {ops}")
print(f"X @ w:         numpy {med(lambda: X @ w):.3f} ms, pytensor {med(lambda: f(X, w)):.3f} ms")
print(f"X.T @ (X @ w): numpy {med(lambda: X.T @ (X @ w)):.3f} ms, pytensor {med(lambda: g(X, w)):.3f} ms")
