"""The truncated stick-breaking (Dirichlet process) prior: in the model language against closed
forms, and in ``occam.sklearn.BayesianGaussianMixture`` against scikit-learn's
``weight_concentration_prior_type="dirichlet_process"`` on the same data and priors.

Conventions (stated in occam/sklearn.py): Occam truncates as Blei & Jordan (2006), v_K = 1, so
the K weights sum to one and the bound is on the evidence of the K-component model; scikit-learn
keeps a Beta(1 + N_K, α0) last stick (the rest of the stick goes to components beyond K) and
renormalises ``weights_``. Both have sticks q(v_k) = Beta(1 + N_k, α0 + Σ_{j>k} N_j) for k < K.
The components' priors differ as in test_sklearn.py (Occam: mean-field q(μ_k) q(Λ_k) with an
independent mean prior; scikit-learn: Normal–Wishart).
"""

import warnings

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import linear_sum_assignment
from scipy.special import betaln, digamma, gammaln
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture as SkBGM

import occam
from conftest import blobs
from occam.sklearn import BayesianGaussianMixture
from sk_elbo import full_elbo

LABELS = np.array([0, 0, 0, 2, 2, 1, 4, 0, 2, 2, 2, 2, 0, 1, 2, 0, 0, 2], dtype=float)
K = 5


def _log_evidence(alpha, counts):
    """ln p(z | α) under the truncated stick-breaking prior: Σ_{k<K} ln B(1 + N_k, α + Σ_{j>k} N_j)
    − ln B(1, α) (each stick's Beta–Binomial evidence)."""
    tails = np.cumsum(counts[::-1])[::-1]
    return sum(betaln(1 + counts[k], alpha + tails[k + 1]) - betaln(1.0, alpha) for k in range(len(counts) - 1))


def _model(concentration):
    return occam.Model.from_string(
        f"plate K = {K}\nplate N from data z\n{concentration}w ~ StickBreaking(alpha) over K\nz[N] ~ Categorical(w)\n",
        name="sticks.occam")


def test_observed_labels_give_the_exact_evidence_and_sticks():
    # q(v) is exact (conjugate, no latent z): the bound is ln p(z) and the sticks are
    # Beta(1 + N_k, α + Σ_{j>k} N_j) (Blei & Jordan eq. 19).
    alpha = 1.5
    r = _model(f"let alpha = {alpha}\n").fit(data={"z": LABELS}, seed=0)
    counts = np.bincount(LABELS.astype(int), minlength=K).astype(float)
    assert r.bound == pytest.approx(_log_evidence(alpha, counts), abs=1e-10)
    post = r.posterior("w")
    tails = np.cumsum(counts[::-1])[::-1]
    np.testing.assert_allclose(post["stick_a"], 1 + counts[:-1], rtol=1e-12)
    np.testing.assert_allclose(post["stick_b"], alpha + tails[1:], rtol=1e-12)
    # E[π_k] = E[v_k] Π_{j<k} E[1 − v_j].
    a, b = 1 + counts[:-1], alpha + tails[1:]
    mean = np.append(a / (a + b), 1.0) * np.concatenate(([1.0], np.cumprod(b / (a + b))))
    np.testing.assert_allclose(post["mean"], mean, rtol=1e-12)
    # The Dirichlet(α/K) over the same labels has another evidence: the family is not a Dirichlet.
    dirichlet = occam.Model.from_string(
        f"plate K = {K}\nplate N from data z\nw ~ Dirichlet({alpha / K}) over K\nz[N] ~ Categorical(w)\n")
    assert abs(dirichlet.fit(data={"z": LABELS}).bound - r.bound) > 0.5


