"""occam.distributed's memoized and stochastic VB, and a worker killed mid-fit.

- memoized VB (Hughes & Sudderth 2013) reaches the batch optimum (bound to 1e-8 relative) with a
  bound that never decreases, in fewer passes; on Dask it is the in-process fit to 1e-10;
- stochastic VB (Hoffman et al. 2013) reaches the batch fit's posterior means to 1e-2, its run is
  fixed by its seed, and on Dask it is the in-process fit to 1e-10;
- killing one of two worker processes mid-fit stops the fit with ShardLost naming a shard: never
  a wrong answer, never a hang; with ``retries`` batch and stochastic VB recover, with the
  uninterrupted fit's answer.
"""

import os
import signal

import numpy as np
import pytest

import occam
import occam.distributed as od

from test_distributed import GMM, close, cut, gmm_data

SIZES = [300, 150, 450, 200, 300, 100]  # six uneven shards, N = 1500


def data():
    return gmm_data(sum(SIZES), seed=11)


def sorted_means(r):
    mu = np.asarray(r.posterior("mu")["params"]["mean"]).reshape(-1, 2)
    return mu[np.argsort(mu[:, 0])]


def test_memoized_vb_reaches_the_batch_optimum_with_a_bound_that_never_decreases():
    x = data()
    batch = od.fit(GMM, cut(x, SIZES), seed=1, max_iter=3000, tol=1e-13)
    memo = od.fit(GMM, cut(x, SIZES), seed=1, max_iter=3000, tol=1e-13, method="memoized")
    assert batch.converged and memo.converged and memo.method == "memoized"
    assert abs(batch.bound - memo.bound) <= 1e-8 * abs(batch.bound), (batch.bound, memo.bound)
    t = memo.bound_trace
    assert np.all(np.diff(t) >= -1e-9 * np.abs(t[1:]))
    assert memo.iterations < batch.iterations
    np.testing.assert_allclose(sorted_means(memo), sorted_means(batch), atol=1e-5)


def test_stochastic_vb_reaches_the_batch_means_and_its_seed_fixes_the_run():
    x = data()
    batch = od.fit(GMM, cut(x, SIZES), seed=0, max_iter=3000, tol=1e-12)
    kw = dict(seed=0, max_iter=60, tol=None, method="svi", kappa=0.6, tau=1.0, bound_every=10)
    a = od.fit(GMM, cut(x, SIZES), **kw)
    assert a.method == "svi" and a.epochs == [10, 20, 30, 40, 50, 60]
    assert a.steps == 60 * len(SIZES)
    d = np.abs(sorted_means(a) - sorted_means(batch))
    assert np.all(d <= 1e-2), d
    # The full bound at the stochastic globals is a bound at a q: below the batch optimum.
    assert a.bound <= batch.bound + 1e-9 * abs(batch.bound)
    assert batch.bound - a.bound <= 1e-4 * abs(batch.bound)
    b = od.fit(GMM, cut(x, SIZES), **kw)
    np.testing.assert_array_equal(a.bound_trace, b.bound_trace)
    c = od.fit(GMM, cut(x, SIZES), **{**kw, "seed": 1})
    assert not np.array_equal(a.bound_trace, c.bound_trace)


def test_random_row_minibatches_reach_the_batch_means_for_any_cut():
    """``batch_rows``: minibatches of random rows from all the shards (the engine's order over
    the N rows), messages scaled by N/|B|: the posterior means reach the batch fit's to 1e-2; a
    seed fixes the run."""
    x = data()
    batch = od.fit(GMM, cut(x, SIZES), seed=0, max_iter=3000, tol=1e-12)
    kw = dict(seed=0, max_iter=60, tol=None, method="svi", kappa=0.6, tau=1.0, bound_every=10,
              batch_rows=250)
    a = od.fit(GMM, cut(x, SIZES), **kw)
    assert a.steps == 60 * 6
    d = np.abs(sorted_means(a) - sorted_means(batch))
    assert np.all(d <= 1e-2), d
    assert a.bound <= batch.bound + 1e-9 * abs(batch.bound)
    b = od.fit(GMM, cut(x, SIZES), **kw)
    np.testing.assert_array_equal(a.bound_trace, b.bound_trace)
    c = od.fit(GMM, cut(x, SIZES), **{**kw, "seed": 1})
    assert not np.array_equal(a.bound_trace, c.bound_trace)
    with pytest.raises(occam.UsageError, match="batch_rows"):
        od.fit(GMM, cut(x, SIZES), batch_rows=10)


