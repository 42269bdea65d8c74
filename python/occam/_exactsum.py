"""Exact sums of the shards' messages, for ``occam.distributed``'s tree reduction.

A worker adds up the messages of the shards it holds and the client adds the workers' sums. Had
each step rounded, the result would depend on which shards share a worker — on the number of
workers, and on where a lost shard was rebuilt. Here nothing is rounded until the end: a worker
sends, for every element, the exact sum of its shards' values as non-overlapping partials
(Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric predicates",
1997, the "grow-expansion" with zero elimination of Python's ``msum`` recipe), and the client
rounds the exact total of all the partials once (``math.fsum``, correctly rounded). The sum is
then the correctly rounded sum of every shard's message, whatever the grouping or order: the
same bits on one worker or many.
"""

import math as _math

import numpy as _np


def _grow(partials, x):
    """Adds ``x`` to the non-overlapping ``partials`` in place, exactly (Knuth's two-sum after
    ordering by magnitude; zero partials dropped)."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


def partials(vectors):
    """The exact element-wise sum of ``vectors`` (float64 arrays of one length E, at least one)
    as an ``(m, E)`` array: column j holds partials whose exact sum is Σ_v v[j] (rows past an
    element's partials are 0). A column with a non-finite value (or whose sum overflows) holds
    its plain sum instead, ±inf or NaN whatever the order."""
    stack = _np.asarray([_np.asarray(v, dtype=_np.float64) for v in vectors])
    if stack.ndim != 2 or stack.shape[0] == 0:
        raise ValueError("partials: need one or more vectors of one length")
    cols = []
    for col in stack.T.tolist():
        p = []
        for x in col:
            _grow(p, x)
        cols.append(p)
    out = _np.zeros((max(len(p) for p in cols), len(cols)))
    for j, p in enumerate(cols):
        out[: len(p), j] = p
    bad = ~_np.all(_np.isfinite(out), axis=0)
    if bad.any():
        out[:, bad] = 0.0
        with _np.errstate(over="ignore", invalid="ignore"):
            out[0, bad] = _np.sum(stack[:, bad], axis=0)
    return out


def rounded(stacks):
    """The correctly rounded element-wise sum of the partials in ``stacks`` (``(m_g, E)``
    arrays from :func:`partials`): one float64 vector of length E."""
    every = _np.concatenate([_np.atleast_2d(s) for s in stacks], axis=0)
    finite = _np.all(_np.isfinite(every), axis=0)
    with _np.errstate(over="ignore", invalid="ignore"):
        out = _np.sum(every, axis=0)  # the non-finite columns' (±inf, NaN)
    for j, col in zip(_np.flatnonzero(finite).tolist(), every[:, finite].T.tolist()):
        try:
            out[j] = _math.fsum(col)
        except OverflowError:  # finite partials whose exact sum overflows
            out[j] = sum(col)
    return out
