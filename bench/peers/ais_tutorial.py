"""Occam's AIS against nested sampling (UltraNest) on the VIBES tutorial mixture, K = 1, 2, 3 (where
nested sampling converges: the reference) and K = 20 (issue 28's performance point), in the same
run, and the exact evidence at K = 1.

The model is examples/vibes_tutorial/mixture.occam written out here, the mixture index summed out:
    pi ~ Dirichlet(0.001, ..., 0.001) (K = 20),
    mu_kd ~ N(0, 1/0.01),  gamma_kd ~ Gamma(shape 0.001, rate 0.001)   (k = 1..K, d = 1, 2),
    ln p(D | theta) = sum_i ln sum_k pi_k prod_d N(x_id; mu_kd, 1/gamma_kd).
The prior transform maps the unit cube (K + 4K dimensions: K Gamma(0.001) draws normalised to
pi, then gamma, then mu) onto that prior. A Gamma(0.001) quantile underflows a double for most of
the cube (the median of Gamma(0.001, 1) is about 2^-1000), so both the weights and the
precisions are carried as logarithms: ln G(u) = (ln u + ln Gamma(a + 1)) / a where the leading
term of the lower incomplete Gamma function, u = x^a / Gamma(a + 1), holds to double precision
(x < 1e-8 here), scipy's inverse incomplete Gamma function elsewhere. Its ln Z is then
ln p(D | K) over the whole prior, every relabelled mode included, as Occam's methods define it.
Transform and likelihood are vectorised over batches of points (one matrix product per batch).

0. The exact ln p(D | K = 1) and the information H = KL(posterior || prior) by 1-D quadrature
   (function exact_k1; three rules must agree to 1e-9 nats).
1. Occam at K = 1, 2, 3: `compare --plate K=1,2,3 --method vb,is,ais` (one process, one slot).
2. UltraNest 4.6.3 at each of K = 1, 2, 3 in a child process under one slot (--one-slot, e.g.
   /work/bin/cslot; one BLAS thread): a static run (no improvement loops) of nlive live points
   with its vectorised population slice sampler (max(10, ndim) steps along the region's principal
   axes), stopped when the live points hold < frac_remain of Z (remaining dlogz < 0.01 by
   default) or by --small-max-ncalls. The table gives AIS - NS and IS - NS in units of their
   combined standard error (UltraNest's logzerr: bootstrap and tail), and NS's CPU against the
   seconds of Occam's is and ais.
3. Occam at K = 20: `compare --method vb,ais` (1,000 temperatures, 64 chains: the defaults) with
   the release binary, wall and CPU time of the process (CPU of both cores: ≈ 2 × wall when the
   chains run on both). On the shared development machine run it with both build slots held:
   --both-slots "flock /work/.slot-1 flock /work/.slot-2".
   At K >= 2 an independent estimate (is_at_map: importance sampling with a t proposal at the MAP,
   + ln K!) decides between them: on 2026-12-01 UltraNest converged by its own criterion to
   values 10 to 260 nats too low at K = 2, 3 (with --repartition or without; see
   bench/results/ais_tutorial_2026-12-01_0331utc.txt), so it is a reference at K = 1 only.
4. UltraNest at K = 20 capped by --max-ncalls (it does not converge in minutes there): what it
   reached, its compression (iterations / nlive nats of ln X) and rate.

Needs the peers venv (bench/peers/setup.sh: dynesty 3.1.0, ultranest 4.6.3) and a release build:
    cargo build --release -p occam-cli
    bench/peers/.venv/bin/python bench/peers/ais_tutorial.py --occam target/release/occam
(--exact-only prints step 0 alone, in a tenth of a second.)
"""

import argparse
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import time

import numpy as np
from scipy import integrate, optimize
from scipy.special import gammaincinv, gammaln, logsumexp, ndtri

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "vibes_tutorial")
K = 20
ALPHA, MU_PRECISION, SHAPE, RATE = 0.001, 0.01, 0.001, 0.001
LN2PI = np.log(2.0 * np.pi)


def load_x():
    return np.loadtxt(os.path.join(EXAMPLE, "x.csv"), delimiter=",", skiprows=1)


def ln_gamma_quantile(u, a):
    """ln of the Gamma(a, 1) quantile of u (any shape), exact where the quantile itself underflows."""
    u = np.clip(u, 1e-300, 1.0 - 1e-16)
    small = (np.log(u) + gammaln(a + 1.0)) / a
    tiny = small < np.log(1e-8)
    out = np.where(tiny, small, 0.0)
    out[~tiny] = np.log(gammaincinv(a, u[~tiny]))
    return out


def ln_gamma_density_log(t, a, b):
    """ln density of t = ln g for g ~ Gamma(shape a, rate b)."""
    return a * np.log(b) - gammaln(a) + a * t - b * np.exp(t)


# Broad companions of the repartitioned prior (see make_model): the weights' Gamma draws get an
# Exp(1) beside Gamma(0.001, 1); the precisions a log-normal, ln g ~ N(0, 3^2), beside
# Gamma(0.001, 0.001).
LN_TAU_SD = 3.0