def test_random_rows_keep_an_array_of_another_plate_whole():
    """An array with as many rows as every shard but another plate (prior means over K = 3
    components, shards of 3 rows) is not cut into minibatches (the compiled model names the
    data plate's arrays); with m0 = 0 the run is the constant-mean mixture's."""
    m0_model = GMM.replace("plates N, D from data x\n", "plates N, D from data x\ndata m0[K] over D\n")
    m0_model = m0_model.replace("MvGaussian(mean = 0,", "MvGaussian(mean = m0,")
    assert "mean = m0" in m0_model
    x = gmm_data(30, seed=11)
    shards = cut(x, [3] * 10)
    kw = dict(seed=3, max_iter=5, tol=None, method="svi", bound_every=1, batch_rows=4)
    a = od.fit(m0_model, [{**d, "m0": np.zeros((3, 2))} for d in shards], **kw)
    b = od.fit(GMM, shards, **kw)
    assert a.steps == b.steps == 5 * 8
    close(a.bound_trace, b.bound_trace)
    close(a.moments("mu"), b.moments("mu"))


class _Rows:
    """A runner's face for ``_RandomRows``: shards' arrays, their plate sizes and the names
    along the data plate."""

    def __init__(self, data, sizes, along):
        self.data, self.n, self.sizes, self.along = data, len(data), sizes, along

    def call(self, method, args):
        assert method == "plate"
        return [("N", n) for n in self.sizes]

    def one(self, s, method, *args):
        assert method == "along_plate"
        return self.along


def test_random_rows_cut_each_row_into_its_lines_on_the_first_axis(tmp_path):
    """A data-plate array with k lines per row (a chain's T steps per sequence; here 3) gives
    a minibatch row r as lines 3r..3r+2 of its shard, in order; a one-line-per-row array the
    row itself; an array of another plate stays whole; shards whose lines per row differ are
    refused, naming the array and the shards."""
    from occam._minibatch import _RandomRows

    sizes = [2, 4, 3]
    y = [np.arange(30 * s, 30 * s + 3 * n * 2, dtype=float).reshape(3 * n, 2) for s, n in
         enumerate(sizes)]
    w = [np.arange(100 * s, 100 * s + n, dtype=float) for s, n in enumerate(sizes)]
    np.save(tmp_path / "y1.npy", y[1])
    shards = [{"y": y[0], "w": w[0], "m": np.ones((3, 2))},
              {"y": str(tmp_path / "y1.npy"), "w": w[1], "m": np.ones((3, 2))},
              {"y": y[2], "w": w[2], "m": np.ones((3, 2))}]
    rows = _RandomRows(_Rows(shards, sizes, ["w", "y"]), 4)
    got = rows.data([0, 3, 5, 8])  # shard 0 row 0, shard 1 rows 1 and 3, shard 2 row 2
    want_y = np.concatenate([y[0][0:3], y[1][3:6], y[1][9:12], y[2][6:9]])
    np.testing.assert_array_equal(got["y"], want_y)
    np.testing.assert_array_equal(got["w"], [w[0][0], w[1][1], w[1][3], w[2][2]])
    np.testing.assert_array_equal(got["m"], np.ones((3, 2)))
    assert got["y"].flags.c_contiguous
    bad = [dict(d) for d in shards]
    bad[2]["y"] = y[2][:6]  # 2 lines per row in shard 2, 3 in shards 0 and 1
    with pytest.raises(occam.UsageError, match=r"'y' has 3 lines per row in shard 0 and 2 in "
                                               r"shard 2"):
        _RandomRows(_Rows(bad, sizes, ["w", "y"]), 4)
    bad[2]["y"] = y[2][:7]
    with pytest.raises(occam.UsageError, match=r"shard 2's 'y' has 7 lines for its 3 rows"):
        _RandomRows(_Rows(bad, sizes, ["w", "y"]), 4)


def test_stochastic_vb_refuses_step_sizes_outside_robbins_monro():
    with pytest.raises(occam.UsageError, match="kappa = 0.5"):
        od.fit(GMM, cut(data(), SIZES), method="svi", kappa=0.5)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_memoized_and_stochastic_vb_on_dask_are_the_in_process_fits(client):
    x = data()
    for kw in [dict(method="memoized", max_iter=40, tol=None),
               dict(method="svi", max_iter=12, tol=None, bound_every=3),
               dict(method="svi", max_iter=6, tol=None, bound_every=3, batch_rows=200)]:
        here = od.fit(GMM, cut(x, SIZES), seed=2, **kw)
        there = od.fit(GMM, cut(x, SIZES), client=client, seed=2, **kw)
        close(there.bound_trace, here.bound_trace)
        close(there.moments("mu"), here.moments("mu"))
        close(there.moments("Lambda"), here.moments("Lambda"))


