//! Malformed models: each gives a diagnostic with the right location, caret and hint.
//! The expected texts are the plain renderings, compared whole.

use occam_lang::{compile, Code, DataShapes};

pub(crate) fn check(src: &str, data: &[(&str, usize, usize)], code: Code, expected: &str) {
    let mut shapes = DataShapes::new();
    for &(n, r, c) in data {
        shapes.insert(n, r, c);
    }
    let err = compile(src, "m.occam", &shapes).expect_err("the model must be rejected");
    assert_eq!(err.items[0].code, code, "{}", err.render_plain());
    assert_eq!(
        err.render_plain(),
        expected,
        "\n--- got ---\n{}",
        err.render_plain()
    );
    // The fancy renderer handles the same spans.
    assert!(err.render_fancy(false).contains(&err.items[0].message));
}

#[test]
fn ard_precision_plate() {
    check(
        "plate D = 5\nplate Q = 3\nplate R = 3\nalpha[R] ~ Gamma(1, 1)\nW[D] over Q ~ GaussianARD(0, alpha)\n",
        &[],
        Code::PlateMismatch,
        "error: plate mismatch: `alpha` is in plate R (size 3), which `W[D] over Q` is not in\n --> m.occam:5:30\n  |\n5 | W[D] over Q ~ GaussianARD(0, alpha)\n  |                              ^^^^^ `alpha[R]` varies over R\n  |\n4 | alpha[R] ~ Gamma(1, 1)\n  | ----- `alpha` declared here\n  = hint: take `alpha` out of plate R, or put `W` in it\n",
    );
}

#[test]
fn bad_const() {
    check(
        "tau ~ Gamma(shape = -1, rate = 1)\n",
        &[],
        Code::BadConstant,
        "error: shape of Gamma must be a positive number; got -1\n --> m.occam:1:21\n  |\n1 | tau ~ Gamma(shape = -1, rate = 1)\n  |                     ^^ out of range\n  = hint: shape of Gamma must be a positive constant, or a Gamma- or Exponential-distributed variable (times a positive constant)\n",
    );
}

#[test]
fn bad_probability() {
    check(
        "x ~ Bernoulli(prob = 1.5)\n",
        &[],
        Code::BadConstant,
        "error: prob of Bernoulli must be a number in [0, 1]; got 1.5\n --> m.occam:1:22\n  |\n1 | x ~ Bernoulli(prob = 1.5)\n  |                      ^^^ out of range\n  = hint: prob of Bernoulli must be Beta-distributed (or a constant in [0, 1])\n",
    );
}

#[test]
fn categorical_const_probs() {
    check(
        "plate N = 4\nz[N] ~ Categorical(1)\n",
        &[],
        Code::EventMismatch,
        "error: the categories of `z` are unknown\n --> m.occam:2:20\n  |\n2 | z[N] ~ Categorical(1)\n  |                    ^ probabilities without a category plate\n  = hint: name them: `z ~ Categorical(...) over K`\n",
    );
}

#[test]
fn categories_mismatch() {
    check(
        "plate K = 3\nplate J = 4\nplate N = 5\npi ~ Dirichlet(1) over J\nz[N] ~ Categorical(pi)\nmu[K] ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mu[z], 1)\n",
        &[],
        Code::PlateMismatch,
        "error: plate mismatch: `z` takes values in J (size 4), but plate 1 of `mu` is K (size 3)\n --> m.occam:7:20\n  |\n7 | y[N] ~ Gaussian(mu[z], 1)\n  |                    ^ categories J\n  |\n6 | mu[K] ~ Gaussian(0, 1)\n  | -- declared as `mu[K]`\n  = hint: the Categorical's probabilities must be over the plate it selects\n",
    );
}

#[test]
fn const_only() {
    // A Beta's counts take only constants (a Gamma's shape takes a variable since Winn
    // Example 2.1's random shape is supported).
    check(
        "g ~ Gamma(1, 1)\np ~ Beta(alpha = g, beta = 1)\n",
        &[],
        Code::NonConjugate,
        "error: alpha of Beta must be a positive constant; got Gamma `g`\n --> m.occam:2:18\n  |\n2 | p ~ Beta(alpha = g, beta = 1)\n  |                  ^ must be a constant\n  = hint: this slot takes only a constant (a positive number)\n",
    );
}

#[test]
fn rectified_gaussian_mean_is_constant_only() {
    // The rule is declared once, by the core family (its mean slot takes no variable); the
    // language enforces it where the mean is written.
    check(
        "m ~ Gaussian(0, 1)\nr ~ RectifiedGaussian(mean = m, precision = 1)\n",
        &[],
        Code::NonConjugate,
        "error: mean of RectifiedGaussian must be a constant (a random mean is not conjugate for a rectified Gaussian); got Gaussian `m`\n --> m.occam:2:30\n  |\n2 | r ~ RectifiedGaussian(mean = m, precision = 1)\n  |                              ^ must be a constant\n  = hint: this slot takes only a constant (a number)\n",
    );
}

#[test]
fn cycle() {
    check(
        "a ~ Gaussian(mean = b, precision = 1)\nb ~ Gaussian(mean = a, precision = 1)\n",
        &[],
        Code::Cycle,
        "error: cyclic dependency: a → b → a\n --> m.occam:1:21\n  |\n1 | a ~ Gaussian(mean = b, precision = 1)\n  |                     ^ `a` uses `b` here\n  = hint: a model is a directed acyclic graph; unroll a chain over time: `z2 ~ Categorical(A[z1])`\n",
    );
}

