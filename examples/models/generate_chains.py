"""Simulated data for examples/models/hmm_chain.occam and lds.occam (plain Python, seeded).

hmm_chain/: three sequences of lengths 60, 35 and 12 from a 3-state HMM with sticky transitions
(0.9 on the diagonal), initial probabilities (0.5, 0.3, 0.2) and Gaussian emissions with means
(-3, 0, 3) and standard deviation 0.7. y.csv holds one sequence per row, empty cells after its
end; L.csv the lengths; z_true.csv the states that generated them.

lds/: 80 steps of a 2-D state rotating by 0.3 rad per step (damped by 0.98), state noise
precision 100, observed through a fixed 4×2 loading matrix with noise standard deviation 0.1.

hmm_regimes/: 12 sequences of 40 steps from a 2-state HMM whose transition matrix depends on a
regime per sequence (drawn with probability 1/2 each): regime 0 sticky (stay 0.95), regime 1
switching (stay 0.2); uniform initial probabilities, emission means (-1.5, 1.5), standard
deviation 0.7. y.csv one sequence per row; r_true.csv the regimes (its own seed, 140, so the
other data sets are unchanged).

Run from the repository's root: python3 examples/models/generate_chains.py
"""
import math
import random


def hmm(rng):
    p0 = [0.5, 0.3, 0.2]
    a = [[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]]
    mu, sd = [-3.0, 0.0, 3.0], 0.7
    lengths = [60, 35, 12]
    steps = max(lengths)
    rows, states = [], []
    for n in lengths:
        z = rng.choices(range(3), p0)[0]
        ys, zs = [], []
        for t in range(n):
            if t > 0:
                z = rng.choices(range(3), a[z])[0]
            zs.append(z)
            ys.append(rng.gauss(mu[z], sd))
        rows.append([f"{v:.6f}" for v in ys] + [""] * (steps - n))
        states.append([str(v) for v in zs] + [""] * (steps - n))
    header = ",".join(f"t{t}" for t in range(steps))
    with open("examples/models/hmm_chain/y.csv", "w") as f:
        f.write(header + "\n" + "".join(",".join(r) + "\n" for r in rows))
    with open("examples/models/hmm_chain/z_true.csv", "w") as f:
        f.write(header + "\n" + "".join(",".join(r) + "\n" for r in states))
    with open("examples/models/hmm_chain/L.csv", "w") as f:
        f.write("length\n" + "".join(f"{n}\n" for n in lengths))


def lds(rng):
    th, r = 0.3, 0.98
    a = [[r * math.cos(th), -r * math.sin(th)], [r * math.sin(th), r * math.cos(th)]]
    c = [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.5, -0.5]]
    x = [1.0, 0.0]
    out = []
    for t in range(80):
        if t > 0:
            x = [sum(a[i][k] * x[k] for k in range(2)) + rng.gauss(0, 0.1) for i in range(2)]
        out.append([sum(c[o][k] * x[k] for k in range(2)) + rng.gauss(0, 0.1) for o in range(4)])
    with open("examples/models/lds/y.csv", "w") as f:
        f.write("o0,o1,o2,o3\n" + "".join(",".join(f"{v:.6f}" for v in row) + "\n" for row in out))


def regimes(rng):
    stay = [0.95, 0.2]
    mu, sd = [-1.5, 1.5], 0.7
    rows, truth = [], []
    for _ in range(12):
        r = rng.choices(range(2), [0.5, 0.5])[0]
        z = rng.choices(range(2), [0.5, 0.5])[0]
        ys = []
        for t in range(40):
            if t > 0 and rng.random() >= stay[r]:
                z = 1 - z
            ys.append(rng.gauss(mu[z], sd))
        rows.append([f"{v:.6f}" for v in ys])
        truth.append(r)
    header = ",".join(f"t{t}" for t in range(40))
    with open("examples/models/hmm_regimes/y.csv", "w") as f:
        f.write(header + "\n" + "".join(",".join(r) + "\n" for r in rows))
    with open("examples/models/hmm_regimes/r_true.csv", "w") as f:
        f.write("regime\n" + "".join(f"{r}\n" for r in truth))


if __name__ == "__main__":
    rng = random.Random(14)
    hmm(rng)
    lds(rng)
    regimes(random.Random(140))
