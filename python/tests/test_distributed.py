"""occam.distributed: a fit over uneven shards — in this process, from shard files, or as actors on
a Dask LocalCluster of two worker processes — gives the single-process bound and posteriors (to
1e-10 relative) from the same start with the same schedule."""

import numpy as np
import pytest

import occam
import occam.distributed as od
from occam import _occam

GMM = """\
plate K = 3
plates N, D from data x
pi ~ Dirichlet(1) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-2)
Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)
x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
"""

SIZES = [23, 61, 7, 90, 36]  # five uneven shards, N = 217
SWEEPS = 25


def gmm_data(n=sum(SIZES), seed=1):
    rng = np.random.default_rng(seed)
    centres = np.array([[-4.0, 0.0], [3.0, 3.0], [2.0, -4.0]])
    return centres[rng.integers(0, 3, n)] + rng.standard_normal((n, 2))


def cut(x, sizes=SIZES):
    at = np.cumsum([0] + sizes)
    return [{"x": x[a:b]} for a, b in zip(at[:-1], at[1:])]


def single_process(x, seed, sweeps):
    """The engine's ordinary sweeps on all the data: every node's update in the default order."""
    full = _occam.Shard(GMM, {"x": x})
    full.initialize(seed)
    order = [n for n, _ in full.schedule()]
    trace = []
    for _ in range(sweeps):
        full.update(order)
        trace.append(sum(full.split_bound()))
    return full, np.array(trace)


def close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    assert np.all(np.abs(a - b) <= 1e-10 * (1.0 + np.maximum(np.abs(a), np.abs(b)))), \
        np.max(np.abs(a - b))


def same_as_single(client):
    x = gmm_data()
    full, trace = single_process(x, 4, SWEEPS)
    start = od.single_process_start(GMM, {"x": x}, SIZES, seed=4)
    r = od.fit(GMM, cut(x), client=client, start=start, max_iter=SWEEPS, tol=None)
    assert r.iterations == SWEEPS
    close(r.bound_trace, trace)
    for g in ["pi", "mu", "Lambda"]:
        close(r.moments(g), full.moments(g))
        for k, v in full.posterior(g)["params"].items():
            close(r.posterior(g)["params"][k], v)
    z = np.concatenate([r.moments("z", s) for s in range(len(SIZES))])
    close(z, full.moments("z"))
    # What travels, for each of the three globals: in this process every shard counts as its
    # own group (its n·len message up, the sum down); on Dask each of the W workers sends its
    # shards' exact sum as partials (one row of n·len values or more) and receives the sum once.
    per = sum(full.moments(g).size for g in ["pi", "mu", "Lambda"])
    if client is None:
        assert r.bytes_per_sweep == 2 * len(SIZES) * per * 8
    else:
        workers = len(client.scheduler_info()["workers"])
        assert 2 * workers * per * 8 <= r.bytes_per_sweep < 2 * len(SIZES) * per * 8
    return r


def test_exact_sums_are_the_same_bits_for_any_grouping_and_order():
    """The tree reduction's sums (``occam._exactsum``): partials of any grouping of the vectors,
    in any order, round to ``math.fsum`` of all their values — where a plain sum in shard order
    loses digits to cancellation and depends on the order."""
    import math

    from occam._exactsum import partials, rounded

    rng = np.random.default_rng(5)
    vecs = [rng.standard_normal(7) * 10.0 ** rng.integers(-8, 17, 7) for _ in range(11)]
    vecs.append(np.array([1e16, -1e16, 1.0, 1e-300, -3.5, 2.0 ** -60, 7.0]))
    vecs.append(-vecs[0])
    want = np.array([math.fsum(v[j] for v in vecs) for j in range(7)])
    plain = np.sum(vecs, axis=0)
    assert not np.array_equal(plain, want)  # a plain sum is not the correctly rounded one here
    for seed in range(6):
        order = np.random.default_rng(seed).permutation(len(vecs))
        cuts = np.sort(np.random.default_rng(seed + 9).choice(np.arange(1, len(vecs)), 1 + seed % 4,
                                                               replace=False))
        groups = np.split(order, cuts)
        got = rounded([partials([vecs[i] for i in g]) for g in groups])
        np.testing.assert_array_equal(got, want)
    # Each column of a group's partials adds up exactly to the group's sum.
    p = partials(vecs)
    assert p.shape[1] == 7 and p.shape[0] >= 2
    for j in range(7):
        assert math.fsum(p[:, j]) == want[j]
    # Infinities, overflow, signed zeros and NaN: test_distributed_exactsum.py.


def test_in_process_shards_sweep_as_one_process():
    same_as_single(None)


