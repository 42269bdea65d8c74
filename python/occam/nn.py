"""Lawrence's Bayesian neural networks: one-hidden-layer erf MLPs with a variational posterior (one
diagonal Gaussian, or a committee: a mixture of diagonal Gaussians), the evidence procedure, hybrid
Monte Carlo or early stopping, fitted by the same library as ``occam nn fit``.

>>> import numpy as np
>>> from occam.nn import BayesianMLP
>>> x = np.linspace(0, 1, 30)[:, None]
>>> net = BayesianMLP(hidden=3, restarts=2, cycles=2, iters_per_cycle=100).fit(x, np.sin(6 * x[:, 0]))
>>> mean, sd = net.predict(x, return_std=True)       # doctest: +SKIP

Every setting of the spec (see ``docs/guide/09-networks.md``) is a keyword argument; the defaults are
the committee paper's (H = 8, single α, 10 restarts, 100 pre-training and 5 × 500 iterations).

A time series, as ``occam nn fit --lags K`` and ``occam nn predict`` take it:

>>> y = 50 + 40 * np.sin(0.6 * np.arange(60))
>>> net = BayesianMLP(hidden=2, restarts=1, cycles=2, iters_per_cycle=50).fit_series(y[:40], lags=3)
>>> rows, mean = net.predict_series(y)                # rows 3, 4, ..., 59  # doctest: +SKIP
"""

import json as _json

import numpy as _np

from . import _occam
from ._errors import DataError, DataShapeError, DataTypeError

__all__ = ["BayesianMLP", "Network", "lag_windows"]

Network = _occam.Network

# The file format of `occam nn fit --out` (crates/occam/src/nn/fit.rs, `SavedNetwork`).
_SAVED_FORMAT = "occam-nn-network/1"

_FIELDS = (
    "hidden",
    "components",
    "prior",
    "method",
    "restarts",
    "seed",
    "exact_g2",
    "pretrain_iters",
    "cycles",
    "iters_per_cycle",
    "structure_cycles",
    "committee",
)


