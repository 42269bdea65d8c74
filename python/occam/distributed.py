"""Data-parallel fits: a model whose data are split into shards along their data plate (the plate
every observed variable has first, or the one named), each shard compiled where it lives — in this
process, or on a Dask worker — and swept exactly as one process would sweep all the data.

A node with the data plate is *local* (each shard holds its rows); every other node is *global*
(replicated on every shard). A sweep follows the model's schedule step by step: local updates run
on every shard at once; a global's update is one reduction — each worker adds the messages of its
shards' local children to that global (``n·len`` float64 values for a global of ``n`` elements
with moments of length ``len``), the client adds the workers' sums and sends the total back once
per worker, and every shard applies the same update (Winn (2.19)) to its replica. The bound is the
sum of every shard's local terms plus the globals' terms. Data and local posteriors never leave
the shards; what travels per sweep is about ``2 · W · Σ_g n_g·len_g`` float64 values for ``W``
workers (see ``Result.bytes_per_sweep``), plus a few floats per worker for the bound.

The sums are exact until the client rounds them once (``_exactsum``: a worker sends its shards'
exact sum as non-overlapping partials, the client rounds the total with ``math.fsum``): the result
is the correctly rounded sum of every shard's message, so a fit gives the same bits on one worker
or several, and after a lost shard is rebuilt on another worker.

>>> import occam.distributed as od                                   # doctest: +SKIP
>>> from dask.distributed import Client, LocalCluster
>>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True))
>>> r = od.fit(source, [{"x": x[:500]}, {"x": x[500:]}], client=client)
>>> r.bound, r.posterior("mu")["mean"]

Each worker's shards are held by one Dask *actor* (shard i on the i-th worker modulo their
number): the shards' compiled models (their data, their local posteriors, the engine's cached
sums) are mutable objects that must stay on one worker and change in place between sweeps. Dask
futures are immutable values the scheduler may copy, move or recompute, and pickling a shard to
move it would move its data; an actor pins the object to a worker and runs its methods there, so
only the arguments and results of those calls (the bytes above) travel, one call per worker and
step whatever the number of shards. When a worker dies the fit stops with :class:`ShardLost`
naming its shards, never with a wrong answer; with ``retries=k`` it rebuilds the lost shards
instead (see :func:`fit`).
"""

import glob as _glob
import sys as _sys
import time as _time
import warnings as _warnings

import numpy as _np

from . import _occam
from ._cluster import cluster_config, local_cluster
from ._errors import UsageError
from ._minibatch import _RandomRows
from ._shards import ShardLost, _Dask, _Here, _call_one, _call_some, _read

__all__ = ["fit", "single_process_start", "Result", "ShardLost", "read_shard_files",
           "cluster_config", "local_cluster"]


def single_process_start(source, data, sizes, seed=0, name="model.occam", plate=None):
    """The start of a single-process fit of ``data`` (seed ``seed``) cut into shards of ``sizes``
    consecutive rows: one state (bytes) per shard, for :func:`fit`'s ``start`` — so a sharded fit
    and ``occam._occam.Shard`` on all the data sweep from the same state."""
    full = _occam.Shard(source, _read(data), name, plate)
    full.initialize(seed)
    out, at = [], 0
    for n in sizes:
        out.append(full.rows_state(at, at + n))
        at += n
    if at != full.plate()[1]:
        raise UsageError(f"shard sizes add up to {at}, the data plate has {full.plate()[1]} rows")
    return out


def read_shard_files(pattern, name):
    """Shards from files matching ``pattern`` (a glob; sorted), each the data ``name`` of one
    shard: ``[{name: path}, ...]`` (read on the worker that holds the shard)."""
    paths = sorted(_glob.glob(pattern))
    if not paths:
        raise UsageError(f"no shard files match {pattern!r}")
    return [{name: p} for p in paths]


