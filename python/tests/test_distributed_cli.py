"""occam.distributed on a Dask LocalCluster against the command line's sharded fit: the same
model, shard files, method and seed give the same run — the same bound trace and global
posteriors to 1e-10 relative. For stochastic VB this needs one minibatch order on both surfaces:
both draw it from the engine's ``EpochOrder(seed)``."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import occam
import occam.distributed as od
from occam import _occam

from test_distributed import GMM, close, cut, gmm_data

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIZES = [120, 45, 200, 80, 155]  # five uneven shards, N = 600


def cli(*args):
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    assert binary.is_file(), f"{binary} is missing: run `cargo build -p occam-cli` first"
    out = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def shard_files(tmp_path, x):
    paths = []
    for s, part in enumerate(cut(x, SIZES)):
        p = tmp_path / f"x-{s}.npy"
        np.save(p, part["x"])
        paths.append({"x": str(p)})
    (tmp_path / "gmm.occam").write_text(GMM)
    return paths


def test_csv_shard_files_are_read_as_the_cli_reads_them(tmp_path):
    """Shard files other than .npy go to the extension as paths: a CSV (with a header, a
    one-row shard) gives the fit of the same rows from .npy files, and a bad cell is the CLI's
    located DataError, not a lost worker."""
    x = gmm_data(sum(SIZES), seed=12)
    npy = shard_files(tmp_path, x)
    csv = []
    for s, part in enumerate(cut(x, SIZES)):
        p = tmp_path / f"x-{s}.csv"
        np.savetxt(p, part["x"], delimiter=",", header="a,b", comments="", fmt="%.17g")
        csv.append({"x": str(p)})
    a = od.fit(GMM, npy, seed=0, max_iter=20)
    b = od.fit(GMM, csv, seed=0, max_iter=20)
    close(b.bound_trace, a.bound_trace)
    one = tmp_path / "one.csv"
    one.write_text("a,b\n1.5,2.5\n")
    # One row of two columns is one row (np.loadtxt made it two rows of one column).
    r = od.fit(GMM, [{"x": str(one)}, csv[0]], seed=0, max_iter=3)
    assert np.asarray(r.moments("z", 0)).size == 3  # one row, K = 3 probabilities
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1.5,2.5\n1.0,oops\n")
    with pytest.raises(occam.DataError, match=r"bad\.csv:3:2: column `b`: `oops` is not a number"):
        od.fit(GMM, [{"x": str(bad)}, csv[0]], seed=0, max_iter=3)


def test_epoch_order_is_a_seeded_permutation_per_epoch():
    a, b = _occam.EpochOrder(7, 5), _occam.EpochOrder(7, 5)
    epochs = [a.next_epoch() for _ in range(6)]
    assert epochs == [b.next_epoch() for _ in range(6)]
    assert all(sorted(e) == list(range(5)) for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # a new order each epoch
    assert _occam.EpochOrder(8, 5).next_epoch() != epochs[0] or \
        _occam.EpochOrder(9, 5).next_epoch() != epochs[0]


def test_random_row_svi_on_dask_is_the_cli_run(client, tmp_path):
    """``batch_rows=B`` and ``--batch-rows B``: one order of random rows on both surfaces."""
    x = gmm_data(sum(SIZES), seed=12)
    files = shard_files(tmp_path, x)
    r = od.fit(GMM, files, client=client, seed=4, max_iter=6, tol=0.0, method="svi",
               kappa=0.6, tau=2.0, bound_every=2, batch_rows=70)
    got, _ = cli("fit", tmp_path / "gmm.occam", "--shards", f"x={tmp_path}/x-*.npy",
                 "--vb", "svi", "--seed", 4, "--max-iter", 6, "--tol", 0, "--kappa", 0.6,
                 "--tau", 2.0, "--bound-every", 2, "--batch-rows", 70, "--json")
    assert r.steps == got["steps"] == 6 * 9  # 600 rows in minibatches of 70: 8 and one of 40
    close(r.bound_trace, got["bound_trace"])
    for g in ["pi", "mu", "Lambda"]:
        for k, v in r.posterior(g)["params"].items():
            close(np.ravel(v), got["globals"][g]["params"][k]["values"])


@pytest.mark.parametrize("seed", [0, 5])
def test_svi_on_dask_is_the_cli_svi_run(client, tmp_path, seed):
    x = gmm_data(sum(SIZES), seed=12)
    files = shard_files(tmp_path, x)
    kw = dict(kappa=0.6, tau=2.0, bound_every=2)
    r = od.fit(GMM, files, client=client, seed=seed, max_iter=8, tol=0.0, method="svi", **kw)
    got, _ = cli("fit", tmp_path / "gmm.occam", "--shards", f"x={tmp_path}/x-*.npy",
                 "--vb", "svi", "--seed", seed, "--max-iter", 8, "--tol", 0,
                 "--kappa", 0.6, "--tau", 2.0, "--bound-every", 2, "--json")
    assert got["method"] == "svi" and got["shard_rows"] == SIZES
    assert r.epochs == got["epochs"] == [2, 4, 6, 8]
    assert r.steps == got["steps"] == 8 * len(SIZES)
    close(r.bound_trace, got["bound_trace"])
    for g in ["pi", "mu", "Lambda"]:
        for k, v in r.posterior(g)["params"].items():
            close(np.ravel(v), got["globals"][g]["params"][k]["values"])


def test_batch_in_process_is_the_cli_batch_run_to_the_bit(tmp_path):
    """Both surfaces sum the shards' messages and local bound terms exactly and round once
    (``_exactsum`` here, ``occam_core::exactsum`` in the CLI), so a batch fit from the same seed
    is the same run to the bit: every bound of the trace, the sweep it stops at with ``--tol 0``
    (a bitwise fixed point) and the globals' posteriors."""
    x = gmm_data(sum(SIZES), seed=12)
    files = shard_files(tmp_path, x)
    got, _ = cli("fit", tmp_path / "gmm.occam", "--shards", f"x={tmp_path}/x-*.npy",
                 "--seed", 3, "--max-iter", 200, "--tol", 0, "--json")
    r = od.fit(GMM, files, seed=3, max_iter=200, tol=0.0)
    assert list(r.bound_trace) == got["bound_trace"]
    assert r.converged == got["converged"]
    for g in ["pi", "mu", "Lambda"]:
        for k, v in r.posterior(g)["params"].items():
            assert np.ravel(v).tolist() == got["globals"][g]["params"][k]["values"], (g, k)