def _matrix(name, x):
    try:
        a = _np.asarray(x, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise DataTypeError(f"{name}: expected numbers ({e})") from None
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise DataShapeError(f"{name}: expected 1 or 2 dimensions, got shape {a.shape}")
    return _np.ascontiguousarray(a)


def lag_windows(series, lags):
    """``(x, t)`` of a series as ``occam nn fit --lags K`` builds them: row i of ``x`` holds the
    ``lags`` values before ``series[lags + i]``, the most recent first, and ``t[i]`` is that
    value (``len(series) - lags`` rows)."""
    s = _np.ascontiguousarray(_np.asarray(series, dtype=_np.float64))
    if s.ndim != 1:
        raise DataShapeError(f"series: expected 1 dimension, got shape {s.shape}")
    if isinstance(lags, bool) or not isinstance(lags, (int, _np.integer)) or lags < 1:
        from ._errors import UsageError

        raise UsageError(f"lags must be a positive integer, got {lags!r}")
    return _occam.lag_windows(s, int(lags))


class BayesianMLP:
    """A Bayesian MLP regressor with scikit-learn's ``fit``/``predict`` shape.

    Keyword arguments are the spec's fields: ``hidden``, ``components`` (mixture components of the
    variational posterior), ``prior`` (``"single"``, ``"grouped"``, ``"ard"``, ``"nrd"``),
    ``method`` (``"vb"``, ``"evidence"``, ``"hmc"``, ``"early_stopping"``), ``restarts``, ``seed``,
    ``exact_g2``, ``pretrain_iters``, ``cycles``, ``iters_per_cycle``, ``structure_cycles``,
    ``committee``. Unset fields take the committee paper's values.
    """

    def __init__(self, **spec):
        unknown = sorted(set(spec) - set(_FIELDS))
        if unknown:
            from ._errors import UsageError

            raise UsageError(f"unknown setting(s) {unknown}; known: {list(_FIELDS)}")
        self.spec = spec
        self.network_ = None

    def fit(self, x, t):
        """Fits to inputs ``x`` (n × d, or n) and targets ``t`` (n); returns self."""
        x = _matrix("x", x)
        t = _np.ascontiguousarray(_np.asarray(t, dtype=_np.float64).ravel())
        if t.shape[0] != x.shape[0]:
            raise DataShapeError(f"x has {x.shape[0]} rows but t has {t.shape[0]} values")
        self.network_ = _occam.nn_fit(x, t, _json.dumps(self.spec))
        return self

    def fit_series(self, series, lags):
        """Fits a network predicting each value of ``series`` from its ``lags`` previous values
        (:func:`lag_windows`), as ``occam nn fit --lags`` does; returns self."""
        x, t = lag_windows(series, lags)
        self.fit(x, t)
        self.lags_ = int(lags)
        return self

    def predict_series(self, series, return_std=False, noise=True):
        """One-step-ahead predictions for ``series`` by a network of :meth:`fit_series`:
        ``(rows, mean)`` (or ``(rows, mean, sd)``), where ``rows`` are the positions in
        ``series`` predicted (``lags``, ``lags + 1``, ...), as ``occam nn predict`` writes them
        in its row column."""
        lags = getattr(self, "lags_", None)
        if lags is None:
            from ._errors import UsageError

            raise UsageError("predict_series needs a network fitted by fit_series")
        x, _ = lag_windows(series, lags)
        rows = _np.arange(lags, lags + x.shape[0])
        out = self.predict(x, return_std=return_std, noise=noise)
        return (rows, *out) if return_std else (rows, out)

    def _net(self):
        if self.network_ is None:
            from ._errors import UsageError

            raise UsageError("fit the network first")
        return self.network_

    def predict(self, x, return_std=False, noise=True):
        """Predictive means; with ``return_std`` also standard deviations (of a new target when
        ``noise``, else of f(x) alone). Evidence and early-stopping networks give no deviations."""
        mean, var_f, var_t = self._net().predict(_matrix("x", x))
        if not return_std:
            return mean
        var = var_t if noise else var_f
        if var is None:
            from ._errors import UsageError

            raise UsageError("this method gives no predictive variance (use vb or hmc)")
        return mean, _np.sqrt(var)

    @property
    def bound(self):
        """The variational lower bound on ln p(D) of the standardised data (VB; else None)."""
        return self._net().bound

    @property
    def train_rmse(self):
        """Training RMSE of the predictive mean."""
        return self._net().train_rmse

    def to_json(self):
        """The fitted network as JSON text, in the file format of ``occam nn fit --out``
        (``{"format": "occam-nn-network/1", "target", "inputs", "lags", "net"}``), so a network
        fitted here is read by ``occam nn predict`` and keeps its lag order. Its columns take the
        names the command line gives the columns of an ``.npy`` array: ``column 1`` ... for the
        inputs and the next one for the target (a series of :meth:`fit_series`: ``column 1``, no
        inputs); a CSV for it needs a header with those names."""
        net = self._net()
        lags = getattr(self, "lags_", None)
        if lags is None:
            inputs = [f"column {i + 1}" for i in range(net.inputs)]
            target = f"column {net.inputs + 1}"
        else:
            inputs, target = [], "column 1"
        saved = {
            "format": _SAVED_FORMAT,
            "target": target,
            "inputs": inputs,
            "lags": lags,
            "net": _json.loads(net.to_json()),
        }
        return _json.dumps(saved)

    @classmethod
    def from_json(cls, text):
        """A fitted network from :meth:`to_json`'s text, from a file that ``occam nn fit --out``
        wrote, or from a bare network (``Network.to_json``); a time-series network keeps its lag
        order, so :meth:`predict_series` works after the round trip."""
        lags = None
        try:
            parsed = _json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "format" in parsed:
            if parsed["format"] != _SAVED_FORMAT or "net" not in parsed:
                raise DataError(
                    f"not a saved network: format {parsed['format']!r} (expected {_SAVED_FORMAT!r})"
                )
            lags = parsed.get("lags")
            text = _json.dumps(parsed["net"])
        net = Network.from_json(text)
        obj = cls(**{k: v for k, v in _json.loads(net.spec).items() if k in _FIELDS})
        obj.network_ = net
        if lags is not None:
            obj.lags_ = int(lags)
        return obj
