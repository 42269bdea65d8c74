//! Link functions: `Bernoulli(sigmoid(x))`, `Binomial(n, sigmoid(x))` (quadrature families,
//! `sigmoid_jj` the Jaakkola–Jordan ones), `Poisson(exp(x))` and `Categorical(softmax(x))`
//! resolve to the logit and log-link families; a link anywhere else, and unknown functions, get located errors that point to
//! the guide chapter on non-conjugate models.

use occam_lang::ir::{ExprOp, Node};
use occam_lang::{compile, Code, DataShapes};

const HEAD: &str = "plates N, C from data X\ndata X[N] over C\nw over C ~ MvGaussian(mean = 0, precision = 1)\nb ~ Gaussian(0, 1)\n";

fn shapes() -> DataShapes {
    DataShapes::new().with("X", 10, 3).with("y", 10, 1)
}

fn resolved(line: &str) -> (String, Vec<(String, ExprOp)>) {
    let src = format!("{HEAD}{line}\nobserve y\n");
    let m = compile(&src, "m.occam", &shapes()).unwrap_or_else(|e| panic!("{}", e.render_plain()));
    match &m.variable("y").unwrap().node {
        Node::Stochastic { distribution, args } => (
            distribution.clone(),
            args.iter()
                .map(|a| (a.slot.clone(), a.value.op.clone()))
                .collect(),
        ),
        n => panic!("{n:?}"),
    }
}

fn rejected(line: &str) -> (Code, String) {
    let src = format!("{HEAD}{line}\nobserve y\n");
    let err = compile(&src, "m.occam", &shapes()).expect_err("must be rejected");
    (err.items[0].code, err.render_plain())
}

#[test]
fn sigmoid_in_a_probability_slot_is_the_logit_family() {
    for line in [
        "y[N] ~ Bernoulli(sigmoid(dot(X[N], w) + b))",
        "y[N] ~ Bernoulli(p = sigmoid(dot(X[N], w) + b))",
    ] {
        let (dist, args) = resolved(line);
        assert_eq!(dist, "BernoulliLogitQuad", "{line}");
        assert_eq!(args.len(), 1);
        assert_eq!(args[0].0, "logit");
        assert!(matches!(args[0].1, ExprOp::Sum { .. }), "{:?}", args[0].1);
    }
    let (dist, args) = resolved("y[N] ~ Binomial(5, sigmoid(dot(X[N], w)))");
    assert_eq!(dist, "BinomialLogitQuad");
    assert_eq!(args[0].0, "trials");
    assert_eq!(args[1].0, "logit");
    assert!(matches!(args[1].1, ExprOp::Dot { .. }), "{:?}", args[1].1);
    // The Jaakkola–Jordan families by their link's name.
    let (dist, args) = resolved("y[N] ~ Bernoulli(sigmoid_jj(dot(X[N], w) + b))");
    assert_eq!(dist, "BernoulliLogit");
    assert_eq!(args[0].0, "logit");
    assert_eq!(
        resolved("y[N] ~ Binomial(5, p = sigmoid_jj(b))").0,
        "BinomialLogit"
    );
    // Poisson regression with the log link.
    let (dist, args) = resolved("y[N] ~ Poisson(exp(dot(X[N], w) + b))");
    assert_eq!(dist, "PoissonLog");
    assert_eq!(args[0].0, "log_rate");
    assert!(matches!(args[0].1, ExprOp::Sum { .. }), "{:?}", args[0].1);
    assert_eq!(resolved("y[N] ~ Poisson(rate = exp(b))").0, "PoissonLog");
    // Without a link the families are the Beta-parent ones.
    assert_eq!(resolved("y[N] ~ Bernoulli(0.3)").0, "Bernoulli");
}

