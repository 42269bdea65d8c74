"""The Python fuzz harness: seeded random calls of every public entry point of the occam package
with inputs at and beyond the edges of their domains (mutated model text, arrays of every dtype
and shape with NaN/±Inf/huge/subnormal cells, settings from 0 and −1 to 2⁶⁴, NaN and text,
callbacks that stop or raise, plate sizes that would not fit in memory).

Each call must either return a finite result or raise a documented exception: an
:class:`occam.OccamError` subclass other than :class:`occam.InternalError` (a Rust panic), or
``TypeError``/``ValueError`` (Python's and scikit-learn's conventions for bad arguments). Anything
else — pyo3's ``PanicException``, ``InternalError``, ``IndexError``, ``AttributeError``,
``ZeroDivisionError``, a non-finite bound, an abort or a hang of the interpreter — is a failure.

Run as a script (``python fuzz_cases.py --cases N --seed S``) so that an abort of the interpreter
is seen by the caller (``test_fuzz.py``) instead of killing pytest: before each case the script
prints ``case I KIND`` to stdout (flushed), so the last such line names the case that crashed.
The CI count is small; a longer local run: ``OCCAM_FUZZ_CASES=5000 pytest python/tests/test_fuzz.py``.
"""

import argparse
import math
import pathlib
import random
import re
import sys
import tempfile
import traceback
import warnings

import numpy as np