class Result:
    """A distributed fit: the bound, its trace, the globals' posteriors and each shard's locals."""

    def __init__(self, runner, trace, converged, bytes_per_sweep, method="batch", epochs=(),
                 steps=0, warnings=()):
        self._runner = runner
        self.bound_trace = _np.asarray(trace)
        self.bound = trace[-1] if trace else float("nan")
        self.iterations = len(trace)
        self.converged = converged
        #: Bytes of messages (up and down) per batch sweep.
        self.bytes_per_sweep = bytes_per_sweep
        #: ``"batch"``, ``"memoized"`` or ``"svi"``.
        self.method = method
        #: Stochastic VB: the epoch of each entry of ``bound_trace``.
        self.epochs = list(epochs)
        #: Stochastic VB: the minibatch steps taken.
        self.steps = steps
        #: What a user should know: decreases of the bound (without ``strict``).
        self.warnings = list(warnings)
        #: Recoveries from lost workers: ``[(sweep, [shards rebuilt])]`` (see :func:`fit`).
        self.recovered = []
        #: Whether the callback stopped this run (returned False).
        self.interrupted = False
        #: The final bound of every restart, the kept one (0-based) and its seed.
        self.restart_bounds = [self.bound]
        self.best_restart = 0
        self.seed = None

    def posterior(self, name):
        """The posterior of a global variable (from shard 0's replica), as ``Fitted.posterior``."""
        return self._runner.call("posterior", [(name,)])[0]

    def local_posteriors(self, name):
        """The posterior of local variable ``name`` on every shard (a list, shard order)."""
        return self._runner.call("posterior", [(name,)] * self._runner.n)

    def moments(self, name, shard=0):
        """Posterior moments of node ``name`` on one shard (flat)."""
        out = self._runner.call("moments", [(name,)] * self._runner.n)
        return out[shard]


def _steps(schedule):
    """The schedule as steps: ``("local", [names])`` run on every shard, ``("global", name)`` one
    reduction."""
    steps = []
    for node, local in schedule:
        if local and steps and steps[-1][0] == "local":
            steps[-1][1].append(node)
        else:
            steps.append(("local", [node]) if local else ("global", node))
    return steps


def _reduce(runner, which, name):
    """The sum of the messages of shards ``which`` to global ``name`` (float64 bytes), and the
    bytes that travelled up: each worker adds its shards' messages exactly and sends the sum as
    partials, the client rounds the total of the workers' partials once (``_exactsum``), so the
    sum is the correctly rounded sum of every shard's message, the same bits on any number of
    workers."""
    total, up = runner.reduce(which, name)
    return total.astype("<f8").tobytes(), up