def make_model(x, K=K, repartition=False):
    """The prior transform and the log-likelihood, both vectorised over rows of points: u and theta
    are (m, ndim). theta = (ln G (K), ln gamma (K × d), mu (K × d)) with pi = G / sum G, G_k iid
    Gamma(0.001, 1) (that is pi ~ Dirichlet(0.001)); the likelihood is one matrix product per
    batch: sum_d ln N(x_d; mu_kd, 1/gamma_kd) = [x^2, x] . [-gamma/2, gamma mu] + const_k.

    repartition: nested sampling over the prior p' = (p + r) / 2 per coordinate (ln G_k and
    ln gamma_kd; r broad and proper, LN_TAU_SD) with the likelihood L p / p', so that L p and
    hence Z are unchanged (posterior repartitioning, Chen, Feroz & Hobson 2019). p / p' <= 2.
    Under Gamma(0.001) the components that help (weight and precision in the data's range) hold
    an exponentially small share of the prior, and a sampler started from it stays with one
    component (see the results file of 2026-12-01 03:31); under p' they hold about a quarter."""
    n, d = x.shape
    x2 = np.hstack([x * x, x])  # n × 2d
    nw, nt = K, K * d
    ln_half = np.log(0.5)

    def prior_transform(u):
        u = np.atleast_2d(u)
        uw, ut, um = u[:, :nw], u[:, nw : nw + nt], u[:, nw + nt :]
        if repartition:
            lo_w, lo_t = uw < 0.5, ut < 0.5
            ln_g = np.where(lo_w, 0.0, np.log(-np.log1p(-np.clip(2.0 * uw - 1.0, 1e-300, 1.0 - 1e-16))))
            ln_g[lo_w] = ln_gamma_quantile(2.0 * uw[lo_w], ALPHA)
            ln_tau = np.where(lo_t, 0.0, LN_TAU_SD * ndtri(np.clip(2.0 * ut - 1.0, 1e-300, 1.0 - 1e-16)))
            ln_tau[lo_t] = ln_gamma_quantile(2.0 * ut[lo_t], SHAPE) - np.log(RATE)
        else:
            ln_g = ln_gamma_quantile(uw, ALPHA)
            ln_tau = ln_gamma_quantile(ut, SHAPE) - np.log(RATE)
        mu = ndtri(um) / np.sqrt(MU_PRECISION)
        return np.concatenate([ln_g, ln_tau, mu], axis=1)

    def ln_p_over_p_prime(ln_p, ln_r):
        return ln_p - np.logaddexp(ln_half + ln_p, ln_half + ln_r)

    def loglike(theta):
        theta = np.atleast_2d(theta)
        m = theta.shape[0]
        ln_g = theta[:, :K]
        ln_pi = ln_g - logsumexp(ln_g, axis=1, keepdims=True)
        ln_tau = theta[:, K : K + K * d].reshape(m, K, d)
        mu = theta[:, K + K * d :].reshape(m, K, d)
        tau = np.exp(ln_tau)
        w = np.concatenate([-0.5 * tau, tau * mu], axis=2).reshape(m * K, 2 * d)
        const = ln_pi + (0.5 * (ln_tau - LN2PI) - 0.5 * tau * mu * mu).sum(axis=2)  # m × K
        lg = (w @ x2.T).reshape(m, K, n) + const[:, :, None]
        if K == 1:
            v = lg[:, 0, :].sum(axis=1)
        else:
            top = lg.max(axis=1)
            lg -= top[:, None, :]
            np.exp(lg, out=lg)
            v = (np.log(lg.sum(axis=1)) + top).sum(axis=1)
        if repartition:
            lt = ln_tau.reshape(m, K * d)
            v = v + ln_p_over_p_prime(ln_gamma_density_log(ln_g, ALPHA, 1.0), ln_g - np.exp(ln_g)).sum(axis=1)
            ln_r = -0.5 * np.log(2.0 * np.pi * LN_TAU_SD**2) - 0.5 * (lt / LN_TAU_SD) ** 2
            v = v + ln_p_over_p_prime(ln_gamma_density_log(lt, SHAPE, RATE), ln_r).sum(axis=1)
        return np.where(np.isfinite(v), v, -1e300)

    return prior_transform, loglike, K + 2 * K * d


