"""Converts scikit-learn's 8x8 handwritten digits once into digits.npz (run by hand, not in CI).

Source: scikit-learn's `load_digits`, a copy of the test part of the UCI "Optical Recognition of
Handwritten Digits" data set (E. Alpaydin, C. Kaynak, 1998; https://archive.ics.uci.edu/dataset/80),
1,797 images of 8x8 pixels with values 0..16, distributed with scikit-learn under its BSD-3-Clause
licence. The fixed split: within each digit, a seeded permutation (numpy PCG64, seed 0) sends two
thirds of the images to training and the rest to testing. Arrays (uint8): x_train, y_train,
x_test, y_test.

    /path/to/python convert.py   # needs numpy and scikit-learn
"""

import numpy as np
from sklearn.datasets import load_digits

d = load_digits()
x, y = d.data.astype(np.uint8), d.target.astype(np.uint8)
rng = np.random.default_rng(0)
train, test = [], []
for c in range(10):
    idx = rng.permutation(np.flatnonzero(y == c))
    k = (2 * len(idx)) // 3
    train.extend(sorted(idx[:k]))
    test.extend(sorted(idx[k:]))
train, test = np.array(sorted(train)), np.array(sorted(test))
np.savez_compressed(
    "digits.npz", x_train=x[train], y_train=y[train], x_test=x[test], y_test=y[test]
)
print(len(train), "train,", len(test), "test")