#[test]
fn data_shape() {
    check(
        "plate N = 10\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mu, 1)\n",
        &[("y", 10, 2)],
        Code::DataShape,
        "error: data `y` has shape 10 × 2 but `y[N]` needs 10 × 1\n --> m.occam:3:1\n  |\n3 | y[N] ~ Gaussian(mu, 1)\n  | ^ over N (size 10)\n  = hint: check the plates of the variable against the data\n",
    );
}

#[test]
fn data_shape_transposed() {
    check(
        "plate N = 10\nplate D = 2\nmu ~ Gaussian(0, 1)\ny[N, D] ~ Gaussian(mu, 1)\n",
        &[("y", 2, 10)],
        Code::DataShape,
        "error: data `y` has shape 2 × 10 but `y[N, D]` needs 10 × 2\n --> m.occam:4:1\n  |\n4 | y[N, D] ~ Gaussian(mu, 1)\n  | ^ over N (size 10), D (size 2)\n  = hint: the data are 2 × 10 and `y` needs 10 × 2: did you mean to transpose them? (rows are the first plate's elements)\n",
    );
}

#[test]
fn data_shape_a_row_where_a_column_is_expected() {
    // N is sized by the data's rows, so a 1 × 4 row makes N = 1: the transposition is named.
    check(
        "plate N from data y\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mu, 1)\n",
        &[("y", 1, 4)],
        Code::DataShape,
        "error: data `y` has shape 1 × 4 but `y[N]` needs 1 × 1\n --> m.occam:3:1\n  |\n3 | y[N] ~ Gaussian(mu, 1)\n  | ^ over N (size 1)\n  = hint: the data are 1 × 4 and N takes its size from their rows: did you mean to transpose them to 4 × 1? (rows are the first plate's elements)\n",
    );
    check(
        "plate N from data y\nplate D = 2\nmu ~ Gaussian(0, 1)\ny[N, D] ~ Gaussian(mu, 1)\n",
        &[("y", 2, 10)],
        Code::DataShape,
        "error: data `y` has shape 2 × 10 but `y[N, D]` needs 2 × 2\n --> m.occam:4:1\n  |\n4 | y[N, D] ~ Gaussian(mu, 1)\n  | ^ over N (size 2), D (size 2)\n  = hint: the data are 2 × 10 and N takes its size from their rows: did you mean to transpose them to 10 × 2? (rows are the first plate's elements)\n",
    );
}

#[test]
fn misspelt_variable_by_a_swap() {
    check(
        "mu ~ Gaussian(0, 1)\ntau ~ Gamma(1, 1)\ny ~ Gaussian(mu, tua)\n",
        &[],
        Code::UnknownName,
        "error: unknown variable `tua`\n --> m.occam:3:18\n  |\n3 | y ~ Gaussian(mu, tua)\n  |                  ^^^ not declared\n  = hint: did you mean `tau`?\n",
    );
}

#[test]
fn dirichlet_no_over() {
    check(
        "pi ~ Dirichlet(1)\n",
        &[],
        Code::EventMismatch,
        "error: Dirichlet needs an event plate\n --> m.occam:1:1\n  |\n1 | pi ~ Dirichlet(1)\n  | ^^ `pi` has no `over`\n  = hint: name the plate of its categories: `pi ~ Dirichlet(1) over K`\n",
    );
}

#[test]
fn dot_event() {
    check(
        "plate N = 10\nplate Q = 3\nplate P = 4\nW over Q ~ GaussianARD(0, 1)\nX[N] over P ~ GaussianARD(0, 1)\ny[N] ~ Gaussian(mean = dot(W, X), precision = 1)\n",
        &[],
        Code::EventMismatch,
        "error: event plate mismatch in dot(): Q (size 3) and P (size 4)\n --> m.occam:6:24\n  |\n6 | y[N] ~ Gaussian(mean = dot(W, X), precision = 1)\n  |                        ^^^^^^^^^ vectors of different event plates\n  |\n6 | y[N] ~ Gaussian(mean = dot(W, X), precision = 1)\n  |                            - over Q (size 3)\n  |\n6 | y[N] ~ Gaussian(mean = dot(W, X), precision = 1)\n  |                               - over P (size 4)\n  = hint: dot() needs both vectors over the same event plate\n",
    );
}

#[test]
fn dup_slot() {
    check(
        "y ~ Gaussian(mean = 0, mu = 1, precision = 1)\n",
        &[],
        Code::BadArguments,
        "error: slot `mean` of Gaussian is given twice\n --> m.occam:1:24\n  |\n1 | y ~ Gaussian(mean = 0, mu = 1, precision = 1)\n  |                        ^^ second value\n  = hint: slots of Gaussian(mean (mu, location), precision (tau, prec, gamma)), aliases in parentheses\n",
    );
}

#[test]
fn duplicate_var() {
    check(
        "mu ~ Gaussian(0, 1)\nmu ~ Gamma(1, 1)\n",
        &[],
        Code::Duplicate,
        "error: `mu` is declared twice\n --> m.occam:2:1\n  |\n2 | mu ~ Gamma(1, 1)\n  | ^^ second declaration, as a variable\n  |\n1 | mu ~ Gaussian(0, 1)\n  | -- first declared here\n  = hint: rename one of them; plates, constants and variables share one namespace\n",
    );
}

#[test]
fn fractional_plate() {
    check(
        "plate K = 2.5\n",
        &[],
        Code::PlateSize,
        "error: size of plate `K` must be a positive integer; got 2.5\n --> m.occam:1:11\n  |\n1 | plate K = 2.5\n  |           ^^^ not a positive integer\n  = hint: write e.g. `plate K = 20`\n",
    );
}

