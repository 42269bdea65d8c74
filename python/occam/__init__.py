"""Occam: automatic variational Bayesian inference (Winn's variational message passing) and model
comparison, with NumPy arrays in and out.

>>> import numpy as np, occam
>>> m = occam.Model("examples/vibes_tutorial/mixture.occam")
>>> r = m.fit(data={"x": np.loadtxt("examples/vibes_tutorial/x.csv", delimiter=",", skiprows=1)})
>>> r.bound, r.posterior("mu")["mean"].shape             # doctest: +SKIP
(-2068.95..., (20, 2))

* :class:`Model` — a model file (``Model("m.occam")``) or text (``Model.from_string(...)``);
  :meth:`Model.fit` returns a :class:`Result`; :meth:`Model.sample` draws data; :meth:`Model.graph`
  returns an SVG shown inline in Jupyter.
* :func:`compare` — fits several models to the same data and compares their bounds.
* :mod:`occam.sklearn` — ``BayesianGaussianMixture``, a drop-in for scikit-learn's.
* :mod:`occam.nn` — ``BayesianMLP``, Lawrence's Bayesian neural networks (VB committees, evidence, HMC).
* :func:`read_data` and :func:`select_rows` — a data file's columns and rows, and a seeded
  train/test split of an array's rows, as ``--data x=FILE:COLUMNS@ROWS`` chooses them; a data
  value given to :meth:`Model.fit` may also be such a path.
* Errors derive from :class:`OccamError` and carry the command line's located messages.
"""

import json as _json
import os as _os

import numpy as _np

from . import _occam
from ._compare import Comparison, EvidencePlot  # occam.compare's result
from ._data import as_data as _as_data
from ._errors import (
    DataError,
    DataShapeError,
    DataTypeError,
    FileError,
    InternalError,
    Interrupted,
    ModelError,
    OccamError,
    RunError,
    UnknownNameError,
    UsageError,
)
from . import nn  # noqa: E402  Lawrence's Bayesian MLPs: occam.nn.BayesianMLP
from . import latent  # noqa: E402  mixtures of Bayesian PCA: occam.latent.mbpca

__all__ = [
    "read_data",
    "select_rows",
    "Model",
    "Result",
    "Posterior",
    "Graph",
    "Comparison",
    "EvidencePlot",
    "compare",
    "load",
    "probabilities",
    "OccamError",
    "ModelError",
    "DataError",
    "DataTypeError",
    "DataShapeError",
    "UsageError",
    "UnknownNameError",
    "FileError",
    "RunError",
    "Interrupted",
    "InternalError",
]


# Settings cross into Rust as 64-bit unsigned integers (seeds, counts): larger ones are refused
# here with the setting's name rather than by the conversion's anonymous OverflowError.
_MAX_INT = 2**64 - 1


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise UsageError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise UsageError(f"{name} must be at least {low}, got {value}")
    if value > _MAX_INT:
        raise UsageError(f"{name} must be at most 2^64 - 1, got {value}")
    return int(value)


def _settings(seed, restarts, max_iter, tol, prune, strict):
    tol = float(tol)
    if not tol >= 0:
        raise UsageError(f"tol must be ≥ 0, got {tol}")
    return dict(
        seed=_check_int("seed", seed, 0),
        restarts=_check_int("restarts", restarts, 1),
        max_iter=_check_int("max_iter", max_iter, 1),
        tol=tol,
        prune=bool(prune),
        strict=bool(strict),
    )


class Graph(str):
    """The model's Bayesian network as SVG text; Jupyter shows it inline."""

    def _repr_svg_(self):
        return str(self)


class Posterior:
    """One variable's posterior: ``params`` maps parameter names (``mean``, ``covariance``,
    ``shape``, ``rate``, ``concentration``, ``probabilities``, ``moments`` ...) to arrays shaped
    by the variable's plates followed by the parameter's own dimensions. ``posterior["mean"]``
    is ``posterior.params["mean"]``. ``distribution`` is the family written in the model;
    ``q_family`` names the family of q where it is not that one (``"ShapeGamma"`` for a Gamma's
    random shape, e.g. a Student-t's ν: no standard family, with ``mean`` and ``sd`` by
    quadrature), and is None otherwise."""

    def __init__(self, d):
        self.name = d["name"]
        self.distribution = d["distribution"]
        self.q_family = d.get("q_family")
        self.role = d["role"]
        self.plates = [tuple(p) for p in d["plates"]]
        self.params = dict(d["params"])

    def __getitem__(self, key):
        try:
            return self.params[key]
        except KeyError:
            raise UnknownNameError(
                f"`{self.name}` ({self.distribution}) has no parameter `{key}` "
                f"(parameters: {', '.join(self.params)})"
            ) from None

    def __contains__(self, key):
        return key in self.params

    def keys(self):
        return self.params.keys()

    def __repr__(self):
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.params.items())
        q = f"; q: {self.q_family}" if self.q_family else ""
        return f"<Posterior {self.name} ~ {self.distribution} ({self.role}{q}): {shapes}>"