def exact_k1(x):
    """ln p(D | K = 1) by quadrature, and the information H = KL(posterior || prior) in nats.

    With one component the weight is 1 and the evidence factorises over the dimensions. Given the
    precision g, the mean integrates out: x_d ~ N(0, I/g + 11'/lambda), whose determinant is
    g^-N (1 + N g / lambda) and whose inverse is g I - g^2 11' / (lambda + N g), so
        ln p(x_d | g) = -N/2 ln 2 pi + N/2 ln g - 1/2 ln(1 + N g / lambda)
                        - g/2 (S - g T^2 / (lambda + N g)),   S = sum x^2, T = sum x,
    and p(x_d) is the integral of that against the Gamma(a, b) prior over t = ln g (prior density
    b^a / Gamma(a) e^(a t - b e^t)). The integrand is a peak of width ~ (2/N)^(1/2) in t: two rules
    (QUADPACK's adaptive Gauss–Kronrod over t* ± 3 and over [-50, 30] with the peak as a break
    point, and 200-point Gauss–Legendre over t* ± 3) must agree to 1e-9 nats. H per dimension is
    E_post[ln L] - ln p(x_d), with E over mu | g Gaussian: mean g T v, variance v = 1/(lambda + N g)."""
    n = len(x)
    a, b, lam = SHAPE, RATE, MU_PRECISION
    out = {"ln_z": 0.0, "h": 0.0, "rule_gap": 0.0, "dims": []}
    nodes, weights = np.polynomial.legendre.leggauss(200)
    for xd in x.T:
        s, t_sum = float(xd @ xd), float(xd.sum())

        def f(t):
            g = np.exp(t)
            ll = (-0.5 * n * LN2PI + 0.5 * n * t - 0.5 * np.log1p(n * g / lam)
                  - 0.5 * g * (s - g * t_sum * t_sum / (lam + n * g)))
            return ll + a * np.log(b) - gammaln(a) + a * t - b * g

        peak = optimize.minimize_scalar(lambda t: -f(t), bracket=(-5.0, 5.0), tol=1e-12)
        ts, fs = float(peak.x), float(-peak.fun)

        def g_(t):
            return np.exp(f(t) - fs)

        q_gk, _ = integrate.quad(g_, ts - 3, ts + 3, epsabs=1e-14, epsrel=1e-13, limit=200)
        q_wide, _ = integrate.quad(g_, -50.0, 30.0, points=[ts], epsabs=1e-14, epsrel=1e-13, limit=500)
        q_gl = float((3.0 * weights * g_(ts + 3.0 * nodes)).sum())
        ln_zd = fs + np.log(q_gk)
        gap = max(abs(np.log(q_wide / q_gk)), abs(np.log(q_gl / q_gk)))
        if gap > 1e-9:
            raise RuntimeError(f"exact_k1: quadrature rules disagree by {gap:.2e} nats")

        def eloglik(t):
            g = np.exp(t)
            v = 1.0 / (lam + n * g)
            m = g * t_sum * v
            return -0.5 * n * LN2PI + 0.5 * n * t - 0.5 * g * (float(((xd - m) ** 2).sum()) + n * v)

        el, _ = integrate.quad(lambda t: g_(t) * eloglik(t), ts - 3, ts + 3, epsabs=1e-12, epsrel=1e-13, limit=200)
        h = el / q_gk - ln_zd
        out["ln_z"] += ln_zd
        out["h"] += h
        out["rule_gap"] = max(out["rule_gap"], gap)
        out["dims"].append({"ln_z": ln_zd, "h": h, "ln_gamma_mode": ts})
    return out


def run_occam(occam, seed, temperatures, chains, wrapper, methods="vb,ais", plate=None):
    # The wall and CPU time of the process are measured inside the wrapper (which may wait for
    # locks first) by GNU time. Returns one dict of methods per model (per plate size).
    cmd = wrapper + [
        "/usr/bin/time", "-f", "OCCAM_TIME %e %U %S", occam, "compare", os.path.join(EXAMPLE, "mixture.occam"),
        "--data", "x=" + os.path.join(EXAMPLE, "x.csv"),
        "--method", methods, "--temperatures", str(temperatures), "--chains", str(chains),
        "--seed", str(seed), "--json",
    ] + (["--plate", plate] if plate else [])
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    line = [l for l in run.stderr.splitlines() if l.startswith("OCCAM_TIME ")][-1].split()
    seconds, cpu = float(line[1]), float(line[2]) + float(line[3])
    doc = json.loads(run.stdout)
    models = []
    for m in doc["models"]:
        rows = {}
        for e in m["evidence"]:
            rows[e["method"]] = {
                "log_evidence": e.get("log_evidence"), "se": e.get("se"), "ess": e.get("ess"),
                "seconds": e.get("seconds"), "note": e.get("note"),
            }
        models.append(rows)
    return models, seconds, cpu


