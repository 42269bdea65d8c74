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
"""

import json as _json

import numpy as _np

from . import _occam
from ._errors import DataShapeError, DataTypeError

__all__ = ["BayesianMLP", "Network"]

Network = _occam.Network

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
        """The fitted network as JSON text."""
        return self._net().to_json()

    @classmethod
    def from_json(cls, text):
        """A fitted network from :meth:`to_json`'s text."""
        net = Network.from_json(text)
        obj = cls(**{k: v for k, v in _json.loads(net.spec).items() if k in _FIELDS})
        obj.network_ = net
        return obj