#[test]
fn from_data_three() {
    check(
        "plates N, D, T from data x\n",
        &[("x", 3, 4)],
        Code::PlateSize,
        "error: data gives at most 2 plate sizes (rows, columns); got 3\n --> m.occam:1:14\n  |\n1 | plates N, D, T from data x\n  |              ^ no third axis\n  = hint: give this plate a fixed size: `plate T = 10`\n",
    );
}

#[test]
fn identity_for_scalar() {
    check(
        "x ~ Gaussian(0, identity)\n",
        &[],
        Code::BadConstant,
        "error: precision of Gaussian must be a positive number; got identity\n --> m.occam:1:17\n  |\n1 | x ~ Gaussian(0, identity)\n  |                 ^^^^^^^^ out of range\n  = hint: precision of Gaussian must be Gamma-distributed (or a product of Gammas, or a constant)\n",
    );
}

#[test]
fn lex_char() {
    check(
        "mu ~ Gaussian(0, 1) $\n",
        &[],
        Code::Lex,
        "error: unexpected character `$`\n --> m.occam:1:21\n  |\n1 | mu ~ Gaussian(0, 1) $\n  |                     ^ not part of the model language\n  = hint: names use letters, digits and `_`; comments start with `#`\n",
    );
}

#[test]
fn missing_data() {
    check(
        "plates N, D from data x\n",
        &[],
        Code::PlateSize,
        "error: no data named `x` is attached\n --> m.occam:1:23\n  |\n1 | plates N, D from data x\n  |                       ^ its shape sets the size of N, D\n  = hint: attach data `x`, or give the sizes: `plate N = 100`\n",
    );
}

#[test]
fn missing_slot() {
    check(
        "mu ~ Gaussian(mean = 0)\n",
        &[],
        Code::MissingSlot,
        "error: missing argument `precision` of Gaussian\n --> m.occam:1:6\n  |\n1 | mu ~ Gaussian(mean = 0)\n  |      ^^^^^^^^ missing `precision`\n  = hint: slots of Gaussian(mean (mu, location), precision (tau, prec, gamma)), aliases in parentheses\n",
    );
}

#[test]
fn misspelled_var() {
    check(
        "plate N = 10\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mean = mue, precision = 1)\n",
        &[],
        Code::UnknownName,
        "error: unknown variable `mue`\n --> m.occam:3:24\n  |\n3 | y[N] ~ Gaussian(mean = mue, precision = 1)\n  |                        ^^^ not declared\n  = hint: did you mean `mu`?\n",
    );
}

#[test]
fn mixed_product() {
    check(
        "a ~ Gaussian(0, 1)\nt ~ Gamma(1, 1)\ny ~ Gaussian(a * t, 1)\n",
        &[],
        Code::NonConjugate,
        "error: `*` multiplies Gaussians, or Gammas (a precision), not a mix; got Gamma `t`\n --> m.occam:3:18\n  |\n3 | y ~ Gaussian(a * t, 1)\n  |                  ^ Gamma `t`\n  = hint: a product is of Gaussian scalars, or of Gamma variables with a positive constant factor\n",
    );
}

#[test]
fn mvgaussian_event() {
    check(
        "plate P = 2\nplate Q = 3\nm over P ~ MvGaussian(0, identity)\nx over Q ~ MvGaussian(mean = m, precision = identity)\n",
        &[],
        Code::EventMismatch,
        "error: event plate mismatch: mean of MvGaussian must be over the event plate Q (size 3) of `x`; got MvGaussian `m` over P (size 2)\n --> m.occam:4:30\n  |\n4 | x over Q ~ MvGaussian(mean = m, precision = identity)\n  |                              ^ wrong event plate\n  = hint: the parent and the child need the same event plate\n",
    );
}

#[test]
fn negated_variable() {
    check(
        "a ~ Gaussian(0, 1)\ny ~ Gaussian(-a, 1)\n",
        &[],
        Code::Misuse,
        "error: only constants can be negated\n --> m.occam:2:14\n  |\n2 | y ~ Gaussian(-a, 1)\n  |              ^^ negated variable\n  = hint: multiply by a constant instead: `-1 * x`\n",
    );
}

#[test]
fn negative_plate() {
    check(
        "plate K = -3\n",
        &[],
        Code::PlateSize,
        "error: size of plate `K` must be a positive integer; got -3\n --> m.occam:1:11\n  |\n1 | plate K = -3\n  |           ^^ not a positive integer\n  = hint: write e.g. `plate K = 20`\n",
    );
}

#[test]
fn nested_dist() {
    check(
        "y ~ Gaussian(Gaussian(0, 1), 1)\n",
        &[],
        Code::Misuse,
        "error: distribution Gaussian inside an expression\n --> m.occam:1:14\n  |\n1 | y ~ Gaussian(Gaussian(0, 1), 1)\n  |              ^^^^^^^^ distributions cannot be nested\n  = hint: declare it as its own variable, `m ~ Gaussian(...)`, and use `m` here\n",
    );
}

#[test]
fn non_conjugate() {
    check(
        "mu ~ Gaussian(0, 1)\nx ~ Gaussian(mean = 0, precision = mu)\n",
        &[],
        Code::NonConjugate,
        "error: precision of Gaussian must be Gamma-distributed (or a product of Gammas, or a constant); got Gaussian `mu`\n --> m.occam:2:36\n  |\n2 | x ~ Gaussian(mean = 0, precision = mu)\n  |                                    ^^ not conjugate here\n  = hint: conjugate parents here: Gamma, Exponential, or a constant\n",
    );
}