class Result:
    """A fitted model: ``bound`` (nats, all constants) and its ``bound_quality``, ``converged``,
    ``iterations``, ``bound_trace``, ``restart_bounds``, ``warnings``, posteriors by name."""

    def __init__(self, fitted):
        self._fitted = fitted

    bound = property(lambda self: self._fitted.bound, doc="Final lower bound on log p(data).")
    converged = property(lambda self: self._fitted.converged)
    iterations = property(lambda self: self._fitted.iterations)
    bound_trace = property(lambda self: self._fitted.bound_trace)
    prune_start = property(lambda self: self._fitted.prune_start)
    restart_bounds = property(lambda self: self._fitted.restart_bounds)
    seed = property(lambda self: self._fitted.seed)
    warnings = property(lambda self: self._fitted.warnings)
    variables = property(lambda self: self._fitted.variables)
    node_bounds = property(lambda self: dict(self._fitted.node_bounds))
    bound_quality = property(
        lambda self: self._fitted.bound_quality,
        doc="What ``bound`` is, as the JSON report's ``bound_quality``: ``'exact'`` (the ELBO), "
            "``'lower_bound'`` (some term is a local bound, e.g. ``sigmoid_jj``) or "
            "``'approximate'`` (an importance-sampled node's estimate). ``compare`` refuses to "
            "rank bounds of different kinds unless ``mixed_bounds=True``.")
    node_qualities = property(
        lambda self: dict(self._fitted.node_qualities),
        doc="Each node's kind of bound term, by node name (the kinds of ``bound_quality``).")
    sds_understated = property(
        lambda self: dict(self._fitted.sds_understated),
        doc="The variables whose posterior sds a local bound understates, by name, each with "
            "why (Böhning's bound in softmax logits: ``softmax_bohning``, or ``softmax`` with "
            "K > 3; the JSON report's ``sds_understated``); empty otherwise.")

    def posterior(self, name):
        """The posterior of variable ``name`` (raises :class:`UnknownNameError` otherwise)."""
        return Posterior(self._fitted.posterior(name))

    def chain(self, name):
        """The per-step posterior of chain ``name`` (a ``MarkovChain`` or ``GaussianMarkovChain``)
        as a dict of NumPy arrays, shaped by its sequence plates, then the time plate:

        * ``lengths``: each sequence's length (a single chain: shape ``(1,)``);
        * MarkovChain: ``marginals`` ``(..., T, K)``, q(z_t = k), NaN past a sequence's end, and
          ``viterbi`` ``(..., T)``, the most probable path (Viterbi on the expected log
          parameters), −1 past the end;
        * GaussianMarkovChain: ``means`` and ``sds`` ``(..., T, D)``, the smoothed means and
          standard deviations, NaN past the end.

        Raises :class:`UsageError` if ``name`` is not a chain."""
        return dict(self._fitted.chain(name))

    @property
    def posteriors(self):
        """Every variable's posterior, by name (computed on access)."""
        return {v: self.posterior(v) for v in self.variables}

    def predict(self, data=None, plates=None, draws=1000, seed=0,
                quantiles=(0.025, 0.5, 0.975), missing=False, ahead=None):
        """The posterior predictive of every observed variable under q, by name, for new rows
        of the data plates: ``data`` holds the new rows' covariates (e.g. ``{"X": X_new}``),
        ``plates`` sizes plates no new data size (``{"N": 20}``); plates neither given nor
        sized keep the fit's sizes. With ``missing=True``, the missing (NaN) entries of the
        fitted data instead. Each value is a dict of NumPy arrays: ``mean`` and ``sd`` of shape
        ``(rows, cols)``, ``quantiles`` ``{p: (rows, cols)}``, ``samples``
        ``(draws, rows, cols)`` (seeded by ``seed``), ``exact`` (mean and sd in closed form
        rather than from the draws) and ``missing`` (with ``missing=True``: which entries were
        missing; the others hold their data with sd 0). The fit is not changed.

        For a chain model (``MarkovChain``, ``GaussianMarkovChain``) give ``ahead=K``: the
        one-step predictive p(y_t | y_<t) at every step of each sequence (of the fit, or the
        held-out sequences in ``data``) and the k-step-ahead predictive for the K steps past its
        end. Each observed variable over the time plate gets ``mean``, ``sd`` and ``quantiles``
        of shape ``(sequences, steps, cols)`` and ``exact``; the chain gets ``probabilities``
        ``(sequences, steps, K)`` (or the state's ``mean`` and ``sd``), ``lengths`` and
        ``horizon`` (1 within the data, k for the k-th step past the end, 0 in the NaN padding
        past a sequence's length + K)."""
        draws = _check_int("draws", draws, 1)
        seed = _check_int("seed", seed, 0)
        if ahead is not None:
            ahead = _check_int("ahead", ahead, 0)
            if plates is not None or missing:
                raise UsageError("ahead= predicts chains: it takes no plates= or missing=")
            return self._fitted.predict_ahead(_as_data(data), ahead, draws, seed,
                                              [float(q) for q in quantiles])
        return self._fitted.predict(_as_data(data), None if plates is None else dict(plates),
                                    draws, seed, [float(q) for q in quantiles], bool(missing))

    def save(self, path):
        """Writes the fit to ``path`` (the ``fit.json`` format of ``occam fit --out``: model
        text, data and the q of every node), atomically; :func:`load` reads it back."""
        path = _os.fspath(path)
        tmp = f"{path}.tmp{_os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self._fitted.to_json())
        _os.replace(tmp, path)

    def __reduce__(self):
        # Pickled through the saved-fit format: the same bits come back.
        return (_from_json, (self._fitted.to_json(),))

    def pca_outputs(self):
        """The reconstruction and projection of every PCA-type product in the model (an observed
        Gaussian whose mean is ``dot(W, X)``, possibly plus other terms), the same numbers and
        figures ``occam fit --out DIR`` writes as ``reconstruction_Y.csv/.svg`` and
        ``projection_X.csv/.svg``. A dict by file stem (``"reconstruction_Y"``,
        ``"projection_X"``) of dicts with ``values`` (a NumPy array: ⟨y⟩ shaped as the data, or
        ⟨x_n⟩ with its coordinates ordered by explained variance), ``columns`` (the CSV header)
        and ``svg`` (the figure as SVG text; None for a one-dimensional projection). Empty for
        other models."""
        return {o["name"]: dict(o) for o in self._fitted.pca_outputs()}

    def write(self, out_dir, include_data=False):
        """Writes what ``occam fit --out DIR`` writes into ``out_dir`` (created if needed; each
        file written atomically): ``posterior.json``, ``bound.csv``/``.svg``, the
        ``posterior_NAME.csv`` tables, Hinton diagrams of matrix means (``hinton_W.svg``) and of
        ARD relevances 1/⟨α⟩ (``hinton_W_relevance.svg``), chain tables and figures, and the PCA
        reconstructions and projections. ``include_data`` adds the observed values' tables."""
        self._fitted.write(_os.fspath(out_dir), include_data=bool(include_data))

    def report(self):
        """The report ``occam fit --json`` prints, as a dict."""
        return _json.loads(self._fitted.report_json())

    def summary(self):
        """The text summary ``occam fit`` prints."""
        return self._fitted.summary()

    def view(self, port=0, open_browser=False, height=720):
        """``occam view``'s page on this fit, served on 127.0.0.1 (``port`` 0: a free one) with a
        random token, from a thread of this process until the returned :class:`View`'s
        ``stop()``: the model graph, the bound trace, each node's posterior and an editor that
        re-checks and re-fits. In Jupyter, the returned object displays inline (an IFrame to the
        page, ``height`` pixels tall); ``open_browser=True`` also opens it in the browser."""
        from ._view import View
        v = View(_occam.view_fitted(self._fitted, _check_int("port", port, 0)), height)
        if open_browser:
            import webbrowser
            webbrowser.open(v.url)
        return v

    def __repr__(self):
        return f"<occam.Result bound={self.bound:.6g} iterations={self.iterations} converged={self.converged}>"