def is_at_map(x, k, draws, seed):
    """An estimate independent of Occam and of nested sampling: importance sampling of one of the
    K! relabelled modes with a multivariate t (5 degrees of freedom) at the MAP, scale the inverse
    of the negative Hessian (central differences), plus ln K! for the others (the modes are
    separated at N = 500). theta = (s, ln gamma, mu) with pi = softmax(s, 0), whose prior density
    under Dirichlet(a) is Gamma(K a) / Gamma(a)^K prod_k pi_k^a (the softmax's Jacobian is
    prod_k pi_k); the MAP is found by BFGS from scikit-learn's diagonal GaussianMixture."""
    from scipy import stats
    from sklearn.mixture import GaussianMixture

    n, d = x.shape

    def ln_post(th):
        th = np.atleast_2d(th)
        m = th.shape[0]
        s = np.concatenate([th[:, : k - 1], np.zeros((m, 1))], axis=1)
        ln_pi = s - logsumexp(s, axis=1, keepdims=True)
        lt = th[:, k - 1 : k - 1 + k * d].reshape(m, k, d)
        mu = th[:, k - 1 + k * d :].reshape(m, k, d)
        tau = np.exp(lt)
        lg = ln_pi[:, :, None] + (0.5 * (lt - LN2PI)).sum(axis=2)[:, :, None] - 0.5 * (
            tau[:, :, None, :] * (x[None, None] - mu[:, :, None, :]) ** 2).sum(axis=3)
        ll = logsumexp(lg, axis=1).sum(axis=1)
        lp = gammaln(k * ALPHA) - k * gammaln(ALPHA) + ALPHA * ln_pi.sum(axis=1)
        lp += (SHAPE * np.log(RATE) - gammaln(SHAPE) + SHAPE * lt - RATE * tau).sum(axis=(1, 2))
        lp += (0.5 * np.log(MU_PRECISION) - 0.5 * LN2PI - 0.5 * MU_PRECISION * mu * mu).sum(axis=(1, 2))
        return ll + lp

    g = GaussianMixture(k, covariance_type="diag", n_init=5, random_state=seed).fit(x)
    lw0 = np.log(g.weights_)
    th0 = np.concatenate([lw0[:-1] - lw0[-1], -np.log(g.covariances_).ravel(), g.means_.ravel()])
    opt = optimize.minimize(lambda t: -ln_post(t)[0], th0, method="BFGS", options={"gtol": 1e-8})
    m, dim, h = opt.x, len(opt.x), 1e-4
    hess = np.empty((dim, dim))
    e = np.eye(dim) * h
    for i in range(dim):
        for j in range(dim):
            hess[i, j] = (ln_post(m + e[i] + e[j]) - ln_post(m + e[i] - e[j]) - ln_post(m - e[i] + e[j])
                          + ln_post(m - e[i] - e[j]))[0] / (4 * h * h)
    prop = stats.multivariate_t(loc=m, shape=np.linalg.inv(-hess), df=5, seed=seed)
    th = prop.rvs(size=draws)
    lw = ln_post(th) - prop.logpdf(th)
    ln_z = float(logsumexp(lw) - np.log(draws))
    w = np.exp(lw - ln_z)
    return {"k": k, "ln_z": ln_z + float(gammaln(k + 1)), "se": float(np.sqrt(w.var() / draws)),
            "ess": float(w.sum() ** 2 / (w * w).sum()), "draws": draws}


