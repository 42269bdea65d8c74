"""Mixtures of Bayesian PCA (Winn ch. 3, Bishop & Winn): each component a Bayesian PCA with ARD on
the columns of its loadings, the number of components found by the bound (splits of the worst-fitting
component and deletions, each kept only when the bound rises) — the same library as
``occam latent mbpca``.

>>> import numpy as np
>>> from occam.latent import mbpca
>>> fit = mbpca(np.random.default_rng(0).normal(size=(200, 3)), max_k=4)   # doctest: +SKIP
>>> fit.components, fit.component_dimensions, fit.bound                     # doctest: +SKIP
"""

import os as _os

import numpy as _np

from . import _occam
from ._errors import DataShapeError, DataTypeError, UsageError

__all__ = ["mbpca", "Mbpca", "digits"]

Mbpca = _occam.Mbpca


def _matrix(name, x):
    try:
        a = _np.asarray(x, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise DataTypeError(f"{name}: expected numbers ({e})") from None
    if a.ndim != 2:
        raise DataShapeError(f"{name}: expected a 2-D array (points × dimensions), got shape {a.shape}")
    if a.shape[0] < 2 or a.shape[1] < 2:
        raise DataShapeError(f"{name}: needs at least 2 points in at least 2 dimensions, got shape {a.shape}")
    return _np.ascontiguousarray(a)


def _count(name, value, low):
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)) or value < low:
        raise UsageError(f"{name} must be an integer ≥ {low}, got {value!r}")
    if value > 2**64 - 1:  # crosses into Rust as a 64-bit unsigned integer
        raise UsageError(f"{name} must be at most 2^64 - 1, got {value}")
    return int(value)


def mbpca(x, q=None, max_k=30, start_k=1, seed=0, max_iter=None, tol=None):
    """Fits a mixture of Bayesian PCA to the rows of ``x`` (points × dimensions).

    ``q`` is every component's latent dimension (default d − 1; ARD switches surplus columns
    off), ``max_k`` the most components the search tries from ``start_k``, ``seed`` the seed of
    the starting point; ``max_iter`` and ``tol`` bound each fit's sweeps. Returns an
    :class:`Mbpca` with ``bound``, ``components``, ``effective_components(min_count=1)``,
    ``effective_dimension``, ``component_dimensions``, ``relevance``, ``counts``, ``weights``,
    ``means`` (K × d), ``loadings`` (K × d × q), ``noise_std``, ``responsibilities`` (N × K),
    ``projections`` (N × q), ``steps`` and ``log_predictive(x)``."""
    x = _matrix("x", x)
    d = x.shape[1]
    q = d - 1 if q is None else _count("q", q, 1)
    max_k = _count("max_k", max_k, 1)
    start_k = _count("start_k", start_k, 1)
    if start_k > max_k:
        raise UsageError(f"start_k ({start_k}) must not exceed max_k ({max_k})")
    if max_iter is not None:
        max_iter = _count("max_iter", max_iter, 1)
    if tol is not None:
        tol = float(tol)
        if not tol >= 0:
            raise UsageError(f"tol must be ≥ 0, got {tol}")
    return _occam.mbpca_fit(x, q=q, max_k=max_k, start_k=start_k, seed=_count("seed", seed, 0),
                            max_iter=max_iter, tol=tol)


def digits(path="examples/digits/digits.npz", subset=None, q=None, max_k=8):
    """The digits study of ``occam latent digits`` (Winn §3.4.4 on scikit-learn's 8×8 digits): one
    mixture of Bayesian PCA per digit, and the maximum-likelihood PPCA baseline, on the file's fixed
    split (or the first ``subset = (train, test)`` images of each digit). Returns a list of two
    dicts (mixture of BPCA, then ML PPCA) with ``method``, ``error`` (fraction of test images),
    ``predictions``, ``confusion`` (10 × 10 counts, rows the true digit, columns the prediction),
    ``components`` and ``dimensions`` per digit."""
    if subset is not None:
        if len(subset) != 2:
            raise UsageError(f"subset must be (train, test), got {subset!r}")
        subset = (_count("subset[0]", subset[0], 1), _count("subset[1]", subset[1], 1))
    if q is not None:
        q = _count("q", q, 1)
    return _occam.digits_study(_os.fspath(path), subset=subset, q=q,
                               max_k=_count("max_k", max_k, 1))