def test_shard_files_fit_as_the_arrays_they_hold(tmp_path):
    x = gmm_data()
    for i, d in enumerate(cut(x)):
        np.save(tmp_path / f"part-{i}.npy", d["x"])
    files = od.read_shard_files(str(tmp_path / "part-*.npy"), "x")
    assert len(files) == len(SIZES)
    a = od.fit(GMM, files, seed=2, max_iter=200, tol=1e-8)
    b = od.fit(GMM, cut(x), seed=2, max_iter=200, tol=1e-8)
    assert a.converged and a.iterations == b.iterations
    np.testing.assert_array_equal(a.bound_trace, b.bound_trace)
    np.testing.assert_array_equal(a.moments("mu"), b.moments("mu"))


def test_a_model_that_cannot_be_split_says_why():
    with pytest.raises(occam.OccamError, match="`z`.*mixture index"):
        od.fit(GMM, cut(gmm_data()), plate="D", max_iter=2)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_dask_actors_on_two_workers_sweep_as_one_process(client):
    r = same_as_single(client)
    # Local posteriors stay on the workers; each shard gives its own rows'.
    zs = r.local_posteriors("z")
    assert [p["params"]["probabilities"].shape[0] for p in zs] == SIZES


def test_one_worker_two_workers_and_one_process_give_the_same_bits(client):
    """The tree reduction (each worker sums its shards' messages, the client the workers' sums)
    is exact until one rounding at the client: the fit is the same to the bit on one worker, on
    two, and in this process."""
    distributed = pytest.importorskip("distributed")
    x = cut(gmm_data(244, seed=6), [40, 9, 77, 31, 55, 12, 20])  # seven uneven shards
    here = od.fit(GMM, x, seed=3, max_iter=15, tol=None)
    two = od.fit(GMM, x, client=client, seed=3, max_iter=15, tol=None)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    one_client = distributed.Client(cluster)
    try:
        one = od.fit(GMM, x, client=one_client, seed=3, max_iter=15, tol=None)
        for r in (one, two):
            np.testing.assert_array_equal(r.bound_trace, here.bound_trace)
            for g in ["pi", "mu", "Lambda"]:
                np.testing.assert_array_equal(r.moments(g), here.moments(g))
            np.testing.assert_array_equal(r.moments("z", 4), here.moments("z", 4))
        # One message per worker and reduction (at most as many partial rows as its shards, and
        # one sum back): fewer bytes than seven shards' messages up and seven sums down.
        assert max(one.bytes_per_sweep, two.bytes_per_sweep) < here.bytes_per_sweep
    finally:
        one_client.close()
        cluster.close()


def test_dask_default_start_converges_and_the_bound_never_decreases(client):
    r = od.fit(GMM, cut(gmm_data(seed=3)), client=client, seed=0, max_iter=300, tol=1e-8)
    assert r.converged
    assert np.all(np.diff(r.bound_trace) >= -1e-9 * np.abs(r.bound_trace[1:]))
    w = r.posterior("pi")["params"]["mean"]
    assert np.all((w > 0.2) & (w < 0.5)), w


def test_local_cluster_sets_occams_dask_settings_and_fits_the_same_bits():
    """``od.local_cluster``: its workers run with ``cluster_config()`` (the profiler off, the
    loop's health check and the system monitor rare) and the engine's threads given, and a fit
    on it is the same to the bit as in this process (the settings change Dask's bookkeeping, not
    the sums)."""
    distributed = pytest.importorskip("distributed")
    import dask

    def settings():
        import os
        return (dask.config.get("distributed.worker.profile.enabled"),
                dask.config.get("distributed.admin.tick.interval"),
                dask.config.get("distributed.admin.system-monitor.interval"),
                os.environ.get("RAYON_NUM_THREADS"))

    def callbacks(dask_worker):
        return sorted(dask_worker.periodic_callbacks)

    x = cut(gmm_data(150, seed=8), [50, 31, 69])
    here = od.fit(GMM, x, seed=2, max_iter=10, tol=None)
    before = dask.config.get("distributed.worker.profile.enabled")
    cluster = od.local_cluster(2, engine_threads=2, dashboard_address=None, silence_logs=40)
    client = distributed.Client(cluster)
    try:
        want = (False, "1s", "10s", "2")
        assert list(client.run(settings).values()) == [want, want]
        for names in client.run(callbacks).values():
            assert "profile" not in names and "profile-cycle" not in names
        # The settings were set for the cluster's making only: this process's are as they were.
        assert dask.config.get("distributed.worker.profile.enabled") == before
        r = od.fit(GMM, x, client=client, seed=2, max_iter=10, tol=None)
        np.testing.assert_array_equal(r.bound_trace, here.bound_trace)
        for g in ["pi", "mu", "Lambda"]:
            np.testing.assert_array_equal(r.moments(g), here.moments(g))
    finally:
        client.close()
        cluster.close()
    with pytest.raises(occam.UsageError, match="workers = 0"):
        od.local_cluster(0)