def test_a_worker_killed_mid_fit_stops_the_fit_with_shard_lost():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    try:
        pids = client.run(os.getpid)
        victim = sorted(pids)[1]  # shards 1, 3, 5 live on the second worker (round robin)
        seen = []

        def kill_at_sweep_3(sweep, bound):
            seen.append(bound)
            if sweep == 3:
                os.kill(pids[victim], signal.SIGKILL)

        with pytest.raises(od.ShardLost, match=r"shard [135]"):
            od.fit(GMM, cut(data(), SIZES), client=client, seed=0, max_iter=50, tol=None,
                   callback=kill_at_sweep_3)
        assert len(seen) == 3  # stopped at the first sweep after the kill: no bound after it
    finally:
        client.close()
        cluster.close()


def test_a_worker_killed_mid_fit_is_recovered_with_retries():
    """With ``retries=1`` the shards of a killed worker are rebuilt from their data on a live
    worker, their locals re-converged given the current globals, and the sweep run again. The
    mixture's one local (its index) is updated after the globals, so the rebuilt locals are the
    lost ones and the fit is the uninterrupted one: the bound to 1e-10 relative (the stated
    tolerance); and the bound never decreases after the recovery."""
    distributed = pytest.importorskip("distributed")
    x = cut(data(), SIZES)
    whole = od.fit(GMM, x, seed=0, max_iter=40, tol=None)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    try:
        pids = client.run(os.getpid)
        victim = sorted(pids)[1]  # shards 1, 3, 5 live on the second worker (round robin)

        def kill_at_sweep_3(sweep, bound):
            if sweep == 3:
                os.kill(pids[victim], signal.SIGKILL)

        with pytest.warns(RuntimeWarning, match=r"shard 1, 3, 5 lost during sweep 4"):
            r = od.fit(GMM, x, client=client, seed=0, max_iter=40, tol=None, retries=1,
                       callback=kill_at_sweep_3)
        assert r.recovered == [(4, [1, 3, 5])]
        assert r.iterations == 40
        close(r.bound_trace, whole.bound_trace)
        t = r.bound_trace[3:]
        assert np.all(np.diff(t) >= -1e-9 * np.abs(t[:-1]))
        # Posteriors of globals and of the rebuilt shards' locals.
        close(r.moments("mu"), whole.moments("mu"))
        close(r.moments("z", 3), whole.moments("z", 3))
    finally:
        client.close()
        cluster.close()


def test_a_worker_killed_mid_svi_is_recovered_with_the_undisturbed_answer():
    """Stochastic VB with ``retries=1``: the worker holding shards 1, 3, 5 is killed after the
    bound of epoch 3; the first step of epoch 4 on one of them finds it lost, its shards are
    rebuilt from their data, and that step is run again from the same globals with the same step
    number. The minibatch order is the seed's and a step reads only the globals and its shard's
    rows (the mixture's one local is re-optimised at every step), so the run is the undisturbed
    one: bound trace, steps and globals to 1e-10. Without retries the fit stops with
    ShardLost."""
    distributed = pytest.importorskip("distributed")
    x = cut(data(), SIZES)
    kw = dict(seed=3, max_iter=8, tol=None, method="svi", kappa=0.6, tau=1.0, bound_every=1)
    whole = od.fit(GMM, x, **kw)
    for retries in (1, 0):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=50)
        client = distributed.Client(cluster)
        try:
            pids = client.run(os.getpid)
            victim = sorted(pids)[1]  # shards 1, 3, 5 live on the second worker (round robin)

            def kill_at_epoch_3(epoch, bound):
                if epoch == 3:
                    os.kill(pids[victim], signal.SIGKILL)

            if retries == 0:
                with pytest.raises(od.ShardLost, match=r"shard [135]"):
                    od.fit(GMM, x, client=client, callback=kill_at_epoch_3, **kw)
                continue
            with pytest.warns(RuntimeWarning, match=r"shard 1, 3, 5 lost during epoch 4"):
                r = od.fit(GMM, x, client=client, retries=1, callback=kill_at_epoch_3, **kw)
            assert r.recovered == [(4, [1, 3, 5])]
            assert r.steps == whole.steps == 8 * len(SIZES)
            assert r.epochs == whole.epochs
            close(r.bound_trace, whole.bound_trace)
            close(r.moments("mu"), whole.moments("mu"))
            close(r.moments("Lambda"), whole.moments("Lambda"))
            close(r.moments("z", 3), whole.moments("z", 3))
        finally:
            client.close()
            cluster.close()