def test_batch_on_dask_is_the_cli_batch_run(client, tmp_path):
    """The same sweeps (as many as the CLI ran) to 1e-10 on a LocalCluster (to the bit in one
    process: the test above)."""
    x = gmm_data(sum(SIZES), seed=12)
    files = shard_files(tmp_path, x)
    got, _ = cli("fit", tmp_path / "gmm.occam", "--shards", f"x={tmp_path}/x-*.npy",
                 "--seed", 3, "--max-iter", 15, "--tol", 0, "--json")
    r = od.fit(GMM, files, client=client, seed=3, max_iter=len(got["bound_trace"]), tol=None)
    close(r.bound_trace, got["bound_trace"])
    for k, v in r.posterior("mu")["params"].items():
        close(np.ravel(v), got["globals"]["mu"]["params"][k]["values"])


def test_restarts_on_dask_are_the_cli_restarts(client, tmp_path):
    """Restart r is the fit from seed + r, the highest final bound is kept: the same restarts,
    bounds and kept fit as ``occam fit --shards ... --restarts``."""
    x = gmm_data(sum(SIZES), seed=12)
    files = shard_files(tmp_path, x)
    for method in ["batch", "svi"]:
        kw = dict(max_iter=30, tol=1e-6, method=method, bound_every=3)
        r = od.fit(GMM, files, client=client, seed=4, restarts=3, **kw)
        singles = [od.fit(GMM, files, seed=4 + k, **kw) for k in range(3)]
        assert r.restart_bounds == [s.bound for s in singles]
        best = int(np.argmax(r.restart_bounds))
        assert r.best_restart == best and r.seed == 4 + best
        close(r.bound_trace, singles[best].bound_trace)
        got, _ = cli("fit", tmp_path / "gmm.occam", "--shards", f"x={tmp_path}/x-*.npy",
                     "--vb", method, "--seed", 4, "--restarts", 3, "--max-iter", 30,
                     "--bound-every", 3, "--json")
        close(r.restart_bounds, got["restart_bounds"])
        assert got["best_restart"] == best
        close(r.moments("mu"), singles[best].moments("mu"))


def test_strict_raises_on_a_decrease_and_otherwise_warns(monkeypatch):
    """The decrease is made (the bound read back lowered after sweep 3), to test what each mode
    does with it: strict raises RunError, the default records and warns it."""
    import occam
    real = od._bound
    calls = {"n": 0}

    def lowered(runner, which):
        calls["n"] += 1
        return real(runner, which) - (100.0 if calls["n"] == 4 else 0.0)

    monkeypatch.setattr(od, "_bound", lowered)
    x = gmm_data(sum(SIZES), seed=12)
    with pytest.raises(occam.RunError, match="decreased .* at iteration 4"):
        od.fit(GMM, cut(x, SIZES), seed=1, max_iter=10, tol=None, strict=True)
    calls["n"] = 0
    with pytest.warns(RuntimeWarning, match="decreased .* at iteration 4"):
        r = od.fit(GMM, cut(x, SIZES), seed=1, max_iter=10, tol=None)
    assert r.iterations == 10 and len(r.warnings) == 1
    with pytest.raises(occam.UsageError, match="strict mode"):
        od.fit(GMM, cut(x, SIZES), method="svi", strict=True)


def test_progress_lines_and_callback_see_every_sweep_of_every_restart(capsys):
    x = gmm_data(sum(SIZES), seed=12)
    seen = []
    r = od.fit(GMM, cut(x, SIZES), seed=0, restarts=2, max_iter=50, progress=1,
               callback=lambda sweep, bound: seen.append((sweep, bound)))
    err = capsys.readouterr().err.splitlines()
    for k in (1, 2):
        lines = [l for l in err if l.startswith(f"fit restart {k}/2: iteration ")]
        assert len(lines) > 2
    assert len(seen) == sum(1 for l in err if l.startswith("fit restart"))
    assert seen[-1][1] == r.restart_bounds[-1]
    # A callback returning False stops the whole fit (no further restart), as a normal fit does:
    # Interrupted, whose result is the run it stopped in.
    calls = []

    def stop_at_3(sweep, bound):
        calls.append(sweep)
        return sweep < 3

    with pytest.raises(occam.Interrupted) as e:
        od.fit(GMM, cut(x, SIZES), seed=0, restarts=3, max_iter=50, callback=stop_at_3)
    assert calls == [1, 2, 3]
    assert e.value.result.iterations == 3 and e.value.result.interrupted
    assert not e.value.result.converged