#[test]
fn not_categorical() {
    check(
        "plate K = 3\nplate N = 10\nmu[K] ~ Gaussian(0, 1)\ntau[N] ~ Gamma(1, 1)\ny[N] ~ Gaussian(mean = mu[tau], precision = 1)\n",
        &[],
        Code::NotCategorical,
        "error: Gamma `tau` cannot index plate K of `mu`\n --> m.occam:5:27\n  |\n5 | y[N] ~ Gaussian(mean = mu[tau], precision = 1)\n  |                           ^^^ `tau` is positive, not Categorical\n  |\n4 | tau[N] ~ Gamma(1, 1)\n  | --- `tau` declared here\n  = hint: a plate is selected by a Categorical over it (a mixture): `z[N] ~ Categorical(p)` with `p ~ Dirichlet(1) over K`\n",
    );
}

#[test]
fn observed_deterministic() {
    check(
        "plate Q = 2\na over Q ~ GaussianARD(0, 1)\nb over Q ~ GaussianARD(0, 1)\nf = dot(a, b)\nobserve f\n",
        &[],
        Code::Misuse,
        "error: deterministic `f` cannot be observed\n --> m.occam:5:9\n  |\n5 | observe f\n  |         ^ observed here\n  |\n4 | f = dot(a, b)\n  | - declared as a deterministic expression here\n  = hint: observe a random variable instead, e.g. `y ~ Gaussian(mean = f, precision = tau)`\n",
    );
}

#[test]
fn plate_as_value() {
    check(
        "plate N = 3\ny[N] ~ Gaussian(N, 1)\n",
        &[],
        Code::Misuse,
        "error: `N` is a plate, not a value\n --> m.occam:2:17\n  |\n2 | y[N] ~ Gaussian(N, 1)\n  |                 ^ plate used as a value\n  = hint: plates appear in plate lists `x[N]`, after `over`, or as indices `mu[K]`\n",
    );
}

#[test]
fn plate_index_mismatch() {
    check(
        "plate K = 20\nplate D = 2\nplate N = 5\nmu[K, D] ~ Gaussian(0, 0.01)\nx[N, D] ~ Gaussian(mean = mu[D], precision = 1)\n",
        &[],
        Code::PlateMismatch,
        "error: plate mismatch: index D (size 2) is for plate 1 of `mu`, which is K (size 20)\n --> m.occam:5:30\n  |\n5 | x[N, D] ~ Gaussian(mean = mu[D], precision = 1)\n  |                              ^ expected K or a Categorical over it\n  |\n4 | mu[K, D] ~ Gaussian(0, 0.01)\n  | -- declared as `mu[K, D]`\n  = hint: indices follow the order of the variable's plate list\n",
    );
}

#[test]
fn plate_mismatch() {
    check(
        "plate K = 20\nplates N, D from data x\nmu[K, D] ~ Gaussian(0, 0.01)\npi ~ Dirichlet(1) over K\nlambda[N] ~ Categorical(pi)\nx[N, D] ~ Gaussian(mean = mu, precision = 1)\n",
        &[("x", 500, 2)],
        Code::PlateMismatch,
        "error: plate mismatch: `mu` is in plate K (size 20), which `x[N, D]` is not in\n --> m.occam:6:27\n  |\n6 | x[N, D] ~ Gaussian(mean = mu, precision = 1)\n  |                           ^^ `mu[K, D]` varies over K\n  |\n3 | mu[K, D] ~ Gaussian(0, 0.01)\n  | -- `mu` declared here\n  = hint: select an element of K with a Categorical (a mixture): `mu[lambda]`, or take `mu` out of plate K\n",
    );
}

#[test]
fn plate_no_size() {
    check(
        "plate K\n",
        &[],
        Code::PlateSize,
        "error: plate `K` has no size\n --> m.occam:1:7\n  |\n1 | plate K\n  |       ^ size missing\n  = hint: write `plate K = 20`, or `plate K from data x` to take it from data\n",
    );
}

#[test]
fn positional_after_named() {
    check(
        "y ~ Gaussian(mean = 0, 1)\n",
        &[],
        Code::BadArguments,
        "error: positional argument after a named one\n --> m.occam:1:24\n  |\n1 | y ~ Gaussian(mean = 0, 1)\n  |                        ^ positional\n  = hint: positional arguments come first, in slot order: Gaussian(mean (mu, location), precision (tau, prec, gamma))\n",
    );
}

#[test]
fn reserved() {
    check(
        "over ~ Gaussian(0, 1)\n",
        &[],
        Code::Reserved,
        "error: `over` is a reserved word\n --> m.occam:1:1\n  |\n1 | over ~ Gaussian(0, 1)\n  | ^^^^ expected a variable name\n  = hint: reserved words: plate, plates, from, data, observe, let, const, init, over, map\n",
    );
}

#[test]
fn scalar_over() {
    check(
        "plate Q = 3\nx ~ Gaussian(0, 1) over Q\n",
        &[],
        Code::EventMismatch,
        "error: Gaussian is scalar and cannot have an event plate\n --> m.occam:2:25\n  |\n2 | x ~ Gaussian(0, 1) over Q\n  |                         ^ event plate of a scalar\n  = hint: use GaussianARD or MvGaussian for a vector, or put Q in the plate list: `x[..., Q]`\n",
    );
}

#[test]
fn self_cycle() {
    check(
        "a ~ Gaussian(mean = a, precision = 1)\n",
        &[],
        Code::Cycle,
        "error: `a` depends on itself\n --> m.occam:1:21\n  |\n1 | a ~ Gaussian(mean = a, precision = 1)\n  |                     ^ `a` uses `a` here\n  = hint: a model is a directed acyclic graph; unroll a chain over time: `z2 ~ Categorical(A[z1])`\n",
    );
}

