"""Minibatches of random rows for ``occam.distributed``'s stochastic VB (``batch_rows``): the
engine's order over all N rows (``EpochOrder``), each minibatch's rows gathered from the shards'
arrays and the model compiled on them in this process for its step."""

import os as _os

import numpy as _np

from . import _occam
from ._errors import UsageError
from ._shards import _call_one, _read


class _RandomRows:
    """Minibatches of random rows for stochastic VB (``batch_rows``): the engine's order over all
    N rows cut by the engine (``EpochOrder.next_minibatches``), each minibatch's rows gathered
    from the shards' arrays (shard 0's rows first; the arrays along the data plate, as the
    compiled model names them: ``Shard.along_plate``) and the model compiled on them in this
    process —
    the minibatch is B rows, small beside a shard — for its step, as the engine's
    ``Svi::step``: its locals given the globals, then each global from its messages scaled by
    N/|B|."""

    def __init__(self, runner, batch_rows):
        data = runner.data
        self.runner, self.batch_rows = runner, batch_rows
        self.sizes = [size for _, size in runner.call("plate", [()] * runner.n)]
        self.total = sum(self.sizes)
        self.along = set(_call_one(runner, 0, "along_plate"))
        self.arrays = []
        for s, d in enumerate(data):
            arrays = {}
            for name, value in d.items():
                if isinstance(value, (str, _os.PathLike)):
                    path = _os.fspath(value)
                    if not path.endswith(".npy"):
                        raise UsageError(
                            f"minibatches of random rows gather rows from arrays or .npy files; "
                            f"shard {s}'s {name!r} is {path!r}: give arrays, or batch_rows=0")
                    value = _np.load(path, mmap_mode="r")
                arrays[name] = value if hasattr(value, "shape") else _np.asarray(value)
            self.arrays.append(arrays)
        self.starts = _np.cumsum([0] + self.sizes)
        self.lines = {name: self._lines_per_row(name) for name in self.along
                      if name in self.arrays[0]}

    def _lines_per_row(self, name):
        """The lines (first-axis entries) of array ``name`` per row of the data plate: 1, or a
        chain's steps per sequence when each row is a sequence of several lines — the same in
        every shard (a minibatch cuts every row into that many lines), as the engine's
        ``occam::minibatch::same_lines_per_row`` requires. A located error otherwise."""
        first = None
        for s, (arrays, size) in enumerate(zip(self.arrays, self.sizes)):
            a = arrays.get(name)
            if a is None:
                raise UsageError(f"minibatches of random rows: shard {s} has no {name!r}, which "
                                 "the model has along the data plate")
            if size == 0:
                continue
            lines = a.shape[0] if a.ndim else 1
            if lines % size:
                raise UsageError(
                    f"minibatches of random rows: shard {s}'s {name!r} has {lines} lines for "
                    f"its {size} rows of the data plate, not a whole number per row")
            per = lines // size
            if first is None:
                first = (s, per)
            elif first[1] != per:
                raise UsageError(
                    f"minibatches of random rows: {name!r} has {first[1]} lines per row in shard "
                    f"{first[0]} and {per} in shard {s}; random-row minibatches need the same "
                    "lines per row (chain length) in every shard")
        return 1 if first is None else first[1]

    def minibatches(self, order):
        """The next epoch's minibatches from ``order`` (an ``EpochOrder`` over the N rows)."""
        return order.next_minibatches(self.batch_rows)

    def data(self, rows):
        """The minibatch's data: every array along the data plate with its shard's rows (row r
        of a shard is its lines ``r·k .. (r+1)·k - 1`` along the first axis, for ``k`` lines per
        row: 1, or a chain's steps per sequence), gathered in order; any other array from shard
        0, whole."""
        rows = _np.asarray(rows, dtype=_np.int64)
        shard = _np.searchsorted(self.starts, rows, side="right") - 1
        out = {}
        for name, first in self.arrays[0].items():
            if name not in self.lines:
                out[name] = first
                continue
            k = self.lines[name]
            parts = []
            for s in range(len(self.sizes)):
                here = rows[shard == s] - self.starts[s]
                if here.size:
                    lines = (here[:, None] * k + _np.arange(k)[None, :]).ravel()
                    parts.append(_np.asarray(self.arrays[s][name])[lines])
            out[name] = _np.ascontiguousarray(_np.concatenate(parts))
        return out

    def step(self, rows, state, locals_, globals_, rho):
        r = self.runner
        batch = _occam.Shard(r.source, _read(self.data(rows)), r.name, r.plate)
        batch.set_state(state)
        batch.optimise_locals(list(locals_))
        scale = self.total / len(rows)
        moved = 0
        for g in globals_:
            m = _np.frombuffer(batch.local_messages(g), dtype="<f8")
            batch.step_global(g, (m * scale).astype("<f8").tobytes(), rho)
            moved += 2 * m.nbytes
        new = batch.global_state()
        return new, moved + 2 * len(new)