def fit(source, shards, client=None, name="model.occam", plate=None, seed=0, max_iter=1000,
        tol=1e-6, start=None, callback=None, method="batch", kappa=0.7, tau=1.0, bound_every=1,
        restarts=1, strict=False, progress=None, retries=0, batch_rows=0):
    """Fits ``source`` (model text) to ``shards`` — a list of ``{name: array or .npy/.csv path}``,
    consecutive blocks of rows along the data plate — on the workers of Dask ``client`` (or in
    this process when ``client`` is None), by ``method``:

    - ``"batch"``: VMP sweeps over the shards, the single-process schedule step by step;
    - ``"memoized"``: memoized VB (Hughes & Sudderth 2013) — one shard's locals at a time, then
      every global from the sum over all shards, the others' messages from their cached state;
      the bound never decreases and reaches the batch optimum (``max_iter`` passes);
    - ``"svi"``: stochastic VB (Hoffman et al. 2013) — each shard a minibatch, visited in a
      random order per epoch (the engine's ``EpochOrder(seed)``, as ``occam fit --shards ... --vb
      svi --seed`` draws it, so one seed gives one run on both): its locals optimised given
      the globals, then each global's update from its messages scaled by the number of shards S
      (the inverse of the probability of drawing the shard; N/|B| for even shards: N/|B| of an
      uneven shard would bias the step) blended with step size ρ_t = (t + τ)^−κ (``kappa`` in
      (0.5, 1], ``tau`` ≥ 0); only that shard works and the globals travel to the next. The
      bound reported, every ``bound_every`` epochs and after the last, is the full bound at the
      current globals (every shard's locals optimised given them): a bound at a q, not an
      estimate. ``max_iter`` counts epochs. With ``batch_rows=B`` the minibatches are B rows
      drawn at random from all the shards instead (each epoch a permutation of the N rows from
      ``EpochOrder(seed, N)``, cut into minibatches of B, each sorted: every row once per epoch,
      the messages scaled by N/|B|), as ``occam fit --shards ... --vb svi --batch-rows B``
      draws them; the minibatch's rows are gathered here from the shards' arrays (or ``.npy``
      files) and the model compiled on them, so the same seed gives the same run on any
      number of workers.

    ``start``: None (each shard starts from ``seed + s``; shard 0's globals are updated from its
    own rows and copied to every shard, whose locals are then updated from them), or one state
    per shard (bytes, e.g. :func:`single_process_start`). The schedule is the model's default
    one; stops when the bound's change per observed value is at most ``tol`` (None: never) or
    after ``max_iter`` sweeps.

    As a normal fit (and ``occam fit --shards``): ``restarts`` runs restart r from seed
    ``seed + r`` and keeps the highest final bound (``Result.restart_bounds``,
    ``best_restart``, ``seed``); the kept restart is run once more from its seed unless it was
    the last (the same bits: no shard's local state is copied or sent). A decrease of the bound
    (batch, memoized) raises :class:`occam.RunError` when ``strict``, else it is recorded in
    ``Result.warnings`` and warned (stochastic VB does not promise an increase and refuses
    ``strict``). ``callback(sweep, bound)`` is called after every sweep, pass or bound
    evaluation; returning False stops the whole fit (no further sweep or restart) by raising
    :class:`occam.Interrupted`, whose ``result`` is the run it stopped in, as a normal fit does;
    ``progress=N`` writes a line to stderr every N of them,
    as ``occam fit --progress N`` does.

    A lost worker (on Dask): by default the fit stops with :class:`ShardLost`
    naming the shard. With ``retries=k`` it recovers up to k times: every lost shard is built
    anew on a live worker from its data (its files re-read), takes the current globals from a
    live replica, and its locals are re-converged given them (local passes until its local bound
    stops changing); the interrupted sweep is then run again. The recovery is reported in
    ``Result.warnings`` (and warned) and ``Result.recovered`` (``[(sweep, [shards])]``). Why the
    result can differ from an uninterrupted fit: the rebuilt shard's locals are the optimum
    given the current globals, not the lost ones. They are the same when the model has one local
    variable updated after the globals (a mixture's index): the sweep's updates then read only
    what was rebuilt. With several local variables (their joint optimum given the globals need
    not be unique) or a loss after some of the sweep's globals were updated, the re-converged
    locals are another point, and the fit goes on from there; the bound is monotone again from
    the sweep after the recovery (the sweep of the recovery is not compared with the one before
    it). Stochastic VB recovers the same way, and the interrupted step (or bound evaluation) is
    run again from the same globals with the same step number (``Result.recovered`` lists
    ``(epoch, [shards])``): a step reads only the globals and its shard's data, and the minibatch
    order is the seed's, so with one local variable the run is the uninterrupted one."""
    if method not in ("batch", "memoized", "svi"):
        raise UsageError(f"unknown method {method!r}: batch, memoized or svi")
    if method == "svi":
        if not 0.5 < kappa <= 1.0:
            raise UsageError(f"kappa = {kappa}: the step sizes (t + tau)^-kappa need kappa in "
                             "(0.5, 1] (Robbins-Monro)")
        if not (tau >= 0 and _np.isfinite(tau)) or bound_every < 1:
            raise UsageError(f"tau = {tau}, bound_every = {bound_every}: need tau >= 0 and "
                             "bound_every >= 1")
        if strict:
            raise UsageError("strict mode fails on a decrease of the bound, which stochastic VB "
                             "does not promise to avoid: use batch or memoized")
    if batch_rows and method != "svi" or batch_rows < 0:
        raise UsageError(f"batch_rows = {batch_rows}: minibatches of random rows are stochastic "
                         "VB's (method=\"svi\"), 1 or more rows (0: each shard a minibatch)")
    if restarts < 1:
        raise UsageError(f"restarts = {restarts}: give 1 or more")
    if start is not None and restarts > 1:
        raise UsageError("a given start is one start: restarts need starts from their seeds")
    if retries < 0:
        raise UsageError(f"retries = {retries}: give 0 or more")
    if progress is not None and progress < 1:
        raise UsageError(f"progress = {progress}: give N >= 1 sweeps")
    if not shards:
        raise UsageError("no shards")
    runner = (_Here(source, shards, name, plate) if client is None
              else _Dask(client, source, shards, name, plate))
    steps = _steps(runner.call("schedule", [()])[0])
    clock = _time.monotonic()

    def one(r, watch):
        see = None
        if watch:
            def see(sweep, bound, change):
                if progress is not None and (sweep == 1 or sweep % progress == 0):
                    _progress_line(r, restarts, sweep, max_iter, bound, change, clock)
                return callback is None or callback(sweep, bound) is not False
        return _one(runner, steps, method, seed + r, start, max_iter, tol, strict, see,
                    kappa, tau, bound_every, retries, batch_rows)

    runs = []
    for r in range(restarts):
        runs.append(one(r, True))
        if runs[-1].interrupted:
            from ._errors import Interrupted
            e = Interrupted(f"the callback stopped the fit at restart {r + 1} of {restarts}, "
                            f"after {len(runs[-1].bound_trace)} bound evaluations")
            e.result = runs[-1]
            raise e
    finals = [run.bound for run in runs]
    best = max(range(restarts), key=lambda r: (not _np.isnan(finals[r]), finals[r], -r))
    run = runs[-1] if best == restarts - 1 else one(best, False)
    for w in run.warnings:
        _warnings.warn(w, RuntimeWarning, stacklevel=2)
    run.restart_bounds, run.best_restart, run.seed = finals, best, seed + best
    return run