def _model_from_state(path, name, text):
    if path is not None and _os.path.isfile(path):
        try:
            model = Model(path)
            if model._model.pickle_state()[2] == text:
                return model
        except OccamError:
            pass
    return Model.from_string(text, name)


class Model:
    """A model: ``Model("model.occam")`` reads a file (``NAME.csv`` next to it supplies data not
    given to :meth:`fit`); :meth:`from_string` takes source text. Errors in the model raise
    :class:`ModelError` with ``file:line:column``."""

    def __init__(self, path):
        if not isinstance(path, (str, _os.PathLike)):
            raise TypeError(f"Model(path): expected a file path, got {type(path).__name__}; "
                            "use Model.from_string for model text")
        self._model = _occam.Model.from_file(_os.fspath(path))

    @classmethod
    def from_string(cls, source, name="<string>"):
        """A model from source text; ``name`` is the file name messages print."""
        if not isinstance(source, str):
            raise TypeError(f"from_string: expected model text, got {type(source).__name__}")
        self = cls.__new__(cls)
        self._model = _occam.Model.from_source(source, str(name))
        return self

    @property
    def name(self):
        return self._model.name

    def __reduce__(self):
        # The model text travels with the pickle (a worker may not see the file); a file model
        # comes back as the file when that file still holds the same text, so the data files
        # next to it (NAME.csv) are found as before, and otherwise as a text model named by the
        # path.
        return (_model_from_state, self._model.pickle_state())

    def fit(self, data=None, seed=0, restarts=1, max_iter=1000, tol=1e-6, prune=True,
            strict=False, callback=None, order=None, rotate=None, threads=None, settle=False,
            candidate_starts=True):
        """Fits the model by VMP. ``data`` maps names to arrays (NaN or a masked array marks a
        missing value) or to data file paths, read as ``occam fit --data`` reads them
        (``{"x": "faithful.csv:eruptions,waiting@..200"}``, see :func:`read_data`). ``restarts`` runs from seeds ``seed, seed+1, ...`` and keeps the best
        bound. A fit has converged when the bound's change over a sweep, divided by the number
        of observed values, is at most ``tol`` (nats per observed value); ``Result.converged``
        says whether it did. ``callback(iteration, bound, elapsed_seconds)`` is called after every sweep;
        returning ``False`` stops the fit (raising :class:`Interrupted`, whose ``result`` is the
        :class:`Result` of the state it stopped in). ``order`` lists node
        names in update order (default: parents before children). Rotations (parameter
        expansion) turn the two factors of every ``dot(W, X)`` of latent Gaussian vectors after
        each sweep to raise the bound (PCA-type models converge in tens of sweeps instead of
        thousands), and the state space of every linear dynamical system ``dot(C, x)`` with ``x``
        a ``GaussianMarkovChain`` (x, its dynamics and C together). ``rotate=None`` (default)
        rotates wherever the model has such a product; ``rotate=True`` requires it (a model
        with neither raises :class:`UsageError`); ``rotate=False`` never rotates. The GIL is
        released while fitting; Ctrl-C raises ``KeyboardInterrupt``. ``threads`` is the number
        of threads of the fit (default: all cores); the results do not depend on it.
        ``settle=True`` settles the first sweep: the updates before the first node with an
        informative start (a mixture index's k-means start) are repeated until their change of
        the bound is within ``tol``, so a mean-field mixture's parameters agree with each other
        before the index is first updated (fewer sweeps from a k-means start).
        ``candidate_starts=False`` runs a mixture from its k-means start alone (scikit-learn's
        ``n_init=1``); by default each restart also runs two random-label starts, each ended
        once it cannot reach the best bound so far, and keeps the best."""
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable: callback(iteration, bound, elapsed)")
        if order is not None:
            if isinstance(order, str) or not all(isinstance(o, str) for o in order):
                raise TypeError("order must be a list of node names")
            order = list(order)
        s = _settings(seed, restarts, max_iter, tol, prune, strict)
        if threads is not None:
            threads = _check_int("threads", threads, 1)
        try:
            fitted = self._model.fit(_as_data(data), callback=callback, order=order,
                                     rotate=None if rotate is None else bool(rotate),
                                     threads=threads, settle=bool(settle),
                                     candidate_starts=bool(candidate_starts), **s)
        except Interrupted as e:
            if e.result is not None and not isinstance(e.result, Result):
                e.result = Result(e.result)
            raise
        return Result(fitted)

    def sample(self, plates=None, seed=0, data=None):
        """Draws the observed variables from the generative model (ancestral sampling):
        ``{name: array}``. Plates sized from data take their sizes from ``plates``
        (e.g. ``{"N": 500}``)."""
        plates = {k: _check_int(f"plate {k}", v, 1) for k, v in (plates or {}).items()}
        return self._model.sample(plates, _check_int("seed", seed, 0), _as_data(data))

    def graph(self, data=None):
        """The Bayesian network as SVG (shown inline in Jupyter)."""
        return Graph(self._model.graph_svg(_as_data(data)))

    def graph_dot(self, data=None):
        """The Bayesian network as Graphviz DOT text."""
        return self._model.graph_dot(_as_data(data))

    def check(self, data=None):
        """The conjugacy report ``occam check`` prints."""
        return self._model.check(_as_data(data))

    def __repr__(self):
        return f"<occam.Model {self.name}>"


