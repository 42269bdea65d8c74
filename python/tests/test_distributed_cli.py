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


def test_epoch_order_is_a_seeded_permutation_per_epoch():
    a, b = _occam.EpochOrder(7, 5), _occam.EpochOrder(7, 5)
    epochs = [a.next_epoch() for _ in range(6)]
    assert epochs == [b.next_epoch() for _ in range(6)]
    assert all(sorted(e) == list(range(5)) for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # a new order each epoch
    assert _occam.EpochOrder(8, 5).next_epoch() != epochs[0] or \
        _occam.EpochOrder(9, 5).next_epoch() != epochs[0]


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


def test_batch_on_dask_is_the_cli_batch_run(client, tmp_path):
    x = gmm_data(sum(SIZES), seed=12)
    files = shard_files(tmp_path, x)
    r = od.fit(GMM, files, client=client, seed=3, max_iter=15, tol=0.0)
    got, _ = cli("fit", tmp_path / "gmm.occam", "--shards", f"x={tmp_path}/x-*.npy",
                 "--seed", 3, "--max-iter", 15, "--tol", 0, "--json")
    close(r.bound_trace, got["bound_trace"])
    for k, v in r.posterior("mu")["params"].items():
        close(np.ravel(v), got["globals"]["mu"]["params"][k]["values"])
