"""Writes X.csv and y.csv (training set) and X_test.csv, y_test.csv from pima_train.csv and
pima_test.csv: the 7 inputs standardised by the training set's means and (population)
standard deviations, `type` Yes/No as 1/0. numpy only; run from this directory."""

import numpy as np

COLUMNS = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]


def read(path):
    rows = [line.strip().split(",") for line in open(path) if line.strip()]
    head = rows[0]
    idx = [head.index(c) for c in COLUMNS]
    label = head.index("type")
    x = np.array([[float(r[i]) for i in idx] for r in rows[1:]])
    y = np.array([1.0 if r[label] == "Yes" else 0.0 for r in rows[1:]])
    return x, y


def main():
    x, y = read("pima_train.csv")
    xt, yt = read("pima_test.csv")
    mean, sd = x.mean(axis=0), x.std(axis=0)
    for name, a, b in [("", x, y), ("_test", xt, yt)]:
        np.savetxt(f"X{name}.csv", (a - mean) / sd, delimiter=",", header=",".join(COLUMNS),
                   comments="", fmt="%.17g")
        np.savetxt(f"y{name}.csv", b, header="y", comments="", fmt="%d")


if __name__ == "__main__":
    main()