class _Row(tuple):
    __slots__ = ()
    model = property(lambda self: self[0])
    result = property(lambda self: self[1])
    difference = property(lambda self: self[2])
    probability = property(lambda self: self[3])
    #: With ``methods=``: per method name, a dict of ``kind``, ``log_evidence``, ``se``, ``ess``,
    #: ``seconds``, ``note`` and ``probability`` (``None`` unless the method applies to every
    #: model), or ``not_applicable`` (the reason). ``None`` without ``methods=``.
    evidence = property(lambda self: self[4] if len(self) > 4 else None)

    def __repr__(self):
        return (f"<{self.model}: bound={self.result.bound:.6g} difference={self.difference:.6g} "
                f"probability={self.probability:.4g}>")


def _plate_sweep(plate):
    """``"K=1..6"``, ``"K=1,2,3"`` or ``{"K": sizes}`` as ``(name, [sizes])``."""
    if isinstance(plate, dict):
        if len(plate) != 1:
            raise UsageError("plate: sweep one plate, e.g. plate={'K': range(1, 7)}")
        (name, sizes), = plate.items()
        return str(name), [int(k) for k in sizes]
    if isinstance(plate, str) and "=" in plate:
        name, spec = plate.split("=", 1)
        try:
            if ".." in spec:
                a, b = (int(x) for x in spec.split(".."))
                sizes = list(range(a, b + 1))
            else:
                sizes = [int(x) for x in spec.split(",")]
        except ValueError:
            sizes = []
        if sizes and min(sizes) >= 1:
            return name.strip(), sizes
    raise UsageError(f"plate: give 'NAME=FROM..TO', 'NAME=A,B,C' or {{NAME: sizes}}, got {plate!r}")


