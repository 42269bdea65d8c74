"""Writes the training and test halves of iris.csv: X.csv, c.csv (75 rows) and X_test.csv,
c_test.csv (75 rows). The split is stratified and seeded: within each species the 50 rows are
permuted by numpy's default_rng(0) (one generator, species 0, 1, 2 in turn) and the first 25 go to
the training half. The measurements are centred by the training half's means (in cm; not
scaled), which leaves scikit-learn's fit unchanged (its intercept is not penalised) and makes
the weights and the biases, mean-field in the model, nearly independent a posteriori (on the raw
measurements VMP crawls along their correlation). numpy only; run from this directory."""

import numpy as np

COLUMNS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def main():
    data = np.loadtxt("iris.csv", delimiter=",", skiprows=1)
    x, c = data[:, :4], data[:, 4].astype(int)
    rng = np.random.default_rng(0)
    train, test = [], []
    for k in range(3):
        rows = rng.permutation(np.flatnonzero(c == k))
        train += list(np.sort(rows[:25]))
        test += list(np.sort(rows[25:]))
    mean = x[train].mean(axis=0)
    for name, rows in [("", train), ("_test", test)]:
        np.savetxt(f"X{name}.csv", x[rows] - mean, delimiter=",", header=",".join(COLUMNS), comments="",
                   fmt="%.17g")
        np.savetxt(f"c{name}.csv", c[rows], header="c", comments="", fmt="%d")


if __name__ == "__main__":
    main()
