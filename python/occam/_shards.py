"""The shards of ``occam.distributed``: one shard's compiled model (a Dask actor's class), the
shards held in this process or as actors on a Dask cluster (built, probed, rebuilt after a lost
worker), and calls to some or all of them."""

import os as _os
import time as _time

import numpy as _np

from . import _occam
from ._data import as_data as _as_data
from ._errors import OccamError, RunError, UsageError
from ._exactsum import NotASum, partials, rounded


class ShardLost(OccamError):
    """A shard's worker died (or its actor failed) during a distributed fit."""


def _summed(what, which, add, *args):
    """``add(*args)`` (an exact sum of ``_exactsum``), a column with no sum (a NaN, or +inf with
    −inf) raised as :class:`RunError` naming ``what`` and the shards ``which`` (never taken for a
    lost worker)."""
    try:
        return add(*args)
    except NotASum as e:
        shards = ", ".join(map(str, which))
        raise RunError(f"shard {shards}: {what} have no sum at element {e.element} "
                       f"({e.what})") from None


def _read(data):
    """A shard's data: ``{name: array}``, or ``{name: path}`` read where the shard is built (on
    its worker). A plain ``.npy`` file is memory-mapped by NumPy; any other file (CSV, NPZ, a
    ``file.csv:cols@rows`` selection) goes to the extension as text and is read as ``occam fit
    --data`` reads it, with the same located errors (an :class:`OccamError`, never taken for a
    lost worker)."""
    out = {}
    for name, value in data.items():
        if isinstance(value, (str, _os.PathLike)):
            path = _os.fspath(value)
            value = _np.load(path, mmap_mode="r") if path.endswith(".npy") else path
        out[name] = value
    return _as_data(out)


class _Shard:
    """One shard: the compiled model on its rows (an actor's class on Dask)."""

    def __init__(self, source, data, name, plate):
        self.shard = _occam.Shard(source, _read(data), name, plate)

    def schedule(self):
        return self.shard.schedule()

    def plate(self):
        return self.shard.plate()

    def along_plate(self):
        return self.shard.along_plate()

    def bound_noise(self):
        return self.shard.bound_noise()

    def observed_values(self):
        return self.shard.observed_values()

    def initialize(self, seed):
        self.shard.initialize(seed)

    def update(self, names):
        self.shard.update(list(names))

    def local_messages(self, name):
        return self.shard.local_messages(name)

    def update_global(self, name, summed):
        self.shard.update_global(name, summed)

    def step_global(self, name, summed, rho):
        self.shard.step_global(name, summed, rho)

    def optimise_locals(self, names):
        self.shard.optimise_locals(list(names))

    def split_bound(self):
        return self.shard.split_bound()

    def global_state(self):
        return self.shard.global_state()

    def set_state(self, state):
        self.shard.set_state(state)

    def moments(self, name):
        return self.shard.moments(name)

    def posterior(self, name):
        return self.shard.posterior(name)


class _Group:
    """The shards one worker holds (a Dask actor's class: one per worker). Calls reach several
    of its shards at once, and :meth:`reduce` adds up their messages to a global here, so the
    client receives one message per worker, not one per shard (the tree reduction)."""

    def __init__(self):
        self.shards = {}

    def add(self, i, source, data, name, plate):
        """Compiles shard ``i`` on its data (read here, on the worker)."""
        self.shards[i] = _Shard(source, data, name, plate)

    def held(self):
        """The shards held here (a probe: it fails when the worker is gone)."""
        return sorted(self.shards)

    def each(self, method, which, args):
        """``method`` on shards ``which``, shard ``which[k]`` with arguments ``args[k]``."""
        return [getattr(self.shards[i], method)(*a) for i, a in zip(which, args)]

    def same(self, method, which, args):
        """``method(*args)`` on shards ``which`` (the arguments sent once)."""
        return [getattr(self.shards[i], method)(*args) for i in which]

    def in_turn(self, which, plans):
        """Shard by shard, each shard ``which[k]``'s calls ``plans[k]`` (``[(method, args)]``)
        before the next shard's: a shard's transient memory (e.g. the natural parameters of a
        fresh start, dropped by its first local update) is freed before the next one's."""
        return [[getattr(self.shards[i], m)(*a) for m, a in plan] for i, plan in zip(which, plans)]

    def reduce(self, which, name):
        """The exact sum of the messages of shards ``which`` to global ``name``, as partials
        (``_exactsum.partials``; float64 bytes, ``rows`` of E values each): ``(rows, bytes)``."""
        p = _summed(f"the messages to `{name}`", which, partials,
                    [_np.frombuffer(self.shards[i].local_messages(name), dtype="<f8")
                     for i in which])
        return p.shape[0], p.astype("<f8").tobytes()

    def bound(self, which):
        """Shards ``which``'s local bound terms summed exactly (partials, as :meth:`reduce`) and
        the globals' terms (alike on every replica)."""
        terms = [self.shards[i].split_bound() for i in which]
        p = _summed("the local bound terms", which, partials, [[t[0]] for t in terms])
        return p[:, 0].tolist(), terms[0][1]