class _Remainder(logging.Handler):
    """Keeps the last status UltraNest logs: iteration, ln Z of the dead points and the live points'
    maximum ln L, from which the remaining dlogz is ln(1 + Lmax X / Z) with ln X = -iteration / nlive
    (the upper estimate nested samplers stop on); and the trajectory (iteration, the live points'
    minimum and maximum ln L, this process's CPU seconds) of every status."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.status = None
        self.trajectory = []

    def emit(self, record):
        msg = record.getMessage()
        m = re.search(r"iteration=(\d+),.*logz=([0-9.eE+-]+),.*Lmax=([0-9.eE+-]+)", msg)
        if m:
            self.status = (int(m.group(1)), float(m.group(2)), float(m.group(3)))
            lmin = re.search(r"Lmin=([0-9.eE+-]+)", msg)
            self.trajectory.append((self.status[0], float(lmin.group(1)) if lmin else float("nan"), self.status[2],
                                    time.process_time()))

    def remaining_dlogz(self, nlive):
        if self.status is None:
            return float("nan")
        it, logz, lmax = self.status
        return float(np.logaddexp(0.0, lmax - it / nlive - logz))


def run_ultranest(k, nlive, nsteps, seed, frac_remain, max_ncalls, repartition=False, max_cpu=None):
    """UltraNest's static run (no improvement loops) with its vectorised population slice sampler
    (directions along the region's principal axes); it stops when the live points hold less than
    frac_remain of Z (remaining dlogz = -ln(1 - frac_remain)), after max_ncalls likelihood calls or
    after max_cpu seconds of this process's CPU time (then, as at max_ncalls, no new points are
    drawn and the live points are added to Z). numpy's global generator seeds it; the child runs
    with one BLAS thread."""
    import ultranest
    import ultranest.popstepsampler as ps

    class Capped(ultranest.ReactiveNestedSampler):
        """Stops replacing live points once the CPU cap is reached: the same path UltraNest takes at
        max_ncalls (its _should_node_be_expanded returns False; the run then sums the live points)."""

        cpu_start, cpu_cap, capped = 0.0, None, False

        def _should_node_be_expanded(self, it, *rest):
            if it > 0 and self.cpu_cap is not None and time.process_time() - self.cpu_start >= self.cpu_cap:
                self.capped = True
                return False
            return super()._should_node_be_expanded(it, *rest)

    prior_transform, loglike, ndim = make_model(load_x(), k, repartition)
    np.random.seed(seed)
    rem = _Remainder()
    logger = logging.getLogger("ultranest")
    logger.addHandler(rem)  # before UltraNest's own set-up, which then adds no stdout handler
    logger.setLevel(logging.DEBUG)
    t0, c0 = time.perf_counter(), time.process_time()
    sampler = Capped(
        [f"p{i}" for i in range(ndim)], loglike, prior_transform, vectorized=True, ndraw_min=128, ndraw_max=4096,
    )
    sampler.cpu_start, sampler.cpu_cap = c0, max_cpu
    sampler.stepsampler = ps.PopulationSliceSampler(
        popsize=128, nsteps=nsteps, generate_direction=ps.generate_region_oriented_direction,
    )
    res = sampler.run(
        min_num_live_points=nlive, frac_remain=frac_remain, dlogz=0.5, min_ess=0, max_num_improvement_loops=0,
        max_ncalls=max_ncalls, log_interval=10, show_status=False, viz_callback=False,
    )
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    calls = int(res["ncall"])
    converged = bool((max_ncalls is None or calls < max_ncalls) and not sampler.capped)
    # the status is logged every 10 iterations: when UltraNest stopped on frac_remain, its own
    # criterion bounds the remainder (-ln(1 - frac_remain)); otherwise the last status tells it
    remaining = float(-np.log1p(-frac_remain)) if converged else rem.remaining_dlogz(nlive)
    return {
        "k": k, "ndim": ndim, "nlive": nlive, "nsteps": nsteps, "repartition": repartition, "logz": float(res["logz"]),
        "logzerr": float(res["logzerr"]), "h": float(res["H"]), "h_err": float(res["Herr"]),
        "calls": calls, "iterations": int(res["niter"]), "remaining_dlogz": remaining,
        "converged": converged,
        "stopped": "frac_remain" if converged else ("cpu_cap" if sampler.capped else "max_ncalls"),
        "max_cpu": max_cpu,
        "max_logl": float(res["maximum_likelihood"]["logl"]), "seconds": seconds, "cpu_seconds": cpu,
        "calls_per_cpu_second": calls / cpu,
        # the last status logged during the run (every 10 iterations), before the live points are
        # summed at the end: iteration, ln Z of the dead points, the live points' maximum ln L
        "status": None if rem.status is None else
        {"iteration": rem.status[0], "logz_dead": rem.status[1], "lmax_live": rem.status[2]},
        # (iteration, live min ln L, live max ln L, CPU s since the start), about 200 of the statuses
        "trajectory": [(it, lo, hi, c - c0) for it, lo, hi, c in rem.trajectory[:: max(1, len(rem.trajectory) // 200)]]
        + [(it, lo, hi, c - c0) for it, lo, hi, c in rem.trajectory[-1:]],
    }


def information_estimate(occam, ln_z):
    """The information H = KL(posterior || prior) = E_post[ln p(D | theta)] - ln p(D) at K = 20,
    estimated from Occam's VB fit: by Jensen over the index z, ln p(D | theta) >= E_q(z)[ln p(D | z,
    theta) + ln p(z | pi) - ln q(z)], whose mean under q(theta) is the sum of the fit's bound terms of
    x and lambda (`occam fit --json`, node_bounds); q(theta) stands in for the posterior (one of its
    relabelled modes; ln p(D | theta) is the same on each). So H ~ that sum - ln Z (ln Z: ais)."""
    run = subprocess.run([occam, "fit", os.path.join(EXAMPLE, "mixture.occam"), "--data",
                          "x=" + os.path.join(EXAMPLE, "x.csv"), "--json"], check=True, capture_output=True, text=True)
    nb = json.loads(run.stdout)["node_bounds"]
    e_lik = nb["x"] + nb["lambda"]
    return {"e_q_ln_lik_at_least": e_lik, "node_bounds": nb, "h": e_lik - ln_z}


def projection(ns, ln_z_ref, frac_remain, h_est):
    """What a capped run still needed. A lower bound: UltraNest stops when the live points' share of
    Z, 1 / (1 + Z / (Lmax X)), falls below frac_remain, that is when ln X < ln Z - ln Lmax +
    ln(frac_remain / (1 - frac_remain)), with X the remaining prior volume, ln X = -iterations /
    nlive, and Lmax the live points' largest likelihood, which never decreases. With ln Z at the
    stop no higher than ln_z_ref (Occam's ais), the run needs at least nlive (ln Lmax_now -
    ln_z_ref + ln((1 - frac_remain) / frac_remain)) iterations: trivial (no more) while its best
    likelihood is still below the evidence. The projection: nested sampling reaches the bulk of
    the posterior's mass at ln X ~ -H (Skilling 2006), so it needs about nlive H iterations before
    its tail, H from information_estimate; at the rate of iterations per CPU second so far (which
    falls as the region shrinks) that is the CPU time it needs at least, if H is right."""
    st = ns.get("status")
    if st is None:
        return None
    it, lmax = st["iteration"], st["lmax_live"]
    need = ns["nlive"] * (lmax - ln_z_ref + np.log((1.0 - frac_remain) / frac_remain))
    rate = it / ns["cpu_seconds"]
    bulk = ns["nlive"] * h_est["h"]
    return {"iterations_done": it, "lmax_live": lmax, "ln_z_ref": ln_z_ref, "iterations_needed_at_least": need,
            "iterations_per_cpu_second": rate, "more_cpu_seconds_at_least": max(0.0, need - it) / rate,
            "compressed_nats": it / ns["nlive"], "needed_nats_at_least": need / ns["nlive"],
            "h_estimate": h_est, "iterations_to_bulk": bulk, "more_cpu_seconds_to_bulk": max(0.0, bulk - it) / rate}


def projection_lines(prior, pr):
    return [
        f"  K = 20 ({prior}) at the cap: {pr['iterations_done']} iterations, ln X = -{pr['compressed_nats']:.1f} "
        f"(iterations / nlive), live max ln L {pr['lmax_live']:.2f}, {pr['iterations_per_cpu_second']:.2f} iterations "
        f"per CPU s. Its stopping rule with ln Z <= ais's {pr['ln_z_ref']:.2f}: "
        + ("no bound yet (its best ln L is below that ln Z)" if pr["iterations_needed_at_least"] <= pr["iterations_done"]
           else f"ln X < -{pr['needed_nats_at_least']:.1f}, at least {pr['iterations_needed_at_least']:.0f} iterations"),
        f"  projection: H ~ {pr['h_estimate']['h']:.1f} nats (VB's E_q[ln p(D | theta)] >= "
        f"{pr['h_estimate']['e_q_ln_lik_at_least']:.2f}, minus ais's ln Z), so the posterior's bulk lies at ln X ~ "
        f"-{pr['h_estimate']['h']:.0f}: about nlive H = {pr['iterations_to_bulk']:.0f} iterations, "
        f"{pr['more_cpu_seconds_to_bulk']:.0f} more CPU s ({pr['more_cpu_seconds_to_bulk'] / 3600:.1f} h) at the rate "
        f"so far, which falls as the region shrinks",
    ]


def nsteps_for(ndim):
    return max(10, ndim)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--occam", default=os.path.join(ROOT, "target", "release", "occam"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperatures", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=64)
    ap.add_argument("--nlive", type=int, default=400)
    ap.add_argument("--frac-remain", type=float, default=0.01)
    ap.add_argument("--small-max-ncalls", type=int, default=8_000_000, help="cap per K at K = 1, 2, 3")
    ap.add_argument("--max-ncalls", type=int, default=None, help="cap of likelihood calls at K = 20")
    ap.add_argument("--both-slots", default="", help="command prefix for the timed Occam run")
    ap.add_argument("--one-slot", default="", help="command prefix for the nested-sampling child process")
    ap.add_argument("--small-k", default="1,2,3", help="sizes where nested sampling is the reference ('' for none)")
    ap.add_argument("--k", type=int, default=K, help=argparse.SUPPRESS)
    ap.add_argument("--ns-only", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ns-max-ncalls", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ns-max-cpu", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--max-cpu", type=float, default=1200.0,
                    help="CPU cap in seconds of each nested-sampling run at K = 20 (besides --max-ncalls)")
    ap.add_argument("--k20-priors", default="plain",
                    help="nested sampling at K = 20 on these priors, in turn: plain (the model's), repartition")
    ap.add_argument("--repartition", action="store_true",
                    help="nested sampling over the repartitioned prior (make_model): the same Z")
    ap.add_argument("--exact-only", action="store_true", help="print the exact K = 1 evidence and H, then stop")
    ap.add_argument("--json", default=None, help="also write the results as JSON here")
    ap.add_argument("--reproject", default=None,
                    help="print the K = 20 projections of a saved --json run (H from --occam's fit) and stop")
    a = ap.parse_args()

    if a.ns_only:
        _, _, ndim = make_model(load_x()[:1], a.k)
        r = run_ultranest(a.k, a.nlive, nsteps_for(ndim), a.seed, a.frac_remain, a.ns_max_ncalls, a.repartition,
                          a.ns_max_cpu)
        with open(a.ns_only, "w") as f:
            json.dump(r, f)
        return

    if a.reproject:
        with open(a.reproject) as f:
            saved = json.load(f)
        ln_z = saved["occam"]["ais"]["log_evidence"]
        for ns in saved["ultranest"]:
            if not ns["converged"]:
                pr = projection(ns, ln_z, a.frac_remain, information_estimate(a.occam, ln_z))
                print("\n".join(projection_lines("repartition" if ns["repartition"] else "plain", pr)))
        return

    x = load_x()
    t0 = time.process_time()
    ex = exact_k1(x)
    print(f"exact K = 1 (quadrature over ln gamma per dimension, three rules within {ex['rule_gap']:.1e} nats): "
          f"ln p(D) = {ex['ln_z']:.6f}, H = {ex['h']:.4f} nats "
          f"({' + '.join('%.6f' % dd['ln_z'] for dd in ex['dims'])}), {time.process_time() - t0:.2f} s CPU", flush=True)
    if a.exact_only:
        return

    def ns_child(k, max_ncalls, repartition=a.repartition, max_cpu=None):
        tmp = os.path.join(HERE, f".ais_tutorial_ns_{os.getpid()}_{k}.json")
        cmd = shlex.split(a.one_slot) + [
            sys.executable, os.path.abspath(__file__), "--ns-only", tmp, "--seed", str(a.seed),
            "--nlive", str(a.nlive), "--frac-remain", str(a.frac_remain), "--k", str(k),
        ] + (["--ns-max-ncalls", str(max_ncalls)] if max_ncalls else []) + (
            ["--ns-max-cpu", str(max_cpu)] if max_cpu else []) + (["--repartition"] if repartition else [])
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        try:
            subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
            with open(tmp) as f:
                return json.load(f)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def ns_line(r):
        rem = (f"remaining dlogz <= {r['remaining_dlogz']:.3g} (converged)" if r["converged"]
               else f"remaining dlogz {r['remaining_dlogz']:.3g} (NOT converged)")
        return (f"ultranest K = {r['k']} ({'repartitioned prior, ' if r['repartition'] else ''}nlive {r['nlive']}, "
                f"{r['ndim']} dimensions, population slice sampler, "
                f"{r['nsteps']} steps): ln Z {r['logz']:.2f} ± {r['logzerr']:.2f}, H {r['h']:.1f} ± {r['h_err']:.1f} nats, "
                f"{r['iterations']} iterations (nlive·H = {r['nlive'] * r['h']:.0f}), {r['calls']} likelihood calls "
                f"({r['calls_per_cpu_second']:.0f} per CPU s), stopped by {r['stopped']}, {rem}, "
                f"max ln L {r['max_logl']:.2f}, wall {r['seconds']:.1f} s, CPU {r['cpu_seconds']:.1f} s")

    def z(d, se):
        return d / se if se > 0 else float("nan")

    # The results so far, written (atomically) after each step, so a run stopped early keeps them.
    done = {"exact_k1": ex}

    def save():
        if a.json:
            with open(a.json + ".tmp", "w") as f:
                json.dump(done, f, indent=1)
            os.replace(a.json + ".tmp", a.json)

    save()
    small, small_time = {}, None
    if a.small_k:
        ks = [int(v) for v in a.small_k.split(",")]
        models, s_s, s_cpu = run_occam(a.occam, a.seed, a.temperatures, a.chains, shlex.split(a.one_slot),
                                       "vb,is,ais", "K=" + ",".join(map(str, ks)))
        small_time = {"seconds": s_s, "cpu_seconds": s_cpu}
        print(f"VIBES tutorial mixture, K = {a.small_k}, N = {len(x)}; seed {a.seed}")
        print(f"occam compare --plate K={a.small_k} --method vb,is,ais ({a.chains} chains × "
              f"{a.temperatures} temperatures), one process under one slot: wall {s_s:.2f} s, CPU {s_cpu:.2f} s",
              flush=True)
        for k, rows in zip(ks, models):
            ns = ns_child(k, a.small_max_ncalls)
            small[k] = {"occam": rows, "ultranest": ns}
            done["small"] = small
            save()
            print(ns_line(ns), flush=True)
        print()
        print("K | vb (bound) | is ± se (ESS) | ais ± se (ESS) | is + ais s | NS ln Z ± err | NS CPU s | "
              "AIS − NS (z) | IS − NS (z) | NS CPU / (IS + AIS) s")
        print("---|---|---|---|---|---|---|---|---|---")
        for k in ks:
            r, ns = small[k]["occam"], small[k]["ultranest"]
            vb, is_, ais = r["vb"], r["is"], r["ais"]
            d_ais, d_is = ais["log_evidence"] - ns["logz"], is_["log_evidence"] - ns["logz"]
            z_ais = z(d_ais, float(np.hypot(ais["se"], ns["logzerr"])))
            z_is = z(d_is, float(np.hypot(is_["se"], ns["logzerr"])))
            occ_s = is_["seconds"] + ais["seconds"]
            print(f"{k} | {vb['log_evidence']:.2f} | {is_['log_evidence']:.2f} ± {is_['se']:.2f} ({is_['ess']:.0f}) | "
                  f"{ais['log_evidence']:.2f} ± {ais['se']:.2f} ({ais['ess']:.1f}) | {occ_s:.2f} | "
                  f"{ns['logz']:.2f} ± {ns['logzerr']:.2f}{'' if ns['converged'] else ' (NOT converged)'} | "
                  f"{ns['cpu_seconds']:.1f} | {d_ais:+.2f} ({z_ais:+.1f}) | {d_is:+.2f} ({z_is:+.1f}) | "
                  f"{ns['cpu_seconds'] / occ_s:.0f}")
            small[k].update({"ais_minus_ns": d_ais, "ais_z": z_ais, "is_minus_ns": d_is, "is_z": z_is})
        for k in ks:
            if k >= 2:
                c0 = time.process_time()
                chk = is_at_map(x, k, 200_000, a.seed)
                small[k]["is_at_map"] = chk
                r = small[k]["occam"]
                print(f"K = {k} independent check (is_at_map: t proposal at the MAP, {chk['draws']} draws, + ln {k}!): "
                      f"{chk['ln_z']:.3f} ± {chk['se']:.3f} (ESS {chk['ess']:.0f}), {time.process_time() - c0:.1f} s CPU; "
                      f"Occam is {r['is']['log_evidence'] - chk['ln_z']:+.3f}, ais {r['ais']['log_evidence'] - chk['ln_z']:+.3f}, "
                      f"vb bound {r['vb']['log_evidence'] - chk['ln_z']:+.3f}, ultranest "
                      f"{small[k]['ultranest']['logz'] - chk['ln_z']:+.2f}", flush=True)
        if 1 in small:
            r, ns = small[1]["occam"], small[1]["ultranest"]
            print(f"K = 1 against the exact {ex['ln_z']:.4f}: vb {r['vb']['log_evidence'] - ex['ln_z']:+.4f}, "
                  f"is {r['is']['log_evidence'] - ex['ln_z']:+.4f} ({z(r['is']['log_evidence'] - ex['ln_z'], r['is']['se']):+.1f} se), "
                  f"ais {r['ais']['log_evidence'] - ex['ln_z']:+.4f} ({z(r['ais']['log_evidence'] - ex['ln_z'], r['ais']['se']):+.1f} se), "
                  f"ultranest {ns['logz'] - ex['ln_z']:+.4f} ({z(ns['logz'] - ex['ln_z'], ns['logzerr']):+.1f} of its err); "
                  f"H exact {ex['h']:.2f}, ultranest {ns['h']:.2f}")
        print("  (is + ais s: the two methods' own wall seconds in the one-slot process, single-threaded there "
              "under the slot's load; the Occam process as a whole is timed above)")
        for k in ks:
            print(f"  K = {k} ais note: {small[k]['occam']['ais']['note']}")
        print(flush=True)

    done["small"], done["small_occam_time"] = small, small_time
    save()

    models, occ_s, occ_cpu = run_occam(a.occam, a.seed, a.temperatures, a.chains, shlex.split(a.both_slots))
    rows = models[0]
    ais, vb = rows["ais"], rows["vb"]
    done.update({"occam": rows, "occam_seconds": occ_s, "occam_cpu_seconds": occ_cpu})
    save()
    print(f"VIBES tutorial mixture, K = {K}, N = {len(x)}; seed {a.seed}")
    print(f"occam compare --method vb,ais ({a.chains} chains × {a.temperatures} temperatures): "
          f"process wall {occ_s:.2f} s, CPU {occ_cpu:.2f} s (CPU / wall {occ_cpu / occ_s:.2f}); "
          f"ais alone {ais['seconds']:.2f} s wall", flush=True)
    print(f"  vb bound {vb['log_evidence']:.2f}; ais {ais['log_evidence']:.2f} ± {ais['se']:.2f} "
          f"(ESS {ais['ess']:.1f}): {ais['note']}", flush=True)

    runs = []
    for prior in [v.strip() for v in a.k20_priors.split(",") if v.strip()]:
        if prior not in ("plain", "repartition"):
            raise SystemExit(f"--k20-priors: unknown `{prior}` (plain, repartition)")
        ns = ns_child(K, a.max_ncalls, prior == "repartition", a.max_cpu)
        ns["projection"] = None if ns["converged"] else projection(
            ns, ais["log_evidence"], a.frac_remain, information_estimate(a.occam, ais["log_evidence"]))
        runs.append(ns)
        done["ultranest"] = runs
        save()
        print(ns_line(ns), flush=True)
        if ns["projection"]:
            print("\n".join(projection_lines(prior, ns["projection"])), flush=True)
    print()
    print("method | ln p(D) | ± | wall s | CPU s | note")
    print("---|---|---|---|---|---")
    print(f"vb (bound) | {vb['log_evidence']:.2f} | | | | lower bound")
    print(f"occam ais | {ais['log_evidence']:.2f} | {ais['se']:.2f} | {occ_s:.2f} | {occ_cpu:.2f} | "
          f"ESS {ais['ess']:.1f} of {a.chains}; process (fit + ais)")
    for ns in runs:
        print(f"ultranest{' (repartitioned)' if ns['repartition'] else ''} | {ns['logz']:.2f} | {ns['logzerr']:.2f} | "
              f"{ns['seconds']:.1f} | {ns['cpu_seconds']:.1f} | "
              f"{'converged' if ns['converged'] else 'not converged'} ({ns['stopped']}; remaining dlogz "
              f"{ns['remaining_dlogz']:.3g}); {ns['calls']} calls, {ns['iterations']} iterations")
    for ns in runs:
        print(f"ultranest{' (repartitioned)' if ns['repartition'] else ''} / occam: wall {ns['seconds'] / occ_s:.1f}, "
              f"CPU {ns['cpu_seconds'] / occ_cpu:.1f}")


if __name__ == "__main__":
    main()