def _from_json(text, name="<pickle>"):
    return Result(_occam.Fitted.from_json(text, name))


def load(path):
    """A :class:`Result` saved by :meth:`Result.save` or ``occam fit --out DIR`` (give the
    directory or its ``fit.json``). A file of another format version, or a damaged one, raises
    :class:`DataError` naming it."""
    path = _os.fspath(path)
    if _os.path.isdir(path):
        path = _os.path.join(path, "fit.json")
    with open(path, encoding="utf-8") as f:
        return _from_json(f.read(), path)


def compare(models, data=None, priors=None, seed=0, restarts=1, max_iter=1000, tol=1e-6,
            prune=True, strict=False, methods=None, plate=None, samples=20000, widen=2.0,
            max_assignments=4194304, temperatures=1000, chains=64, folds=5, mixed_bounds=False,
            ais_moves="auto", average=None, predict=None):
    """Fits every model (``Model`` objects or paths) to the same data with the same settings and
    compares their bounds; ``priors`` are prior model weights (equal when omitted). Bounds of
    different kinds (exact, lower bound, approximate: see each fit's ``bound_quality``) are
    refused with a ``UsageError`` unless ``mixed_bounds=True``, as ``occam compare
    --mixed-bounds``.

    ``methods`` (e.g. ``["vb", "exact", "is"]``; also ``"vbsym"``, ``"laplace"``, ``"bic"``,
    ``"cs"``, ``"ais"``, and ``"cv"``, ``folds``-fold cross-validation, which is not an evidence)
    adds the evidence estimates of ``occam compare --method`` to each row
    (``row.evidence[method]``); for small data use ``"is"`` (checked against ``"exact"`` where
    that applies), and ``"ais"`` (annealed importance sampling, ``chains`` chains of
    ``temperatures`` moves with the mixture index summed out; ``ais_moves`` ``"auto"``,
    ``"hmc"`` or ``"gibbs"`` as ``--ais-moves``) where ``"is"`` is flagged unreliable.
    ``plate`` sweeps one model over a plate's size (``"K=1..6"`` or ``{"K": range(1, 7)}``),
    one row per size. With ``methods``, :meth:`Comparison.plot` draws every method's ln p(D)
    against the models' free parameters (``occam compare --plot``).

    ``average="is"`` (one of ``methods``, an evidence: not ``"cv"``) with ``predict`` (the new
    rows' data, e.g. ``{"X": X_new}``) sets ``Comparison.average``: the Bayesian model average
    of every model's predictive of those rows, weighted by the posterior model probabilities
    under that method, its draws seeded by ``seed`` (``occam compare --average``; the same
    numbers). Without ``methods``, ``methods=[average]``."""
    ms = [m if isinstance(m, Model) else Model(m) for m in models]
    s = _settings(seed, restarts, max_iter, tol, prune, strict)
    if predict is not None and average is None:
        raise UsageError("predict= gives the new rows of a model average: give average= too "
                         "(e.g. average='is')")
    if average is not None and methods is None:
        methods = [average]
    if methods is not None or plate is not None:
        if isinstance(methods, str):
            methods = methods.split(",")
        sweep = None if plate is None else _plate_sweep(plate)
        rows, svg, averaged, margins = _occam.compare_evidence(
            [m._model for m in ms], _as_data(data),
            None if priors is None else [float(p) for p in priors],
            methods=None if methods is None else [str(m) for m in methods], plate=sweep,
            samples=int(samples), widen=float(widen), max_assignments=int(max_assignments),
            temperatures=int(temperatures), chains=int(chains), ais_moves=str(ais_moves),
            folds=int(folds), mixed_bounds=bool(mixed_bounds),
            average=None if average is None else str(average), predict=_as_data(predict), **s)
        bounds = [f.bound for f, _, _ in rows]
        probs = _occam.probabilities(bounds, None if priors is None else [float(p) for p in priors])
        best = max(bounds)
        return Comparison(
            (_Row((name, Result(f), f.bound - best, p, {e["method"]: e for e in ev}))
             for (f, name, ev), p in zip(rows, probs)),
            svg=svg, average=averaged, margins=margins)
    rows = _occam.compare([m._model for m in ms], _as_data(data),
                          None if priors is None else [float(p) for p in priors],
                          mixed_bounds=bool(mixed_bounds), **s)
    return Comparison(_Row((m.name, Result(f), d, p)) for m, (f, d, p) in zip(ms, rows))