def _mean_field(alpha_shape, alpha_rate, counts, sweeps=2000):
    """q(v) q(α) by coordinate ascent written out here (Blei & Jordan §4: q(v_k) = Beta(1 + N_k,
    E[α] + Σ_{j>k} N_j), q(α) = Gamma(s + K − 1, r − Σ_k E[ln(1 − v_k)])), and its bound
    E[ln p(z | v)] + E[ln p(v | α)] + E[ln p(α)] − E[ln q(v)] − E[ln q(α)]."""
    k = len(counts)
    tails = np.cumsum(counts[::-1])[::-1]
    shape, rate = alpha_shape + k - 1, alpha_rate
    for _ in range(sweeps):
        a, b = 1 + counts[:-1], shape / rate + tails[1:]
        ln_v, ln_1mv = digamma(a) - digamma(a + b), digamma(b) - digamma(a + b)
        rate = alpha_rate - ln_1mv.sum()
    e_a, e_ln_a = shape / rate, digamma(shape) - np.log(rate)
    ln_pi = np.append(ln_v, 0.0) + np.concatenate(([0.0], np.cumsum(ln_1mv)))
    bound = counts @ ln_pi
    bound += np.sum(e_ln_a + (e_a - 1) * ln_1mv)
    bound += alpha_shape * np.log(alpha_rate) - gammaln(alpha_shape) + (alpha_shape - 1) * e_ln_a - alpha_rate * e_a
    bound -= np.sum((a - 1) * ln_v + (b - 1) * ln_1mv - betaln(a, b))
    bound -= shape * np.log(rate) - gammaln(shape) + (shape - 1) * e_ln_a - rate * e_a
    return bound, (a, b), (shape, rate)


def test_gamma_concentration_reaches_the_mean_field_optimum_below_the_evidence():
    # α ~ Gamma(2, rate 0.5): VMP's q(v) q(α) is the mean-field optimum written out above, and its
    # bound is below the exact ln p(z) (quadrature over α). The gap is what mean field costs here
    # (α and the sticks are correlated a posteriori): 0.17 nats with 18 labels.
    shape, rate = 2.0, 0.5
    r = _model(f"alpha ~ Gamma({shape}, {rate})\n").fit(data={"z": LABELS}, seed=0, tol=1e-14)
    counts = np.bincount(LABELS.astype(int), minlength=K).astype(float)
    bound, (a, b), (q_shape, q_rate) = _mean_field(shape, rate, counts)
    # The bound is flat at the optimum, so the parameters agree to the square root of the stop
    # rule's precision, the bound to the precision itself.
    assert r.bound == pytest.approx(bound, abs=1e-9)
    sticks, q_alpha = r.posterior("w"), r.posterior("alpha")
    np.testing.assert_allclose(sticks["stick_a"], a, rtol=1e-12)
    np.testing.assert_allclose(sticks["stick_b"], b, rtol=1e-6)
    assert q_alpha["shape"] == pytest.approx(q_shape, rel=1e-12)
    assert q_alpha["rate"] == pytest.approx(q_rate, rel=1e-6)

    def integrand(x):
        log_prior = shape * np.log(rate) - gammaln(shape) + (shape - 1) * np.log(x) - rate * x
        return np.exp(log_prior + _log_evidence(x, counts))

    exact = np.log(quad(integrand, 0, np.inf, limit=200, epsabs=0, epsrel=1e-12)[0])
    assert r.bound < exact
    assert exact - r.bound < 0.2, (r.bound, exact)