import occam
from occam.latent import mbpca
from occam.nn import BayesianMLP
from occam.sklearn import BayesianGaussianMixture

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Small example models whose data files sit next to them (a data name is a CSV's stem).
MODELS = [
    "examples/vibes_tutorial/single.occam",
    "examples/vibes_tutorial/mixture.occam",
    "examples/vibes_tutorial/shared_pi_gamma.occam",
    "examples/bayespy/quickstart/quickstart.occam",
    "examples/bayespy/regression/regression.occam",
    "examples/bayespy/bmm/bmm.occam",
    "examples/bayespy/hmm_known/hmm_known.occam",
    "examples/ard_regression/regression.occam",
    "examples/factor_analysis/fa.occam",
    "examples/pca_rotation/pca.occam",
    "examples/lds_rotation/lssm.occam",
    "examples/asia/asia.occam",
]

INTS = [0, 1, 2, 3, -1, 2.5, 1e3, "3", "abc", None, True, 2**31, 2**40, 2**63, 2**64 - 1, 2**64,
        np.int64(2), np.uint64(2**63), float("nan")]
REALS = [0.0, 1e-6, 0.5, 1.0, -1.0, 1e-310, 1e308, -1e308, float("nan"), float("inf"),
         float("-inf"), "abc", None, 1j]
TOKENS = ["~", "=", "[", "]", "(", ")", ",", "over", "plate", "plates", "from", "data", "init",
          "q", "joint", "random", "Gaussian", "Gamma", "Dirichlet", "Categorical", "Wishart",
          "MvGaussian", "dot", "sum", "concat", "0", "-1", "1e308", "nan", "inf", "1e-310",
          "18446744073709551616", "4294967296", "mean", "precision", "\n", "#", "@", "é", "\t",
          "x", "N", "K", "D", "mu", "+", "*"]


class Failure(Exception):
    """A case that broke the contract."""


def allowed(e):
    if isinstance(e, occam.InternalError):
        return False
    return isinstance(e, (occam.OccamError, TypeError, ValueError, Probe))


class Probe(Exception):
    """Raised by a fuzzed callback: must come back to the caller unchanged."""


def finite(x, what):
    if isinstance(x, (float, int, np.floating)) and not math.isfinite(float(x)):
        raise Failure(f"{what} is not finite: {x!r}")


# ---------------------------------------------------------------------------------------------
# Inputs


def load_model(path):
    text = (ROOT / path).read_text()
    data = {}
    for csv in (ROOT / path).parent.glob("*.csv"):
        if re.search(r"\b%s\b" % re.escape(csv.stem), text):
            data[csv.stem] = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
    return text, data


def mutate_text(rng, text):
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        if not text:
            text = rng.choice(TOKENS)
            continue
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.randint(1, 12))
        if op == 0:
            text = text[:i] + text[j:]
        elif op == 1:
            text = text[:i] + " " + rng.choice(TOKENS) + " " + text[i:]
        elif op == 2:
            text = re.sub(r"\d+(\.\d+)?(e-?\d+)?", lambda m: rng.choice(
                [m.group(0), "0", "-1", "1e308", "1e-310", "nan", "1000000000", "2"]), text)
        elif op == 3:
            lines = text.splitlines()
            k = rng.randrange(len(lines))
            lines.insert(k, lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
        elif op == 4:
            lines = text.splitlines()
            rng.shuffle(lines)
            text = "\n".join(lines)
        else:
            text = text[:i] + text[i:j] * rng.randint(2, 4) + text[j:]
    return text


def mutate_array(rng, a):
    a = np.array(a, dtype=np.float64, copy=True)
    op = rng.randrange(16)
    if op == 0 and a.size:
        a.flat[rng.randrange(a.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e308, -1e308, 1e-310])
    elif op == 1:
        a[:] = np.nan
    elif op == 2:
        return a.T
    elif op == 3:
        return a.ravel()
    elif op == 4:
        return a[None]
    elif op == 5:
        return a[:0]
    elif op == 6:
        return a[:1]
    elif op == 7:
        return a.astype(rng.choice([np.float32, np.int8, np.int64, np.uint64, bool, np.complex128]))
    elif op == 8:
        return a.astype(object)
    elif op == 9:
        return a.astype(str)
    elif op == 10:
        return np.ma.masked_array(a, mask=np.random.default_rng(rng.randrange(100)).random(a.shape) < 0.3)
    elif op == 11:
        return a.tolist()
    elif op == 12:
        return a * rng.choice([1e300, -1e300, 1e-300, 0.0])
    elif op == 13:
        return np.asfortranarray(a)[::-1]
    elif op == 14:
        return rng.choice([None, "x.csv", 3.0, {"a": 1}, [[1, "a"]]])
    return a


def settings(rng):
    """Fit settings: each valid small, then one replaced by a fuzzed value."""
    s = dict(seed=rng.randrange(4), max_iter=rng.randint(1, 8), tol=1e-6)
    key = rng.choice(["seed", "restarts", "max_iter", "tol", "prune", "strict", "rotate",
                      "threads", "order", "callback", "settle", None])
    if key in ("seed", "restarts", "threads"):
        s[key] = rng.choice(INTS)
        if key == "restarts" and isinstance(s[key], int) and s[key] > 3:
            s["max_iter"] = 1
    elif key == "max_iter":
        s[key] = rng.choice([v for v in INTS if not (isinstance(v, (int, np.integer))
                                                     and not isinstance(v, bool) and v > 50)])
    elif key == "tol":
        s[key] = rng.choice(REALS)
    elif key in ("prune", "strict", "rotate", "settle"):
        s[key] = rng.choice([True, False, None, 0, 1, "yes"])
    elif key == "order":
        s[key] = rng.choice([[], ["mu"], ["nope"], "mu", [1], ["mu", "mu"], None])
    elif key == "callback":
        mode = rng.randrange(4)

        def cb(i, bound, t, mode=mode):
            if mode == 0:
                return False
            if mode == 1:
                raise Probe("stop")
            return None if mode == 2 else i < 2

        s[key] = rng.choice([cb, 3, "f"])
    return s


# ---------------------------------------------------------------------------------------------
# Cases


def case_model(rng):
    path = rng.choice(MODELS)
    text, data = load_model(path)
    if rng.random() < 0.5:
        text = mutate_text(rng, text)
    if data and rng.random() < 0.6:
        k = rng.choice(sorted(data))
        data[k] = mutate_array(rng, data[k])
    if rng.random() < 0.1:
        data["nope"] = np.zeros((2, 2))
    m = occam.Model.from_string(text, name=path)
    op = rng.randrange(6)
    if op <= 2:
        r = m.fit(data=data, **settings(rng))
        finite(r.bound, "bound")
        for name in list(r.posteriors)[:3]:
            r.posterior(name)
            try:
                r.chain(name)
            except occam.OccamError:
                pass  # not a chain: a documented refusal
        r.summary()
        if rng.random() < 0.2:
            with tempfile.TemporaryDirectory() as d:
                r.write(pathlib.Path(d) / rng.choice(["out", "a/b", ""]),
                        include_data=rng.random() < 0.5)
    elif op == 3:
        plates = {rng.choice(["N", "K", "D", "T", "nope"]): rng.choice(INTS)}
        m.sample(plates=plates, seed=rng.choice(INTS), data=None if rng.random() < 0.5 else data)
    elif op == 4:
        m.check(data)
        m.graph_dot(data)
    else:
        rows = occam.compare([m, m], data=data, priors=rng.choice(
            [None, [1, 1], [0, 0], [-1, 2], [np.nan, 1], [1], [1e308, 1e308]]),
            max_iter=rng.randint(1, 5))
        for row in rows:
            finite(row.result.bound, "bound")


def case_probabilities(rng):
    n = rng.randint(0, 4)
    bounds = [rng.choice([0.0, -1.0, -1e308, 1e308, float("nan"), float("inf"), float("-inf"),
                          -5e3, "a"]) for _ in range(n)]
    priors = rng.choice([None, [1.0] * n, [0.0] * n, [-1.0] * n, [float("nan")] * n, [1.0] * (n + 1)])
    p = occam.probabilities(bounds, priors)
    if not np.all(np.isfinite(p)):
        raise Failure(f"probabilities({bounds}, {priors}) = {p}")


def case_nn(rng):
    n = rng.choice([1, 2, 8, 20])
    g = np.random.default_rng(rng.randrange(1000))
    x = g.normal(size=(n, rng.choice([1, 2])))
    t = np.sin(x[:, 0]) + 0.1 * g.normal(size=n)
    spec = dict(hidden=2, restarts=1, cycles=1, iters_per_cycle=10, pretrain_iters=5)
    key = rng.choice(["hidden", "components", "restarts", "cycles", "iters_per_cycle",
                      "pretrain_iters", "structure_cycles", "committee", "prior", "method",
                      "seed", "data", "unknown"])
    if key == "data":
        if rng.random() < 0.5:
            x = mutate_array(rng, x)
        else:
            t = mutate_array(rng, t)
    elif key == "prior":
        spec[key] = rng.choice(["single", "grouped", "ard", "nrd", "none", 3])
    elif key == "method":
        spec[key] = rng.choice(["vb", "evidence", "early_stopping", "nuts", None])
    elif key == "unknown":
        spec["hiden"] = 2
    else:
        v = rng.choice(INTS)
        # a valid but large count would only make the case slow
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 4 < v < 2**30:
            v = 4
        spec[key] = v
    net = BayesianMLP(**spec).fit(x, t)
    mean = net.predict(x)
    if not np.all(np.isfinite(mean)):
        raise Failure(f"nn predictions not finite with {spec}")
    if net.bound is not None:
        finite(net.bound, "nn bound")


def case_mbpca(rng):
    g = np.random.default_rng(rng.randrange(1000))
    x = g.normal(size=(rng.choice([1, 3, 30]), rng.choice([1, 3])))
    kw = dict(max_k=2, max_iter=20)
    key = rng.choice(["x", "q", "max_k", "start_k", "seed", "max_iter", "tol"])
    if key == "x":
        x = mutate_array(rng, x)
    elif key == "tol":
        kw[key] = rng.choice(REALS)
    else:
        v = rng.choice(INTS)
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 3 < v < 2**30:
            v = 3
        kw[key] = v
    r = mbpca(x, **kw)
    finite(getattr(r, "bound", 0.0), "mbpca bound")


def case_sklearn(rng):
    g = np.random.default_rng(rng.randrange(1000))
    x = np.concatenate([g.normal(size=(20, 2)), g.normal(size=(20, 2)) + 4])
    kw = dict(n_components=3, max_iter=20, random_state=0)
    key = rng.choice(["X", "n_components", "covariance_type", "max_iter", "n_init", "tol",
                      "reg_covar", "init_params", "random_state", "weight_concentration_prior",
                      "mean_precision_prior", "degrees_of_freedom_prior"])
    if key == "X":
        x = mutate_array(rng, x)
    elif key == "covariance_type":
        kw[key] = rng.choice(["full", "diag", "tied", "spherical", "banana", None])
    elif key == "init_params":
        kw[key] = rng.choice(["kmeans", "random", "k-means++", "random_from_data", "x"])
    elif key in ("n_components", "max_iter", "n_init", "random_state"):
        v = rng.choice(INTS)
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 5 < v < 2**30:
            v = 5
        kw[key] = v
    else:
        kw[key] = rng.choice(REALS)
    est = BayesianGaussianMixture(**kw).fit(x)
    finite(est.lower_bound_, "lower_bound_")
    est.predict(x[:3] if hasattr(x, "__getitem__") and np.ndim(x) == 2 else np.zeros((3, 2)))


_NET = []


def case_nn_json(rng):
    """A saved network's JSON, mutated, read back and used."""
    if not _NET:
        x = np.linspace(-1, 1, 12)[:, None]
        _NET.append(BayesianMLP(hidden=2, restarts=1, cycles=1, iters_per_cycle=10,
                                pretrain_iters=5).fit(x, np.sin(3 * x[:, 0])).to_json())
    text = mutate_text(rng, _NET[0])
    net = BayesianMLP.from_json(text)
    mean = net.predict(np.linspace(-1, 1, 5)[:, None])
    if not np.all(np.isfinite(mean)):
        raise Failure("predictions of a read-back network are not finite")


CASES = [case_nn_json, case_model, case_model, case_model, case_probabilities, case_nn, case_mbpca,
         case_sklearn]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    failures = 0
    for i in range(args.cases):
        rng = random.Random(args.seed * 1_000_003 + i)
        case = rng.choice(CASES)
        print(f"case {i} {case.__name__}", flush=True)
        try:
            case(rng)
        except Failure as e:
            print(f"FAIL {i} {case.__name__}: {e}", flush=True)
            failures += 1
        except BaseException as e:  # PanicException derives from BaseException
            if isinstance(e, KeyboardInterrupt):
                raise
            if not allowed(e):
                where = traceback.extract_tb(e.__traceback__)[-1]
                print(f"FAIL {i} {case.__name__}: {type(e).__module__}.{type(e).__name__}: "
                      f"{str(e)[:300]} (at {pathlib.Path(where.filename).name}:{where.lineno})",
                      flush=True)
                failures += 1
    print(f"done {args.cases} cases, {failures} failures", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