def _progress_line(r, restarts, sweep, max_iter, bound, change, clock):
    """The line of ``occam fit --progress N``."""
    line = "fit"
    if restarts > 1:
        line += f" restart {r + 1}/{restarts}"
    line += f": iteration {sweep}/{max_iter} bound {bound!r}"
    if change is not None:
        line += f" change {change:.3e}"
    line += f" ({_time.monotonic() - clock:.3f} s)"
    print(line, file=_sys.stderr, flush=True)


def _start(runner, steps, seed, start):
    """The engine's sharded start (occam_core::engine::Sharded::start) from ``seed``, or the
    given per-shard states."""
    n = runner.n
    every = list(range(n))
    if start is not None:
        if len(start) != n:
            raise UsageError(f"{len(start)} start states for {n} shards")
        runner.call("set_state", [(b,) for b in start])
        return
    _call_one(runner, 0, "initialize", seed)
    for kind, what in steps:
        if kind == "global":
            m = _call_one(runner, 0, "local_messages", what)
            _call_one(runner, 0, "update_global", what, m)
    state = _call_one(runner, 0, "global_state")
    # Every other shard from its seed, then shard 0's globals, then its locals given them —
    # shard by shard on each worker, so one shard's start (the natural parameters of its fresh
    # local q, dropped by the local update) is freed before the next one's is made.
    local = [("update", (what,)) for kind, what in steps if kind == "local"]
    rest = every[1:]
    runner.in_turn(rest, [[("initialize", (seed + s,)), ("set_state", (state,))] + local
                          for s in rest])


