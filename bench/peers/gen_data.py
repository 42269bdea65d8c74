#!/usr/bin/env python3
"""Generate the GMM benchmark data sets deterministically and write them as CSV.

Usage:  gen_data.py OUTDIR [--cases a,b,c,d] [--seed 2026]

For each case it writes
  OUTDIR/<case>.csv       header x0..x{D-1}, one point per row ('%.17g', exact round trip)
  OUTDIR/<case>.init.csv  header z, one initial component label in 0..K-1 per row
and OUTDIR/cases.json listing case, file, init file, N, D, K, K_true.

Generator (true mixture, "well separated"), all from numpy.random.default_rng(seed + case index):
  K_true = min(K, 10) clusters;
  means: uniform in the box [-B, B]^D with B = 10 * K_true^(1/D), redrawn (rejection) until every
         pair of means is at least 8 apart (cluster standard deviations are at most 1);
  covariances: R diag(s^2) R^T with R a random rotation (QR of a standard normal matrix, signs
         fixed) and standard deviations s_i uniform in [0.3, 1.0];
  weights: Dirichlet(10 * 1_{K_true}) (roughly balanced);
  labels: categorical(weights) per point, points y_n ~ N(mean_{label}, cov_{label}).

Initial labels (the same start for every peer; "random_from_data"-like): K distinct data points
chosen with rng.choice(N, K, replace=False) from numpy.random.default_rng(seed + 1000 + case index)
act as centres, and each point gets the label of its nearest centre (Euclidean; ties -> lowest index).
"""

import argparse
import json
import os

import numpy as np

CASES = {
    # name: (N, D, K)
    "a": ("n10k_d2_k10", 10_000, 2, 10),
    "b": ("n2k_d10_k40", 2_000, 10, 40),
    "c": ("n100k_d2_k10", 100_000, 2, 10),
    "d": ("n1m_d2_k10", 1_000_000, 2, 10),
}
MIN_SEPARATION = 8.0


def random_rotation(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def true_mixture(rng, k_true, d):
    box = 10.0 * k_true ** (1.0 / d)
    while True:
        means = rng.uniform(-box, box, size=(k_true, d))
        dist = np.linalg.norm(means[:, None, :] - means[None, :, :], axis=-1)
        if np.all(dist[np.triu_indices(k_true, 1)] >= MIN_SEPARATION):
            break
    covs = []
    for _ in range(k_true):
        r = random_rotation(rng, d)
        s = rng.uniform(0.3, 1.0, size=d)
        covs.append((r * s**2) @ r.T)
    weights = rng.dirichlet(10.0 * np.ones(k_true))
    return means, np.array(covs), weights


def sample(rng, n, means, covs, weights):
    labels = rng.choice(len(weights), size=n, p=weights)
    chol = np.linalg.cholesky(covs)
    eps = rng.standard_normal((n, means.shape[1]))
    return means[labels] + np.einsum("nij,nj->ni", chol[labels], eps), labels


def initial_labels(rng, y, k):
    centres = y[rng.choice(len(y), size=k, replace=False)]
    best = np.full(len(y), np.inf)
    lab = np.zeros(len(y), dtype=np.int64)
    for j, c in enumerate(centres):  # loop over K keeps memory at O(N)
        d2 = np.sum((y - c) ** 2, axis=1)
        better = d2 < best
        best[better] = d2[better]
        lab[better] = j
    return lab


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--cases", default="a,b,c", help="comma list from a,b,c,d (default a,b,c)")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)

    manifest = []
    for key in args.cases.split(","):
        idx = "abcd".index(key)
        name, n, d, k = CASES[key]
        k_true = min(k, 10)
        rng = np.random.default_rng(args.seed + idx)
        means, covs, weights = true_mixture(rng, k_true, d)
        y, _ = sample(rng, n, means, covs, weights)
        z0 = initial_labels(np.random.default_rng(args.seed + 1000 + idx), y, k)

        data = os.path.join(args.outdir, name + ".csv")
        init = os.path.join(args.outdir, name + ".init.csv")
        header = ",".join(f"x{i}" for i in range(d))
        np.savetxt(data, y, fmt="%.17g", delimiter=",", header=header, comments="")
        np.savetxt(init, z0, fmt="%d", header="z", comments="")
        manifest.append({"case": name, "data": data, "init": init, "N": n, "D": d, "K": k,
                         "K_true": k_true, "seed": args.seed + idx})
        print(f"{name}: N={n} D={d} K={k} K_true={k_true} -> {data}")

    with open(os.path.join(args.outdir, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