#[test]
fn syntax_expected_expression() {
    check(
        "y ~ Gaussian(mean = , 1)\n",
        &[],
        Code::Syntax,
        "error: expected an expression, found `,`\n --> m.occam:1:21\n  |\n1 | y ~ Gaussian(mean = , 1)\n  |                     ^ expected an expression\n  = hint: an expression is a number, a name, `mu[lambda]`, `f(...)`, or these joined by `+`, `*`, `@`\n",
    );
}

#[test]
fn syntax_missing_tilde() {
    check(
        "plate K = 3\nmu[K] Gaussian(0, 1)\n",
        &[],
        Code::Syntax,
        "error: expected `~` or `=`, found `Gaussian`\n --> m.occam:2:7\n  |\n2 | mu[K] Gaussian(0, 1)\n  |       ^^^^^^^^ expected `~` or `=`\n  = hint: write `mu ~ Dist(...)` for a random variable or `mu = expr` for a deterministic one\n",
    );
}

#[test]
fn syntax_unclosed() {
    check(
        "mu ~ Gaussian(0, 1\ntau ~ Gamma(1, 1)\n",
        &[],
        Code::Syntax,
        "error: expected `)`, found end of line\n --> m.occam:1:19\n  |\n1 | mu ~ Gaussian(0, 1\n  |                   ^ expected `)`\n  |\n1 | mu ~ Gaussian(0, 1\n  |              - `(` opened here\n  = hint: separate arguments with `,` and close with `)`\n",
    );
}

#[test]
fn too_many() {
    check(
        "mu ~ Gaussian(0, 1, 2)\n",
        &[],
        Code::BadArguments,
        "error: Gaussian takes 2 argument(s); got 3\n --> m.occam:1:21\n  |\n1 | mu ~ Gaussian(0, 1, 2)\n  |                     ^ extra argument\n  = hint: slots: mean (mu, location), precision (tau, prec, gamma)\n",
    );
}

#[test]
fn too_many_indices() {
    check(
        "plate K = 3\nplate N = 4\nmu[K] ~ Gaussian(0, 1)\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\ny[N] ~ Gaussian(mu[z, N], 1)\n",
        &[],
        Code::PlateMismatch,
        "error: `mu` has 1 plate but 2 indices are given\n --> m.occam:6:17\n  |\n6 | y[N] ~ Gaussian(mu[z, N], 1)\n  |                 ^^^^^^^^ too many indices\n  |\n3 | mu[K] ~ Gaussian(0, 1)\n  | -- declared as `mu[K]`\n  = hint: indices select the leading plates in order: `mu[K]`\n",
    );
}

#[test]
fn two_errors() {
    check(
        "mu ~ Gaussain(0, 1)\ntau ~ Gama(1, 1)\n",
        &[],
        Code::UnknownDistribution,
        "error: unknown distribution `Gaussain`\n --> m.occam:1:6\n  |\n1 | mu ~ Gaussain(0, 1)\n  |      ^^^^^^^^ not in the catalog\n  = hint: did you mean `Gaussian`?\n\nerror: unknown distribution `Gama`\n --> m.occam:2:7\n  |\n2 | tau ~ Gama(1, 1)\n  |       ^^^^ not in the catalog\n  = hint: did you mean `Gamma`?\n",
    );
}

#[test]
fn unicode_column() {
    check(
        "# μ and τ\nμ ~ Gausian(0, 1)\n",
        &[],
        Code::UnknownDistribution,
        "error: unknown distribution `Gausian`\n --> m.occam:2:5\n  |\n2 | μ ~ Gausian(0, 1)\n  |     ^^^^^^^ not in the catalog\n  = hint: did you mean `Gaussian`?\n",
    );
}

#[test]
fn unknown_dist() {
    check(
        "mu ~ Gausian(mean = 0, precision = 1)\n",
        &[],
        Code::UnknownDistribution,
        "error: unknown distribution `Gausian`\n --> m.occam:1:6\n  |\n1 | mu ~ Gausian(mean = 0, precision = 1)\n  |      ^^^^^^^ not in the catalog\n  = hint: did you mean `Gaussian`?\n",
    );
}

#[test]
fn unknown_dist_none() {
    check(
        "mu ~ Frobnicate(0, 1)\n",
        &[],
        Code::UnknownDistribution,
        &format!(
            "error: unknown distribution `Frobnicate`\n --> m.occam:1:6\n  |\n1 | mu ~ Frobnicate(0, 1)\n  |      ^^^^^^^^^^ not in the catalog\n  = hint: known distributions: {}\n",
            known_distributions()
        ),
    );
    // The list is the registry's, in order; it starts with the original thirteen.
    assert!(known_distributions().starts_with(
        "Gaussian, MvGaussian, GaussianARD, RectifiedGaussian, Gamma, Exponential, Wishart, Dirichlet, Beta, Categorical, Bernoulli, Binomial, Poisson"
    ));
}

