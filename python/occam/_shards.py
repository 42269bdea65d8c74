"""The shards of ``occam.distributed``: one shard's compiled model (a Dask actor's class), the
shards held in this process or as actors on a Dask cluster (built, probed, rebuilt after a lost
worker), and calls to some or all of them."""

import os as _os
import time as _time

import numpy as _np

from . import _occam
from ._data import as_data as _as_data
from ._errors import OccamError, UsageError


class ShardLost(OccamError):
    """A shard's worker died (or its actor failed) during a distributed fit."""


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


class _Here:
    """Shards held in this process (one machine): calls return at once."""

    def __init__(self, source, shards, name, plate):
        self.source, self.name, self.plate = source, name, plate
        self.data = list(shards)
        self.shards = [_Shard(source, d, name, plate) for d in shards]

    def call(self, method, args_per_shard):
        return [getattr(s, method)(*a) for s, a in zip(self.shards, args_per_shard)]


class _Dask:
    """Shards as actors spread over the workers of a Dask client (round robin)."""

    def __init__(self, client, source, shards, name, plate):
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise UsageError("the Dask client has no workers")
        self.client, self.source, self.data, self.name, self.plate = (
            client, source, list(shards), name, plate)
        self.futures = [
            client.submit(_Shard, source, d, name, plate, actor=True,
                          workers=[workers[i % len(workers)]], allow_other_workers=False)
            for i, d in enumerate(shards)
        ]
        self.shards = [self._result(i, f) for i, f in enumerate(self.futures)]

    def lost(self):
        """The shards whose actor no longer answers (their worker died)."""
        out = []
        for i, s in enumerate(self.shards):
            try:  # a lost actor's attributes raise at once, its calls when awaited
                self._result(i, s.plate())
            except (ShardLost, RuntimeError):
                out.append(i)
        return out

    def rebuild(self, i):
        """Shard ``i`` compiled anew from its data (its files re-read) as an actor on a live
        worker; its q is the fresh compilation's."""
        import uuid
        self.futures[i].release()
        errors = []
        for _ in range(50):  # the scheduler may list a dead worker for a moment
            workers = sorted(self.client.scheduler_info()["workers"])
            for w in workers[i % max(1, len(workers)):] + workers[:i % max(1, len(workers))]:
                future = self.client.submit(
                    _Shard, self.source, self.data[i], self.name, self.plate, actor=True,
                    workers=[w], allow_other_workers=False, key=f"occam-shard-{i}-{uuid.uuid4()}")
                try:
                    self.shards[i] = self._result(i, future)
                    self.futures[i] = future
                    return
                except ShardLost as e:
                    errors.append(str(e))
            _time.sleep(0.1)
        raise ShardLost(f"shard {i}: no worker could rebuild it: {errors[-1]}")

    @staticmethod
    def _result(i, future):
        try:
            return future.result()
        except OccamError:
            raise
        except Exception as e:  # a worker lost, a closed actor
            raise ShardLost(f"shard {i}: {type(e).__name__}: {e}") from e

    def call(self, method, args_per_shard):
        pending = [getattr(s, method)(*a) for s, a in zip(self.shards, args_per_shard)]
        return [self._result(i, p) for i, p in enumerate(pending)]


def _call_one(runner, s, method, *args):
    out = getattr(runner.shards[s], method)(*args)
    return out if isinstance(runner, _Here) else _Dask._result(s, out)


def _call_some(runner, which, method, *args):
    pending = [getattr(runner.shards[s], method)(*args) for s in which]
    if isinstance(runner, _Here):
        return pending
    return [_Dask._result(s, p) for s, p in zip(which, pending)]
