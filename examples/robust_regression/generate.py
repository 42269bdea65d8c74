"""Writes X.csv and y.csv for the robust-regression example (numpy only, seed 2026).

100 points y = 1 + 2 x + e, x uniform on [-2, 2], e ~ N(0, 0.5^2); then 10 of them, chosen at
random, get an outlier: + uniform(6, 10) when x > 0 (the upper right), which pulls a
Gaussian-noise fit's slope up.
"""
import numpy as np

rng = np.random.default_rng(2026)
n = 100
x = rng.uniform(-2.0, 2.0, n)
y = 1.0 + 2.0 * x + rng.normal(0.0, 0.5, n)
right = np.flatnonzero(x > 0.0)
out = rng.choice(right, 10, replace=False)
y[out] += rng.uniform(6.0, 10.0, out.size)
with open("X.csv", "w") as f:
    f.write("one,x\n")
    f.writelines(f"1,{v:.6f}\n" for v in x)
with open("y.csv", "w") as f:
    f.write("y\n")
    f.writelines(f"{v:.6f}\n" for v in y)
with open("outliers.csv", "w") as f:
    f.write("row\n")
    f.writelines(f"{i}\n" for i in sorted(out))
