"""Writes series.csv: one sequence of 300 steps from a 3-state Gaussian HMM (seed 28).

States stay with probability 0.9 and move to each other state with 0.05; emissions N(0, 1),
N(3, 1), N(6, 1); the first state is uniform. Usage: python3 generate_three_states.py
"""

import numpy as np

rng = np.random.default_rng(28)
T, means = 300, np.array([0.0, 3.0, 6.0])
A = np.full((3, 3), 0.05) + np.eye(3) * 0.85
z = [rng.integers(3)]
for _ in range(T - 1):
    z.append(rng.choice(3, p=A[z[-1]]))
x = means[np.array(z)] + rng.standard_normal(T)
with open("series.csv", "w") as f:
    f.write(",".join(f"t{t}" for t in range(T)) + "\n")
    f.write(",".join(f"{v:.4f}" for v in x) + "\n")