def _note_loss(runner, steps, seed, e, retries, recovered, warned, at, when, then):
    """A lost shard (``ShardLost`` ``e``) during ``when``: re-raised once ``retries`` recoveries
    are used up; else rebuilt from its data (``_recover``), recorded as ``(at, shards)`` in
    ``recovered`` and told in ``warned`` ("…, re-read, ``then``")."""
    if len(recovered) >= retries:
        raise e
    lost = _recover(runner, steps, seed, e)
    recovered.append((at, lost))
    warned.append(f"shard {', '.join(map(str, lost))} lost during {when} ({e}): re-read, {then}")


def _one(runner, steps, method, seed, start, max_iter, tol, strict, see, kappa, tau,
         bound_every, retries=0, batch_rows=0):
    """One restart: its start from ``seed`` (or ``start``), then its sweeps (passes, epochs);
    ``see(sweep, bound, change)`` returns False to stop."""
    _start(runner, steps, seed, start)
    n = runner.n
    every = list(range(n))
    observed = max(1, sum(_call_some(runner, every, "observed_values")))
    if method == "svi":
        return _svi(runner, steps, seed, max_iter, tol, observed, see, kappa, tau, bound_every,
                    retries, batch_rows)
    trace, converged, moved, warned, recovered = [], False, 0, [], []
    sweep, after_recovery, stopped = 0, False, False
    while sweep < max_iter:
        sweep += 1
        try:
            bound, moved = _sweep(runner, steps, method)
        except ShardLost as e:
            _note_loss(runner, steps, seed, e, retries, recovered, warned, sweep, f"sweep {sweep}",
                       f"its locals re-converged given the current globals, and sweep {sweep} "
                       "run again")
            sweep -= 1
            after_recovery = True
            continue
        prev = trace[-1] if trace else None
        trace.append(bound)
        if see is not None and see(sweep, bound, None if prev is None else bound - prev) is False:
            stopped = True
            break
        if prev is None:
            continue
        # The sweep that follows a recovery starts from the rebuilt shard's new locals, whose
        # bound terms are not the lost ones': the bound is compared again from the next sweep.
        if not after_recovery:
            # The engine's decrease test, with the sharded allowance from every shard's
            # round-off and sampling variance (asked only past 1e-9 of |L|).
            text = _occam.check_decrease(
                prev, bound, lambda: [tuple(p) for p in _call_some(runner, every, "bound_noise")],
                sweep, strict)
            if text is not None:
                warned.append(text)
        after_recovery = False
        if tol is not None and abs(bound - prev) / observed <= tol:
            converged = True
            break
    r = Result(runner, trace, converged, moved, method, warnings=warned)
    r.recovered, r.interrupted = recovered, stopped
    return r


def _sweep(runner, steps, method):
    """One batch sweep (every step on every shard) or memoized pass (shard s's local steps,
    then every global from all shards, the others' messages from their cached locals): the
    bound after it and the bytes moved."""
    n = runner.n
    every = list(range(n))
    moved = 0
    visits = [every] if method == "batch" else [[s] for s in every]
    for which in visits:
        for kind, what in steps:
            if kind == "local":
                _call_some(runner, which, "update", what)
                continue
            summed, up = _reduce(runner, every, what)
            _call_some(runner, every, "update_global", what, summed)
            moved += up + runner.fanout(every) * len(summed)
    return _bound(runner, every), moved


def _recover(runner, steps, seed, err):
    """Rebuilds every lost shard (its data re-read where it is built) on a live worker, gives it
    the current globals (from a live replica: every replica applied the same updates) and
    re-converges its locals given them (``optimise_locals``: passes until its local bound stops
    changing); returns the rebuilt shards. ``err`` is raised again when nothing can be rebuilt."""
    if not isinstance(runner, _Dask):
        raise err
    lost = runner.lost()
    live = [i for i in range(runner.n) if i not in lost]
    if not lost or not live:
        raise err
    state = _call_one(runner, live[0], "global_state")
    locals_ = [x for kind, what in steps if kind == "local" for x in what]
    for i in lost:
        runner.rebuild(i)
        _call_one(runner, i, "initialize", seed + i)
        _call_one(runner, i, "set_state", state)
        _call_one(runner, i, "optimise_locals", locals_)
    return lost


