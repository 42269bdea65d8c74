"""Writes the synthetic count data of this example: X.csv (a constant column `one` and two
inputs) and y.csv (counts), 100 rows, from numpy's default_rng(2026):
x1 ~ N(0, 1) (a standardised dose), x2 ~ Bernoulli(0.5) (a treatment group), and
y ~ Poisson(exp(0.5 + 0.6 x1 − 0.8 x2)). numpy only; run from this directory."""

import numpy as np

TRUE_W = np.array([0.5, 0.6, -0.8])  # one, x1, x2
N = 100


def main():
    rng = np.random.default_rng(2026)
    x1 = rng.standard_normal(N)
    x2 = (rng.random(N) < 0.5).astype(float)
    X = np.column_stack([np.ones(N), x1, x2])
    y = rng.poisson(np.exp(X @ TRUE_W))
    np.savetxt("X.csv", X, delimiter=",", header="one,x1,x2", comments="", fmt="%.17g")
    np.savetxt("y.csv", y, header="y", comments="", fmt="%d")


if __name__ == "__main__":
    main()