/// Every distribution of the catalog (the engine's registry), then the chains, comma-separated.
fn known_distributions() -> String {
    occam_lang::catalog::DISTRIBUTIONS
        .iter()
        .chain(occam_lang::catalog::CHAINS)
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn unknown_function() {
    check(
        "plate Q = 2\na over Q ~ GaussianARD(0, 1)\nb over Q ~ GaussianARD(0, 1)\ny ~ Gaussian(dott(a, b), 1)\n",
        &[],
        Code::UnknownFunction,
        "error: unknown function `dott`\n --> m.occam:4:14\n  |\n4 | y ~ Gaussian(dott(a, b), 1)\n  |              ^^^^ not a deterministic function\n  = hint: did you mean `dot`? (every function and link: see docs/guide/12-beyond-conjugate.md)\n",
    );
}

#[test]
fn unknown_index() {
    check(
        "plate K = 3\nplate N = 4\nmu[K] ~ Gaussian(0, 1)\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\ny[N] ~ Gaussian(mu[zz], 1)\n",
        &[],
        Code::UnknownName,
        "error: unknown index `zz`\n --> m.occam:6:20\n  |\n6 | y[N] ~ Gaussian(mu[zz], 1)\n  |                    ^^ not a plate or a variable\n  = hint: did you mean `z`?\n",
    );
}

#[test]
fn unknown_init() {
    check(
        "mu ~ Gaussian(0, 1)\ninit mu = kmeans\n",
        &[],
        Code::Misuse,
        "error: unknown initialiser: expected `prior`, `random` or a number\n --> m.occam:2:11\n  |\n2 | init mu = kmeans\n  |           ^^^^^^ not an initialiser\n  = hint: use `prior`, `random`, `random(scale = 1, seed = 0)` or a number\n",
    );
}

#[test]
fn unknown_observe() {
    check(
        "mu ~ Gaussian(0, 1)\nobserve mo\n",
        &[],
        Code::UnknownName,
        "error: unknown variable `mo`\n --> m.occam:2:9\n  |\n2 | observe mo\n  |         ^^ cannot observe it\n  = hint: did you mean `mu`?\n",
    );
}

#[test]
fn unknown_plate() {
    check(
        "plate N = 3\nx[M] ~ Gaussian(0, 1)\n",
        &[],
        Code::UnknownName,
        "error: unknown plate `M`\n --> m.occam:2:3\n  |\n2 | x[M] ~ Gaussian(0, 1)\n  |   ^ no such plate\n  = hint: declare it: `plate M = 10`\n",
    );
}

#[test]
fn vector_in_scalar() {
    check(
        "plate Q = 2\na over Q ~ GaussianARD(0, 1)\ny ~ Gaussian(a, 1)\n",
        &[],
        Code::EventMismatch,
        "error: event plate mismatch: mean of Gaussian takes a scalar; got GaussianARD `a` over Q (size 2)\n --> m.occam:3:14\n  |\n3 | y ~ Gaussian(a, 1)\n  |              ^ wrong event plate\n  = hint: reduce a vector with dot(a, b), or use GaussianARD or MvGaussian for a vector child\n",
    );
}

#[test]
fn wrong_slot() {
    check(
        "mu ~ Gaussian(men = 0, precision = 1)\n",
        &[],
        Code::UnknownSlot,
        "error: Gaussian has no slot `men`\n --> m.occam:1:15\n  |\n1 | mu ~ Gaussian(men = 0, precision = 1)\n  |               ^^^ unknown slot\n  = hint: did you mean `mean`? valid slots: mean (mu, location), precision (tau, prec, gamma)\n",
    );
}

/// Two binary variables, `b` indexed by `a`, for the q-block cases.
const AB: &str = "plate K = 2\nplate J = 2\npa ~ Dirichlet(1) over K\na ~ Categorical(pa)\ndata tb[K] over J\nb ~ Categorical(tb[a])\n";

fn ab(rest: &str) -> String {
    format!("{AB}{rest}")
}

#[test]
fn q_block_unknown_member() {
    check(
        &ab("q joint(a, bb)\n"),
        &[("tb", 2, 2)],
        Code::UnknownName,
        "error: unknown variable `bb`\n --> m.occam:7:12\n  |\n7 | q joint(a, bb)\n  |            ^^ not a declared variable\n  = hint: did you mean `b`?\n",
    );
}

#[test]
fn q_block_continuous_member() {
    check(
        &ab("mu ~ Gamma(1, 1)\nq joint(a, mu)\n"),
        &[("tb", 2, 2)],
        Code::Misuse,
        "error: `mu` is Gamma: only Categorical, Gaussian or GaussianARD variables can share a q-block\n --> m.occam:8:12\n  |\n8 | q joint(a, mu)\n  |            ^^ not a Categorical or Gaussian latent variable\n  |\n7 | mu ~ Gamma(1, 1)\n  | -- declared here\n  = hint: a q-block is a tree-structured q over discrete variables (Winn §5.3–5.6), a joint Gaussian over scalar Gaussians read together by one `concat`, or `q joint(s, x)` over a mixture index and the GaussianARD vectors it gates\n",
    );
}

#[test]
fn q_block_of_both_kinds() {
    check(
        &ab("mu ~ Gaussian(0, 1)\nq joint(a, mu)\n"),
        &[("tb", 2, 2)],
        Code::Misuse,
        "error: a q-block holds Categorical variables or Gaussian ones, not both\n --> m.occam:8:1\n  |\n8 | q joint(a, mu)\n  | ^^^^^^^^^^^^^^ the q-block\n  = hint: split it into one block of each kind\n",
    );
}

#[test]
fn q_block_member_twice() {
    check(
        &ab("q joint(a, b)\nq joint(b)\n"),
        &[("tb", 2, 2)],
        Code::Duplicate,
        "error: `b` is in two q-blocks\n --> m.occam:8:9\n  |\n8 | q joint(b)\n  |         ^ named again\n  |\n7 | q joint(a, b)\n  |            - first named here\n  = hint: a variable belongs to one q-block; merge the blocks into one `q joint(...)`\n",
    );
}

#[test]
fn q_block_observed_member() {
    check(
        &ab("q joint(a, b)\n"),
        &[("tb", 2, 2), ("b", 1, 1)],
        Code::Misuse,
        "error: `b` is observed: it has no q to share\n --> m.occam:7:12\n  |\n7 | q joint(a, b)\n  |            ^ observed\n  |\n6 | b ~ Categorical(tb[a])\n  | - declared here\n  = hint: leave it out; an observed variable that reads two members is added to the block as evidence by itself\n",
    );
}

#[test]
fn q_block_chain_member() {
    check(
        "plate K = 2\nplate T = 5\np0 ~ Dirichlet(1) over K\nA[K] ~ Dirichlet(1) over K\nz over T ~ MarkovChain(initial = p0, transition = A)\nc ~ Categorical(p0)\nq joint(z, c)\n",
        &[],
        Code::Misuse,
        "error: `z` is a MarkovChain: a chain is a q-block of its own\n --> m.occam:7:9\n  |\n7 | q joint(z, c)\n  |         ^ a chain\n  |\n5 | z over T ~ MarkovChain(initial = p0, transition = A)\n  | - declared here\n  = hint: leave it out; its steps are already joint in q\n",
    );
}

#[test]
fn q_block_index_outside() {
    check(&ab("q joint(b)\n"), &[("tb", 2, 2)], Code::Misuse, "error: `b` is indexed by `a`, which is not in its q-block\n --> m.occam:7:9\n  |\n7 | q joint(b)\n  |         ^ depends on `a`\n  |\n4 | a ~ Categorical(pa)\n  | - `a` declared here\n  = hint: add `a` to the block: a member's mixture indices are members too\n");
}

#[test]
fn q_block_reader_of_two_members() {
    check(
        &ab("mu[K, J] ~ Gaussian(0, 1)\ny ~ Gaussian(mu[a, b], 1)\nq joint(a, b)\n"),
        &[("tb", 2, 2), ("y", 1, 1)],
        Code::Misuse,
        "error: Gaussian `y` reads 2 members of this q-block (`a`, `b`)\n --> m.occam:9:1\n  |\n9 | q joint(a, b)\n  | ^^^^^^^^^^^^^ the q-block\n  |\n8 | y ~ Gaussian(mu[a, b], 1)\n  | - `y` declared here\n  = hint: a variable outside a q-block may read one of its members; split the block so that its readers see one member each\n",
    );
}

#[test]
fn q_block_syntax() {
    check(
        &ab("q joint(a b)\n"),
        &[("tb", 2, 2)],
        Code::Syntax,
        "error: expected `)`, found `b`\n --> m.occam:7:11\n  |\n7 | q joint(a b)\n  |           ^ expected `)`\n  |\n7 | q joint(a b)\n  |        - `(` opened here\n  = hint: separate the names with `,` and close with `)`\n",
    );
}

/// The plain rendering of a model rejected by the check of Winn (2.41), asserting its code.
fn repeated(src: &str) -> String {
    let err = compile(src, "m.occam", &DataShapes::new()).expect_err("the model must be rejected");
    assert!(
        err.items.iter().all(|d| d.code == Code::RepeatedParent),
        "{}",
        err.render_plain()
    );
    err.render_plain()
}

const RULE: &str = "Winn (2.41): VMP needs each parent to enter a node's expression once (multilinearly), or q treats the uses as independent and the bound can exceed the evidence";
const SELF_HINT: &str = "but a product, dot(), `@` or concat() of";

#[test]
fn repeated_in_a_product() {
    assert_eq!(
        repeated("a ~ Gaussian(0, 1)\nb = a * a\ny ~ Gaussian(b, 1)\n"),
        format!("error: `a` enters the expression of `b` twice; {RULE}\n --> m.occam:2:9\n  |\n2 | b = a * a\n  |         ^ `a` again\n  |\n2 | b = a * a\n  |     - first use of `a`\n  = hint: `a + a` is collected to `2 * a`, {SELF_HINT} `a` with itself is not multilinear: introduce a separate variable for one of the uses\n"),
    );
}

#[test]
fn repeated_through_a_deterministic_chain() {
    assert_eq!(
        repeated("a ~ Gaussian(0, 1)\nc = a + 1\nd = a * c\ny ~ Gaussian(d, 1)\n"),
        format!("error: `a` enters the expression of `d` twice; {RULE}\n --> m.occam:3:9\n  |\n3 | d = a * c\n  |         ^ `a` again, through deterministic `c`\n  |\n3 | d = a * c\n  |     - first use of `a`\n  = hint: `c` already contains `a`: write the expression with `a` once (a linear chain can be expanded by hand, `a + (a + 1)` is `2 * a + 1`), or introduce a separate variable for one of the uses\n"),
    );
    // A sum through a chain is not collected either: the sum node would treat `a` and `c` as
    // independent parents.
    let text = repeated("a ~ Gaussian(0, 1)\nc = a + 1\ny ~ Gaussian(a + c, 1)\n");
    assert!(
        text.contains("`a` enters the mean of `y` twice") && text.contains("3:18"),
        "{text}"
    );
}

#[test]
fn repeated_in_dot_matvec_concat() {
    assert_eq!(
        repeated("plate Q = 3\nx over Q ~ GaussianARD(0, 1)\ny ~ Gaussian(dot(x, x), 1)\n"),
        format!("error: `x` enters the mean of `y` twice; {RULE}\n --> m.occam:3:21\n  |\n3 | y ~ Gaussian(dot(x, x), 1)\n  |                     ^ `x` again\n  |\n3 | y ~ Gaussian(dot(x, x), 1)\n  |                  - first use of `x`\n  = hint: `x + x` is collected to `2 * x`, {SELF_HINT} `x` with itself is not multilinear: introduce a separate variable for one of the uses\n"),
    );
    // `W @ (W @ x)`: one matrix on both sides, the second through `v`.
    assert_eq!(
        repeated("plate D = 2\nW[D] over D ~ GaussianARD(0, 1)\nx over D ~ GaussianARD(0, 1)\nv over D = W @ x\ny over D ~ MvGaussian(W @ v, identity)\n"),
        format!("error: `W` enters the mean of `y` twice; {RULE}\n --> m.occam:5:27\n  |\n5 | y over D ~ MvGaussian(W @ v, identity)\n  |                           ^ `W` again, through deterministic `v`\n  |\n5 | y over D ~ MvGaussian(W @ v, identity)\n  |                       - first use of `W`\n  = hint: `v` already contains `W`: write the expression with `W` once, or introduce a separate variable for one of the uses\n"),
    );
    assert_eq!(
        repeated("plate C = 2\na ~ Gaussian(0, 1)\nv over C = concat(a, a)\ny over C ~ MvGaussian(v, identity)\n"),
        format!("error: `a` enters the expression of `v` twice; {RULE}\n --> m.occam:3:22\n  |\n3 | v over C = concat(a, a)\n  |                      ^ `a` again\n  |\n3 | v over C = concat(a, a)\n  |                   - first use of `a`\n  = hint: `a + a` is collected to `2 * a`, {SELF_HINT} `a` with itself is not multilinear: introduce a separate variable for one of the uses\n"),
    );
}

#[test]
fn repeated_gamma_in_a_precision() {
    let text = repeated("t ~ Gamma(1, 1)\ny ~ Gaussian(0, t * t)\n");
    assert!(
        text.contains("`t` enters the precision of `y` twice") && text.contains("m.occam:2:21"),
        "{text}"
    );
}

#[test]
fn repeated_by_two_selectors() {
    assert_eq!(
        repeated("plate K = 3\npi ~ Dirichlet(1) over K\nmu[K] ~ Gaussian(0, 1)\nz ~ Categorical(pi)\nw ~ Categorical(pi)\ny ~ Gaussian(mu[z] + mu[w], 1)\n"),
        format!("error: `mu` enters the mean of `y` twice; {RULE}\n --> m.occam:6:22\n  |\n6 | y ~ Gaussian(mu[z] + mu[w], 1)\n  |                      ^^^^^ `mu` again, with other selectors: they can pick the element used before\n  |\n6 | y ~ Gaussian(mu[z] + mu[w], 1)\n  |              ----- first use of `mu`\n  = hint: the two references to `mu` can be the same element; select both with one Categorical, or give the second use a variable of its own\n"),
    );
}

#[test]
fn repeated_twice_through_one_deterministic_is_one_error_per_pair() {
    // `b * b` with `b = a * c` reaches `a` and `c` twice through the same two references.
    let src = "a ~ Gaussian(0, 1)\nc ~ Gaussian(0, 1)\nb = a * c\ny ~ Gaussian(b * b, 1)\n";
    let err = compile(src, "m.occam", &DataShapes::new()).expect_err("accepted b * b");
    assert_eq!(err.items.len(), 1, "{}", err.render_plain());
    assert_eq!(err.items[0].code, Code::RepeatedParent);
    assert!(err.items[0]
        .message
        .contains("`a` enters the mean of `y` twice"));
}

#[test]
fn scale_by_a_latent_variable() {
    // scale(x, c) multiplies by a known value: a latent `w` would make it bilinear.
    check(
        "plate N = 4\nplate Q = 2\nw over Q ~ GaussianARD(0, 1)\nx[N] over Q ~ GaussianARD(0, 1)\ny[N] over Q ~ GaussianARD(scale(x, w), 1)\n",
        &[],
        Code::NonConjugate,
        "error: argument `c` of scale() must be data or a number, a known value (real-valued or a real vector); got GaussianARD `w`\n --> m.occam:5:36\n  |\n5 | y[N] over Q ~ GaussianARD(scale(x, w), 1)\n  |                                    ^ not a known value\n  = hint: scale(x, c): a Gaussian scalar or vector x times data c (over the same event plate) or a constant, element by element\n",
    );
}

#[test]
fn scale_over_another_event_plate() {
    check(
        "plate N = 4\nplate Q = 2\nplate R = 3\ndata c[N] over R\nx[N] over Q ~ GaussianARD(0, 1)\ny[N] over Q ~ GaussianARD(scale(x, c), 1)\n",
        &[("c", 4, 3)],
        Code::EventMismatch,
        "error: event plate mismatch in scale(): `x` is over Q (size 2), `c` over R (size 3)\n --> m.occam:6:36\n  |\n6 | y[N] over Q ~ GaussianARD(scale(x, c), 1)\n  |                                    ^ over R (size 3)\n  = hint: scale() works element by element over one event plate\n",
    );
}

/// A regression written as in NumPy, `X @ w` on a table `X[N, D]`: the error says how Occam
/// writes it (rows as vectors over D, `dot`, and `w` as one vector).
#[test]
fn numpy_style_matrix_times_vector() {
    check(
        "plates N, D from data X\ndata X[N, D]\nw[D] ~ Gaussian(0, 1)\ny[N] ~ Bernoulli(sigmoid(X @ w))\nobserve y\n",
        &[("X", 20, 2), ("y", 20, 1)],
        Code::PlateMismatch,
        "error: `X @ w`: `X` is a table of numbers over N and D, not a matrix of vectors\n --> m.occam:4:26\n  |\n4 | y[N] ~ Bernoulli(sigmoid(X @ w))\n  |                          ^ `X[N, D]` varies over D\n  |\n2 | data X[N, D]\n  |      - `X` declared here\n  = hint: for one row of `X` per element of N, declare `data X[N] over D` and write `dot(X[N], w)`, with `w over D` declared as one vector (e.g. `w over D ~ GaussianARD(0, 1)`) instead of `w[D]`\n",
    );
}