def _bound(runner, which):
    """Every shard's local terms (summed exactly, as the messages are) plus the globals' terms
    (alike on every replica)."""
    return runner.bound(which)


def _svi(runner, steps, seed, max_iter, tol, observed, see, kappa, tau, bound_every,
         retries=0, batch_rows=0):
    """Stochastic VB over the shards (see :func:`fit`).

    Recovery (``retries``): a step reads only the client's globals (``state``) and the shard's
    data, and the minibatch order is the seed's, so a shard lost during a step (or a bound
    evaluation) is rebuilt from its data on a live worker (``_recover``) and the step is run
    again from the same globals, with the same step number: the run goes on as if undisturbed.
    With one local variable its update given the globals is the optimum whatever its start, so
    the answer is the uninterrupted one; with several, the rebuilt shard's locals start from its
    seed, not from their lost state, and a step may land elsewhere."""
    n = runner.n
    every = list(range(n))
    locals_ = [x for kind, what in steps if kind == "local" for x in what]
    globals_ = [what for kind, what in steps if kind == "global"]
    state = _call_one(runner, 0, "global_state")
    rows = _RandomRows(runner, batch_rows) if batch_rows else None
    order = _occam.EpochOrder(seed, rows.total if rows else n)
    trace, epochs, converged, t, stopped = [], [], False, 0, False
    recovered, warned = [], []

    def again(epoch, what, run):
        """``run()``, and after a lost shard (``retries`` times in all) the shard rebuilt and
        ``run()`` once more."""
        while True:
            try:
                return run()
            except ShardLost as e:
                _note_loss(runner, steps, seed, e, retries, recovered, warned, epoch,
                           f"epoch {epoch}", f"given the current globals, and {what} run again")

    def step(s, t):
        _call_one(runner, s, "set_state", state)
        _call_one(runner, s, "optimise_locals", locals_)
        rho = min(1.0, (t + tau) ** -kappa)
        scale = float(n)
        moved = 0
        for g in globals_:
            m = _np.frombuffer(_call_one(runner, s, "local_messages", g), dtype="<f8")
            _call_one(runner, s, "step_global", g, (m * scale).astype("<f8").tobytes(), rho)
            moved += 2 * m.nbytes
        new = _call_one(runner, s, "global_state")
        return new, moved + 2 * len(new)

    def bound_at(state):
        _call_some(runner, every, "set_state", state)
        _call_some(runner, every, "optimise_locals", locals_)
        return _bound(runner, every)

    for epoch in range(1, max_iter + 1):
        moved = 0
        if rows is not None:
            for batch in rows.minibatches(order):
                t += 1
                state, m = rows.step(batch, state, locals_, globals_,
                                     min(1.0, (t + tau) ** -kappa))
                moved += m
        for s in ([] if rows is not None else order.next_epoch()):
            state, m = again(epoch, f"the step on shard {s}", lambda: step(s, t + 1))
            t += 1
            moved += m
        if epoch % bound_every and epoch != max_iter:
            continue
        bound = again(epoch, "the bound's evaluation", lambda: bound_at(state))
        prev = trace[-1] if trace else None
        trace.append(bound)
        epochs.append(epoch)
        if see is not None and see(epoch, bound, None if prev is None else bound - prev) is False:
            stopped = True
            break
        if prev is not None and tol is not None and abs(bound - prev) / observed <= tol:
            converged = True
            break
    # Per epoch (bytes_per_sweep): each step's globals to its shard and back, its messages up
    # and scaled back down; the bound's evaluations move the globals to every shard besides.
    r = Result(runner, trace, converged, moved, "svi", epochs, t, warnings=warned)
    r.recovered, r.interrupted = recovered, stopped
    return r
