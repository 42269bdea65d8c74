"""A Gamma's random shape (`a ~ Gamma(2, 1)`, `x[N] ~ Gamma(a, 1.5)`): its q is the family
ShapeGamma, not the Gamma written, and the summaries say so — `Posterior.q_family`, the JSON
report's `q_family`, the text summary's `q: ShapeGamma` with mean ± sd — with the mean and sd of
the exact posterior p(a | x) (one latent, so q is exact), computed here by scipy's adaptive
quadrature."""

import numpy as np
from scipy import integrate, special

import occam

MODEL = """plate N = 20
a ~ Gamma(2, 1)
x[N] ~ Gamma(a, 1.5)
observe x
"""


def exact_mean_sd(x):
    def log_joint(a):
        prior = np.log(a) - a  # Gamma(2, 1)
        return prior + np.sum(a * np.log(1.5) - special.gammaln(a) + (a - 1) * np.log(x) - 1.5 * x)

    peak = max(log_joint(a) for a in np.linspace(0.05, 30, 600))
    moment = [integrate.quad(lambda a, k=k: a**k * np.exp(log_joint(a) - peak), 0, 60,
                             epsabs=0, epsrel=1e-12, limit=200)[0] for k in range(3)]
    mean = moment[1] / moment[0]
    return mean, np.sqrt(moment[2] / moment[0] - mean**2)


def test_a_gamma_shape_is_summarised_as_shape_gamma_with_mean_and_sd():
    x = np.random.default_rng(41).gamma(3.0, 1 / 1.5, size=20)
    r = occam.Model.from_string(MODEL).fit(data={"x": x}, tol=0.0, max_iter=50)
    mean, sd = exact_mean_sd(x)
    p = r.posterior("a")
    print(f"a: occam {float(p['mean']):.9f} ± {float(p['sd']):.9f}; exact {mean:.9f} ± {sd:.9f}")
    assert p.distribution == "Gamma"
    assert p.q_family == "ShapeGamma"
    assert "q: ShapeGamma" in repr(p)
    assert abs(float(p["mean"]) - mean) < 1e-6 * mean
    assert abs(float(p["sd"]) - sd) < 1e-6 * sd
    # A Gaussian's (or any variable whose q is the family written) has no q_family.
    assert occam.Model.from_string("plate N = 3\nmu ~ Gaussian(0, 1)\n"
                                   "z[N] ~ Gaussian(mu, 1)\nobserve z\n").fit(
        data={"z": np.array([0.1, 0.2, 0.3])}).posterior("mu").q_family is None

    text = r.summary()
    assert "  a ~ Gamma (latent; q: ShapeGamma, by quadrature)" in text
    assert f"[0] {float(p['mean']):.4f} ± {float(p['sd']):.4f}" in text

    report = r.report()
    a = report["variables"]["a"]
    assert a["distribution"] == "Gamma" and a["q_family"] == "ShapeGamma"
    assert abs(a["parameters"]["sd"][0] - sd) < 1e-6 * sd
    assert "q_family" not in report["variables"]["x"]
