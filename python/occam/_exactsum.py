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

Edge cases, each the same whatever the grouping or order:

- an exact sum beyond the float64 range rounds to ±inf (its sign), and a finite exact sum is
  returned even when a partial sum on the way overflows (such a column travels as its plain
  values, which add up to the same exact sum, and the client adds them exactly as fractions);
- an infinite value makes its column that infinity;
- the sum is −0.0 only when every value is −0.0 (as IEEE addition gives; rows past a column's
  partials hold −0.0, which adds nothing);
- a NaN, or +inf with −inf, is no sum: :class:`NotASum`, naming the element (the caller adds the
  global and the shards).
"""

import math as _math
from fractions import Fraction as _Fraction

import numpy as _np


class NotASum(ValueError):
    """A column of the messages has no sum: a NaN, or +inf with −inf. ``element`` is its index."""

    def __init__(self, element, what):
        super().__init__(f"element {element}: {what}")
        self.element, self.what = element, what


def _grow(partials, x):
    """Adds ``x`` to the non-overlapping ``partials`` in place, exactly (Knuth's two-sum after
    ordering by magnitude; zero partials dropped). False (``partials`` then unusable) when a
    partial sum overflows."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        if not _math.isfinite(hi):
            return False
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]
    return True


def _infinite(col, j):
    """The sum of a column with a non-finite value: its infinity, or :class:`NotASum`."""
    if any(_math.isnan(v) for v in col):
        raise NotASum(j, "a message is NaN")
    signs = {v > 0 for v in col if _math.isinf(v)}
    if len(signs) == 2:
        raise NotASum(j, "messages of +inf and -inf")
    return _math.inf if signs.pop() else -_math.inf


def partials(vectors):
    """The exact element-wise sum of ``vectors`` (float64 arrays of one length E, at least one)
    as an ``(m, E)`` array: column j holds floats whose exact sum is Σ_v v[j] — its
    non-overlapping partials, or its values as they are where a partial sum overflows, or the
    column's infinity — and −0.0 in the rows past them (see the module docs for the edge
    cases; :class:`NotASum` for a column with no sum)."""
    stack = _np.asarray([_np.asarray(v, dtype=_np.float64) for v in vectors])
    if stack.ndim != 2 or stack.shape[0] == 0:
        raise ValueError("partials: need one or more vectors of one length")
    cols = []
    for j, col in enumerate(stack.T.tolist()):
        if not all(_math.isfinite(v) for v in col):
            cols.append([_infinite(col, j)])
            continue
        p = []
        if not all(_grow(p, x) for x in col):
            p = col
        cols.append(p)
    out = _np.full((max(len(p) for p in cols), len(cols)), -0.0)
    for j, p in enumerate(cols):
        out[: len(p), j] = p
    return out


def _exact(col):
    """The correctly rounded sum of finite floats ``col``, ±inf where it is beyond the float
    range (exact rational arithmetic: ``math.fsum`` raises when a partial sum overflows)."""
    total = sum(map(_Fraction, col), _Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return _math.inf if total > 0 else -_math.inf


def rounded(stacks):
    """The correctly rounded element-wise sum of the partials in ``stacks`` (``(m_g, E)``
    arrays from :func:`partials`, or any floats): one float64 vector of length E. −0.0 where
    every value is −0.0; ±inf where the exact sum is beyond the float range or a value is that
    infinity; :class:`NotASum` for a column with no sum."""
    every = _np.concatenate([_np.atleast_2d(_np.asarray(s, dtype=_np.float64)) for s in stacks],
                            axis=0)
    out = _np.empty(every.shape[1])
    for j, col in enumerate(every.T.tolist()):
        if not all(_math.isfinite(v) for v in col):
            out[j] = _infinite(col, j)
            continue
        try:
            v = _math.fsum(col)
        except OverflowError:
            v = _exact(col)
        if v == 0.0 and all(_math.copysign(1.0, x) < 0 for x in col):
            v = -0.0
        out[j] = v
    return out