class _Here:
    """Shards held in this process (one machine): calls return at once. Each shard counts as a
    group of its own: the reduction adds every shard's message exactly (as on Dask, so the same
    bits), and ``Result.bytes_per_sweep`` counts what would travel were each shard elsewhere."""

    def __init__(self, source, shards, name, plate):
        self.source, self.name, self.plate = source, name, plate
        self.data = list(shards)
        self.shards = [_Shard(source, d, name, plate) for d in shards]
        self.n = len(self.shards)

    def call(self, method, args_per_shard):
        """``method`` on the first ``len(args_per_shard)`` shards, each with its arguments."""
        return [getattr(s, method)(*a) for s, a in zip(self.shards, args_per_shard)]

    def some(self, which, method, *args):
        return [getattr(self.shards[s], method)(*args) for s in which]

    def one(self, s, method, *args):
        return getattr(self.shards[s], method)(*args)

    def fanout(self, which):
        """The number of messages a broadcast to shards ``which`` takes."""
        return len(which)

    def in_turn(self, which, plans):
        return [[getattr(self.shards[s], m)(*a) for m, a in plan] for s, plan in zip(which, plans)]

    def reduce(self, which, name):
        parts = [_np.frombuffer(self.shards[s].local_messages(name), dtype="<f8") for s in which]
        total = _summed(f"the messages to `{name}`", which, rounded, [p[None, :] for p in parts])
        return total, sum(p.nbytes for p in parts)

    def bound(self, which):
        terms = [self.shards[s].split_bound() for s in which]
        local = _summed("the local bound terms", which, rounded, [[[t[0]] for t in terms]])
        return terms[0][1] + local[0]