def read_data(path, columns=None, rows=None, return_columns=False):
    """A data file as ``occam fit --data`` reads it (CSV with a header, ``.npy``, ``.npz``): a 2-D
    float64 array, NaN where a cell is missing. ``path`` may carry a selection,
    ``"faithful.csv:eruptions,waiting@..200"``; or give ``columns`` (names, positions counted
    from 0, ``"A..B"`` ranges, or a list of them) and ``rows`` (``"..200"``, ``"200.."``,
    ``"..80%,shuffle=1"``; see the guide's data chapter). Positions count from 0 and ranges
    exclude their end, as in NumPy. With ``return_columns=True``, also the header's names of
    the columns read (``None`` for an array)."""
    spec = _os.fspath(path)
    if columns is not None:
        if isinstance(columns, (str, int)):
            columns = [columns]
        spec += ":" + ",".join(str(c) for c in columns)
    if rows is not None:
        spec += "@" + str(rows)
    values, header, _ = _occam.read_data(spec)
    return (values, header) if return_columns else values


def select_rows(n, rows):
    """The rows (0-based, increasing, a NumPy integer array) that ``@ROWS`` of ``--data`` takes of
    ``n`` rows, for arrays: ``X[occam.select_rows(len(X), "..80%,shuffle=1")]`` is the same
    training part as ``--data x=X.csv@..80%,shuffle=1``, and ``"80%..,shuffle=1"`` the rest."""
    n = _check_int("n", n, 0)
    return _np.asarray(_occam.select_rows(n, str(rows)), dtype=_np.intp)


def probabilities(bounds, priors=None):
    """Posterior model probabilities: a softmax of the bounds plus log prior weights."""
    return _np.array(_occam.probabilities([float(b) for b in bounds],
                                          None if priors is None else [float(p) for p in priors]))
