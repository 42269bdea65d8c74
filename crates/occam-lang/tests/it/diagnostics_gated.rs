//! Golden diagnostics of the gated q-block `q joint(s, x)` (a mixture index and the GaussianARD
//! vectors it gates): each misuse is a located error at the statement or the member.

use occam_lang::Code;

use crate::diagnostics::check;

/// A mixture of Bayesian PCA (`examples/mbpca/mbpca.occam`) without its `q` line; `x` is given by
/// the caller.
fn mbpca(x: &str, q: &str) -> String {
    format!(
        "plates N, D from data t\nplate K = 3\nplate Q = 2\npi ~ Dirichlet(1) over K\n\
         s[N] ~ Categorical(pi)\nW[K, D] over Q ~ GaussianARD(0, 1)\n{x}\n\
         mu[K, D] ~ Gaussian(0, 1e-3)\nm[N, K, D] = dot(W, x) + mu\ntau ~ Gamma(1, 1)\n\
         t[N, D] ~ Gaussian(m[N, s], tau)\n{q}\n"
    )
}

const X: &str = "x[N, K] over Q ~ GaussianARD(0, 1)";

#[test]
fn gated_block_with_two_vectors() {
    check(
        &mbpca(X, "q joint(s, x, W)"),
        &[("t", 10, 3)],
        Code::Misuse,
        "error: a q-block with a GaussianARD holds one Categorical and the one GaussianARD it gates, nothing else\n  --> m.occam:12:1\n   |\n12 | q joint(s, x, W)\n   | ^^^^^^^^^^^^^^^^ the q-block\n   = hint: `q joint(s, x)` names a mixture index `s[N] ~ Categorical(pi)` and the vectors `x[N, K] over Q ~ GaussianARD(0, 1)` it gates through `m[N, K, D] = dot(W, x) + mu`, `t[N, D] ~ Gaussian(m[N, s], tau)`\n",
    );
}

#[test]
fn gated_block_without_its_index() {
    check(&mbpca(X, "q joint(x)"), &[("t", 10, 3)], Code::Misuse, "error: a q-block with a GaussianARD holds one Categorical and the one GaussianARD it gates, nothing else\n  --> m.occam:12:1\n   |\n12 | q joint(x)\n   | ^^^^^^^^^^ the q-block\n   = hint: `q joint(s, x)` names a mixture index `s[N] ~ Categorical(pi)` and the vectors `x[N, K] over Q ~ GaussianARD(0, 1)` it gates through `m[N, K, D] = dot(W, x) + mu`, `t[N, D] ~ Gaussian(m[N, s], tau)`\n");
}

#[test]
fn gated_block_latent_not_over_the_components() {
    check(
        &mbpca(
            "x[N] over Q ~ GaussianARD(0, 1)\nxx[N, K] over Q ~ GaussianARD(0, 1)",
            "q joint(s, x)",
        ),
        &[("t", 10, 3)],
        Code::Misuse,
        "error: `x` is not replicated over K, the plate `s` takes values in: the gated block keeps one vector per component\n  --> m.occam:13:12\n   |\n13 | q joint(s, x)\n   |            ^ not over K\n   |\n 7 | x[N] over Q ~ GaussianARD(0, 1)\n   | - `x` declared here\n   = hint: `q joint(s, x)` names a mixture index `s[N] ~ Categorical(pi)` and the vectors `x[N, K] over Q ~ GaussianARD(0, 1)` it gates through `m[N, K, D] = dot(W, x) + mu`, `t[N, D] ~ Gaussian(m[N, s], tau)`\n",
    );
}

#[test]
fn gated_block_with_an_observed_latent() {
    check(
        &mbpca(X, "observe x\nq joint(s, x)"),
        &[("t", 10, 3), ("x", 10, 6)],
        Code::Misuse,
        "error: `x` is observed: it has no q to share\n  --> m.occam:13:12\n   |\n13 | q joint(s, x)\n   |            ^ observed\n   |\n 7 | x[N, K] over Q ~ GaussianARD(0, 1)\n   | - declared here\n   = hint: leave it out; an observed variable that reads two members is added to the block as evidence by itself\n",
    );
}