class _Dask:
    """Shards spread over the workers of a Dask client (shard i on the i-th worker modulo their
    number, in address order), each worker's shards held by one actor (:class:`_Group`)."""

    def __init__(self, client, source, shards, name, plate):
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise UsageError("the Dask client has no workers")
        self.client, self.source, self.data, self.name, self.plate = (
            client, source, list(shards), name, plate)
        self.n = len(self.data)
        self.where = [workers[i % len(workers)] for i in range(self.n)]
        self.futures, self.groups = {}, {}
        for w in sorted(set(self.where)):
            self._open(w)
        pending = [(i, self.groups[w].add(i, source, d, name, plate))
                   for i, (w, d) in enumerate(zip(self.where, self.data))]
        for i, p in pending:
            self._result([i], p)

    def _open(self, w):
        """A new group actor on worker ``w``."""
        import uuid
        future = self.client.submit(_Group, actor=True, workers=[w], allow_other_workers=False,
                                    key=f"occam-shards-{uuid.uuid4()}")
        self.futures[w] = future
        self.groups[w] = self._result([i for i, v in enumerate(self.where) if v == w], future)
        return self.groups[w]

    def _split(self, which):
        """Shards ``which`` by the worker holding them: ``{worker: [positions in which]}``."""
        out = {}
        for k, s in enumerate(which):
            out.setdefault(self.where[s], []).append(k)
        return out

    def _gather(self, which, method, args):
        """``method`` on shards ``which`` through their groups; ``args(ks)`` gives a group's
        arguments from its positions ``ks`` in ``which``. The results in ``which``'s order."""
        split = self._split(which)
        pending = [(ks, getattr(self.groups[w], method)(*args(ks))) for w, ks in split.items()]
        out = [None] * len(which)
        for ks, p in pending:
            for k, v in zip(ks, self._result([which[k] for k in ks], p)):
                out[k] = v
        return out

    def call(self, method, args_per_shard):
        """``method`` on the first ``len(args_per_shard)`` shards, each with its arguments."""
        which = list(range(len(args_per_shard)))
        return self._gather(which, "each", lambda ks: (
            method, [which[k] for k in ks], [args_per_shard[k] for k in ks]))

    def some(self, which, method, *args):
        which = list(which)
        return self._gather(which, "same", lambda ks: (method, [which[k] for k in ks], args))

    def in_turn(self, which, plans):
        which = list(which)
        return self._gather(which, "in_turn", lambda ks: (
            [which[k] for k in ks], [plans[k] for k in ks]))

    def one(self, s, method, *args):
        return self.some([s], method, *args)[0]

    def fanout(self, which):
        return len(self._split(which))

    def reduce(self, which, name):
        which = list(which)
        split = self._split(which)
        pending = [([which[k] for k in ks], self.groups[w].reduce([which[k] for k in ks], name))
                   for w, ks in split.items()]
        stacks, up = [], 0
        for held, p in pending:
            rows, data = self._result(held, p)
            stacks.append(_np.frombuffer(data, dtype="<f8").reshape(rows, -1))
            up += len(data)
        return _summed(f"the messages to `{name}`", which, rounded, stacks), up

    def bound(self, which):
        which = list(which)
        split = self._split(which)
        pending = [([which[k] for k in ks], self.groups[w].bound([which[k] for k in ks]))
                   for w, ks in split.items()]
        parts, first = [], min(which)
        for held, p in pending:
            part, g = self._result(held, p)
            parts.append(_np.asarray(part)[:, None])
            if first in held:  # the globals' terms: alike on every replica, taken from one
                globals_ = g
        return globals_ + _summed("the local bound terms", which, rounded, parts)[0]

    def lost(self):
        """The shards whose worker no longer answers (their worker died); their groups are
        dropped."""
        out = []
        for w in sorted(set(self.where)):
            held = [i for i, v in enumerate(self.where) if v == w]
            if w not in self.groups:  # dropped by an earlier call, its shards not yet rebuilt
                out.extend(held)
                continue
            try:  # a lost actor's attributes raise at once, its calls when awaited
                self._result(held, self.groups[w].held())
            except (ShardLost, RuntimeError):
                out.extend(held)
                self.futures.pop(w).release()
                self.groups.pop(w)
        return sorted(out)

    def rebuild(self, i):
        """Shard ``i`` compiled anew from its data (its files re-read) on a live worker, in the
        group held there (one made if it has none); its q is the fresh compilation's."""
        errors = []
        for _ in range(50):  # the scheduler may list a dead worker for a moment
            workers = sorted(self.client.scheduler_info()["workers"])
            for w in workers[i % max(1, len(workers)):] + workers[:i % max(1, len(workers))]:
                try:
                    self.where[i] = w
                    group = self.groups.get(w) or self._open(w)
                    self._result([i], group.add(i, self.source, self.data[i], self.name,
                                                self.plate))
                    return
                except ShardLost as e:
                    errors.append(str(e))
                    if w in self.groups:
                        self.futures.pop(w).release()
                        self.groups.pop(w)
            _time.sleep(0.1)
        raise ShardLost(f"shard {i}: no worker could rebuild it: {errors[-1]}")

    @staticmethod
    def _result(which, future):
        try:
            return future.result()
        except OccamError:
            raise
        except Exception as e:  # a worker lost, a closed actor
            names = ", ".join(map(str, which))
            raise ShardLost(f"shard {names}: {type(e).__name__}: {e}") from e


def _call_one(runner, s, method, *args):
    """``method(*args)`` on shard ``s``."""
    return runner.one(s, method, *args)


def _call_some(runner, which, method, *args):
    """``method(*args)`` on shards ``which``: the results in ``which``'s order."""
    return runner.some(which, method, *args)