def _fit_both(X, k, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = BayesianGaussianMixture(n_components=k, max_iter=1000, tol=1e-8, random_state=seed, **kw).fit(X)
        sk = SkBGM(n_components=k, max_iter=1000, tol=1e-8, random_state=seed, reg_covar=0.0, **kw).fit(X)
    return ours, sk


def _stick_tails_hold(a, b, alpha0):
    # b_k = α0 + Σ_{j>k} N_j with N_j = a_j − 1, for the sticks k < K − 1 whose tail is sticks.
    n = a - 1.0
    tails = np.cumsum(n[::-1])[::-1]
    np.testing.assert_allclose(b[:-1], alpha0 + tails[1:], rtol=1e-9)


def _separated(seed):
    """Three clusters 12 sd apart (600, 450 and 300 points): every point's responsibility is 0 or
    1 to 1e-12 in both fits, so the counts N_k do not depend on the order of the sticks, which
    differs between the two fits (each takes its k-means start's order)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [12.0, 0.0], [0.0, 12.0]])
    sizes = [600, 450, 300]
    return np.vstack([c + rng.standard_normal((s, 2)) @ np.diag([1.0, 0.6]) for c, s in zip(centres, sizes)])


def test_dp_mixture_matches_sklearn():
    X = _separated(3)
    k = 6
    # A weak mean prior (β0 = 1e-4) makes the two mean priors' difference negligible.
    ours, sk = _fit_both(X, k, seed=0, weight_concentration_prior_type="dirichlet_process", mean_precision_prior=1e-4)
    assert isinstance(ours.weight_concentration_, tuple) and isinstance(sk.weight_concentration_, tuple)
    (a, b), (sa, sb) = ours.weight_concentration_, sk.weight_concentration_
    assert a.shape == b.shape == sa.shape == sb.shape == (k,)
    alpha0 = 1.0 / k
    assert ours.weight_concentration_prior_ == sk.weight_concentration_prior_ == alpha0
    _stick_tails_hold(a, b, alpha0)
    _stick_tails_hold(sa, sb, alpha0)
    # Occam's last stick is v_K = 1, reported Beta(1 + N_K, 0); scikit-learn's is Beta(1 + N_K, α0).
    assert b[-1] == 0.0 and sb[-1] == alpha0
    # The same occupied components (matched by their means), with the same counts N_k = a_k − 1.
    used, sk_used = np.flatnonzero(a - 1 > 1.0), np.flatnonzero(sa - 1 > 1.0)
    assert used.size == sk_used.size == 3
    cost = ((ours.means_[used][:, None, :] - sk.means_[sk_used][None, :, :]) ** 2).sum(-1)
    rows, cols = linear_sum_assignment(cost)
    mine, theirs = used[rows], sk_used[cols]
    np.testing.assert_allclose(np.sort(a[mine] - 1), [300, 450, 600], atol=1e-6)
    np.testing.assert_allclose(a[mine] - 1, sa[theirs] - 1, atol=1e-6)
    np.testing.assert_allclose(ours.means_[mine], sk.means_[theirs], atol=1e-4)
    # Covariances: mean-field q(μ_k) q(Λ_k) adds E[Λ_k]⁻¹ to the Wishart rate where the
    # Normal–Wishart adds nothing, and has one more degree of freedom: O(1/N_k) apart.
    np.testing.assert_allclose(ours.covariances_[mine], sk.covariances_[theirs], rtol=5e-3, atol=5e-3)
    # E[π_k] = E[v_k] Π_{j<k} E[1 − v_j] from the sticks (v_K = 1), summing to one. Across the
    # two fits the occupied weights agree to O(K/N): each stick's mean carries the prior's one
    # pseudo-count on the side of its own component, whose position differs between the fits.
    mean = np.append(a[:-1] / (a[:-1] + b[:-1]), 1.0) * np.concatenate(([1.0], np.cumprod(b[:-1] / (a[:-1] + b[:-1]))))
    np.testing.assert_allclose(ours.weights_, mean, rtol=1e-12)
    assert ours.weights_.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(ours.weights_[mine], sk.weights_[theirs], atol=k / X.shape[0])
    # The bounds, each complete and under its own model. They differ in the components' priors
    # (the same under either weight prior, as the hard assignments are the same) and in the
    # weights' part, which with hard assignments and the exact q(weights) is the closed-form
    # ln p(z) of each fit's counts in its own order: for the sticks Σ_k ln B(1 + N_k, α0 + Σ_{j>k}
    # N_j) − ln B(1, α0) over k < K (Occam) or k ≤ K (scikit-learn's last stick); for the
    # Dirichlet ln Γ(Kα0) − ln Γ(N + Kα0) + Σ_k ln Γ(N_k + α0) − ln Γ(α0). So the difference of
    # the two gaps is the difference of those closed forms. The order of the sticks matters: each
    # empty stick before an occupied one costs about ln(α0 / N_after).
    ours_dir, sk_dir = _fit_both(X, k, seed=0, weight_concentration_prior_type="dirichlet_distribution",
                                 mean_precision_prior=1e-4)
    sk_full, sk_dir_full = full_elbo(sk, X), full_elbo(sk_dir, X)
    print(f"DP: occam {ours.lower_bound_:.4f} sklearn {sk_full:.4f} (sticks: {a - 1}, {sa - 1}); "
          f"Dirichlet: occam {ours_dir.lower_bound_:.4f} sklearn {sk_dir_full:.4f}")

    def sticks(n, last):
        tails = np.append(np.cumsum(n[::-1])[::-1], 0.0)
        m = len(n) if last else len(n) - 1
        return sum(betaln(1 + n[j], alpha0 + tails[j + 1]) - betaln(1.0, alpha0) for j in range(m))

    def dirichlet(n):
        return gammaln(k * alpha0) - gammaln(n.sum() + k * alpha0) + np.sum(gammaln(n + alpha0) - gammaln(alpha0))

    weights_gap = (sticks(a - 1, last=False) - sticks(sa - 1, last=True)
                   - dirichlet(ours_dir.weight_concentration_ - alpha0)
                   + dirichlet(sk_dir.weight_concentration_ - alpha0))
    bounds_gap = (ours.lower_bound_ - sk_full) - (ours_dir.lower_bound_ - sk_dir_full)
    assert bounds_gap == pytest.approx(weights_gap, abs=1e-4)


@pytest.mark.parametrize("prior_type", ["dirichlet_process", "dirichlet_distribution"])
@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_weight_attributes_are_sklearn_shaped(prior_type, covariance_type):
    X = blobs(600, 3, 3, seed=2)
    k = 5
    ours = BayesianGaussianMixture(n_components=k, covariance_type=covariance_type,
                                   weight_concentration_prior_type=prior_type, random_state=0).fit(X)
    sk = SkBGM(n_components=k, covariance_type=covariance_type, weight_concentration_prior_type=prior_type,
               random_state=0).fit(X)
    assert type(ours.weight_concentration_) is type(sk.weight_concentration_)
    if prior_type == "dirichlet_process":
        assert len(ours.weight_concentration_) == 2
        for mine, theirs in zip(ours.weight_concentration_, sk.weight_concentration_):
            assert mine.shape == theirs.shape == (k,)
    else:
        assert ours.weight_concentration_.shape == sk.weight_concentration_.shape == (k,)
    assert ours.weights_.shape == (k,) and ours.weights_.sum() == pytest.approx(1.0, abs=1e-12)
    p = ours.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    # E[log π] is the one scikit-learn's formula gives from the same weight_concentration_ for
    # every component but the last (whose stick scikit-learn keeps as a Beta).
    if prior_type == "dirichlet_process":
        a, b = ours.weight_concentration_
        psi = digamma(a + b)
        sk_formula = digamma(a) - psi + np.hstack((0, np.cumsum(digamma(b) - psi)[:-1]))
        np.testing.assert_allclose(ours._elog_pi[:-1], sk_formula[:-1], rtol=1e-12)
        assert ours._elog_pi[-1] == pytest.approx(np.sum(digamma(b[:-1]) - psi[:-1]), rel=1e-12)


def test_default_prior_is_the_dirichlet_process():
    assert BayesianGaussianMixture().weight_concentration_prior_type == "dirichlet_process"
    assert SkBGM().weight_concentration_prior_type == "dirichlet_process"
    with pytest.raises(ValueError, match="dirichlet_process"):
        BayesianGaussianMixture(weight_concentration_prior_type="dirichlet").fit(blobs(50, 2, 2, seed=0))


def test_example_dp_mixture_fits_with_sorted_sticks():
    # examples/dp_mixture: a 1-D DP mixture with a Gamma concentration, fitted with --strict (a
    # decreasing bound raises). The pruning stage leaves the occupied sticks first, largest first,
    # and q(α) gains shape K − 1 = 9 (Blei & Jordan §4).
    from conftest import ROOT, load_csv

    model = occam.Model(str(ROOT / "examples" / "dp_mixture" / "mixture.occam"))
    y = load_csv(ROOT / "examples" / "dp_mixture" / "y.csv")[:, 0]
    for seed in (0, 1):
        r = model.fit(data={"y": y}, seed=seed, strict=True)
        counts = np.asarray(r.posterior("w")["stick_a"]) - 1
        used = int(np.sum(counts > 0.5))
        assert used in (2, 3)
        assert np.all(np.diff(counts[:used]) <= 0) and np.all(counts[used:] < 0.5), counts
        assert r.posterior("alpha")["shape"] == pytest.approx(1.0 + 9, rel=1e-12)