#[test]
fn sigmoid_elsewhere_is_a_located_error_saying_where_it_goes() {
    let (code, text) = rejected("y[N] ~ Gaussian(sigmoid(b), 1)");
    assert_eq!(code, Code::Misuse);
    assert_eq!(
        text,
        "error: `sigmoid` is allowed only as the probability of a distribution\n --> m.occam:5:17\n  |\n5 | y[N] ~ Gaussian(sigmoid(b), 1)\n  |                 ^^^^^^^ not inside a probability slot\n  = hint: write `Bernoulli(sigmoid(x))` or `Binomial(n, sigmoid(x))` with x a Gaussian expression; see docs/guide/12-beyond-conjugate.md\n"
    );
    let src = format!("{HEAD}y[N] ~ Bernoulli(sigmoid(b, b))\nobserve y\n");
    let err = compile(&src, "m.occam", &shapes()).expect_err("must be rejected");
    assert_eq!(err.items.len(), 1, "{}", err.render_plain());
    assert_eq!(err.items[0].code, Code::BadArguments);
    let (code, text) = rejected("y[N] ~ Gaussian(exp(b), 1)");
    assert_eq!(code, Code::Misuse);
    assert!(
        text.contains("`exp` is allowed only as the rate of a distribution")
            && text.contains("hint: write `Poisson(exp(x))` with x a Gaussian expression"),
        "{text}"
    );
}

#[test]
fn unknown_functions_point_to_the_guide() {
    let (code, text) = rejected("y[N] ~ Poisson(exponential(b))");
    assert_eq!(code, Code::UnknownFunction);
    // The hint lists the engine's table of functions (operators first), then the links.
    let names: Vec<&str> = occam_lang::catalog::FUNCTIONS
        .iter()
        .map(|f| f.name)
        .collect();
    assert!(
        names.starts_with(&["sum", "product", "dot", "matvec", "concat"]),
        "{names:?}"
    );
    let hint = format!(
        "functions: {}; `sigmoid`, `sigmoid_jj`, `softmax`, `softmax_quad`, `softmax_bohning` and `exp` go in a \
         probability or rate \
         slot; see docs/guide/12-beyond-conjugate.md",
        names.join(", ")
    );
    assert!(text.contains(&hint), "{text}");
}

#[test]
fn softmax_of_a_vector_is_the_softmax_categorical() {
    let src = "plate K = 3\nplates N from data c\ng over K ~ MvGaussian(0, 1)\nc[N] ~ Categorical(probs = softmax(g))\nobserve c\n";
    let m = compile(src, "m.occam", &DataShapes::new().with("c", 10, 1))
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    match &m.variable("c").unwrap().node {
        Node::Stochastic { distribution, args } => {
            // The exact expectation by quadrature (K ≤ 3; Böhning's bound beyond, in the engine).
            assert_eq!(distribution, "CategoricalSoftmaxQuad");
            assert_eq!(args[0].slot, "logits");
        }
        n => panic!("{n:?}"),
    }
    // `softmax_quad` is the same; `softmax_bohning` is Böhning's bound for every K.
    for (link, family) in [
        ("softmax_quad", "CategoricalSoftmaxQuad"),
        ("softmax_bohning", "CategoricalSoftmax"),
    ] {
        let src = src.replace("softmax(g)", &format!("{link}(g)"));
        let m = compile(&src, "m.occam", &DataShapes::new().with("c", 10, 1))
            .unwrap_or_else(|e| panic!("{}", e.render_plain()));
        match &m.variable("c").unwrap().node {
            Node::Stochastic { distribution, .. } => assert_eq!(distribution, family, "{link}"),
            n => panic!("{n:?}"),
        }
    }
    let src = "b ~ Gaussian(0, 1)\ny ~ Gaussian(softmax(b), 1)\n";
    let err = compile(src, "m.occam", &DataShapes::new()).expect_err("rejected");
    assert_eq!(err.items[0].code, Code::Misuse);
    assert!(
        err.render_plain()
            .contains("hint: write `Categorical(softmax(x))` with x a Gaussian expression"),
        "{}",
        err.render_plain()
    );
}
