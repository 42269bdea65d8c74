"""The edge cases of the tree reduction's exact sums (``occam._exactsum``): each gives the same
result for any grouping of the shards over workers and any order — the correctly rounded sum of
every value, as exact arithmetic gives it, or a clear error where there is no sum."""

import math
import re
from fractions import Fraction

import numpy as np
import pytest

from occam._exactsum import NotASum, partials, rounded

BIG = np.finfo(np.float64).max


def groupings(vecs, seeds=range(8)):
    """``vecs`` cut into 1-4 groups (workers) in shuffled orders, and the sum of each grouping
    as the client rounds it."""
    for seed in seeds:
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(vecs))
        k = 1 + seed % min(4, len(vecs))
        cuts = np.sort(rng.choice(np.arange(1, len(vecs)), k - 1, replace=False)) if k > 1 else []
        yield rounded([partials([vecs[i] for i in g]) for g in np.split(order, cuts)])


def exact(values):
    """The correctly rounded sum of finite ``values`` by rational arithmetic (±inf beyond
    the float range): the reference."""
    total = sum(map(Fraction, values), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def test_an_overflowing_partial_sum_still_gives_the_exact_sum():
    # Four shards' messages (rows) to four elements (columns). Column 0: a finite exact sum
    # (0.75·max + 1) though 0.75·max + 0.75·max overflows in every order that adds those first;
    # column 1: an exact sum beyond the range (+inf); column 2: below it (−inf); column 3: the
    # largest float plus less than half its ulp (rounds to the largest float, finite).
    ulp = math.ulp(BIG)
    cols = [[BIG * 0.75, BIG * 0.75, -BIG * 0.75, 1.0],
            [BIG * 0.75, BIG * 0.75, 0.0, 1.0],
            [-BIG * 0.75, -BIG * 0.75, BIG * 0.5, -BIG * 0.5],
            [BIG, ulp / 4, ulp / 8, 0.0]]
    vecs = [np.array(row) for row in zip(*cols)]
    want = [exact(c) for c in cols]
    assert math.isfinite(want[0]) and want[0] == BIG * 0.75
    assert want[1:] == [math.inf, -math.inf, BIG]
    for got in groupings(vecs):
        assert got.tolist() == want
    # The plain sum in shard order overflows in column 0.
    with np.errstate(over="ignore"):
        assert np.sum(vecs, axis=0)[0] == math.inf


def test_infinite_messages_give_their_infinity():
    vecs = [np.array([np.inf, -np.inf, 1.0]), np.array([1.0, -2.0, np.inf]),
            np.array([np.inf, 5.0, -BIG])]
    for got in groupings(vecs):
        assert got.tolist() == [math.inf, -math.inf, math.inf]


def test_the_sum_is_negative_zero_only_when_every_value_is():
    # −0.0 + −0.0 = −0.0 in IEEE arithmetic, and any +0.0 or cancelling pair gives +0.0; a
    # worker's rows past a column's partials (padding) must not turn −0.0 into +0.0.
    vecs = [np.array([-0.0, -0.0, 1.0, -0.0]), np.array([-0.0, 0.0, -1.0, 3.0]),
            np.array([-0.0, -0.0, -0.0, 2.0 ** -60]), np.array([-0.0, -0.0, -0.0, -3.0])]
    for got in groupings(vecs):
        assert [math.copysign(1.0, v) for v in got[:3]] == [-1.0, 1.0, 1.0]
        assert got[:3].tolist() == [0.0, 0.0, 0.0] and got[3] == 2.0 ** -60
    # One vector: its own values, signs included.
    one = rounded([partials([np.array([-0.0, 0.0])])])
    assert [math.copysign(1.0, v) for v in one] == [-1.0, 1.0]


@pytest.mark.parametrize("vecs, why", [
    ([np.array([1.0, np.nan]), np.array([2.0, 3.0])], "a message is NaN"),
    ([np.array([1.0, np.inf]), np.array([2.0, -np.inf])], "messages of +inf and -inf"),
])
def test_a_column_with_no_sum_is_an_error_naming_its_element(vecs, why):
    # On a worker (its partials) and at the client (the workers' rows rounded together: +inf
    # from one worker, −inf from another).
    with pytest.raises(NotASum, match=re.escape(f"element 1: {why}")) as e:
        partials(vecs)
    assert e.value.element == 1
    with pytest.raises(NotASum, match=re.escape(f"element 1: {why}")):
        rounded([v[None, :] for v in vecs])


def test_a_shard_whose_messages_have_no_sum_stops_the_fit_with_a_located_error():
    """A NaN message in the reduction is an ``occam.RunError`` naming the global, the element
    and the shards (on a worker it must not be taken for a lost worker)."""
    from occam import RunError
    from occam._shards import _Group, _Here

    class Broken:
        def __init__(self, m):
            self.m = np.asarray(m, dtype="<f8")

        def local_messages(self, name):
            return self.m.tobytes()

    here = _Here.__new__(_Here)
    here.shards = [Broken([1.0, 2.0]), Broken([np.nan, 0.0]), Broken([1.0, 1.0])]
    with pytest.raises(RunError, match=r"shard 0, 1, 2: the messages to `mu` have no sum at "
                                       r"element 0 \(a message is NaN\)"):
        here.reduce([0, 1, 2], "mu")
    group = _Group()
    group.shards = {3: here.shards[0], 5: here.shards[1]}
    with pytest.raises(RunError, match=r"shard 3, 5: the messages to `mu` have no sum"):
        group.reduce([3, 5], "mu")
