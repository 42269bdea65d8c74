//! The example models parse and resolve to the expected IR.

use occam_lang::catalog::ValueKind;
use occam_lang::ir::{ConstValue, Event, Expr, ExprOp, Init, Model, Node, PlateSource, VarRef};
use occam_lang::{compile, DataShapes};

fn build(src: &str, name: &str, data: &DataShapes) -> Model {
    match compile(src, name, data) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.render_plain()),
    }
}

fn tutorial(name: &str) -> Model {
    let src = match name {
        "single" => include_str!("../../../../examples/vibes_tutorial/single.occam"),
        "mixture" => include_str!("../../../../examples/vibes_tutorial/mixture.occam"),
        "shared_gamma" => include_str!("../../../../examples/vibes_tutorial/shared_gamma.occam"),
        "separable" => include_str!("../../../../examples/vibes_tutorial/separable.occam"),
        "shared_pi_gamma" => {
            include_str!("../../../../examples/vibes_tutorial/shared_pi_gamma.occam")
        }
        _ => unreachable!(),
    };
    build(
        src,
        &format!("{name}.occam"),
        &DataShapes::new().with("x", 500, 2),
    )
}

/// Plate names of a variable, by variable name.
fn plates(m: &Model, var: &str) -> Vec<String> {
    let v = m.variable(var).unwrap();
    m.plate_names(&v.plates)
        .into_iter()
        .map(String::from)
        .collect()
}

fn events(m: &Model, var: &str) -> Vec<String> {
    let v = m.variable(var).unwrap();
    m.plate_names(&v.event_plates)
        .into_iter()
        .map(String::from)
        .collect()
}

fn args<'m>(m: &'m Model, var: &str) -> (&'m str, Vec<(&'m str, &'m Expr)>) {
    match &m.variable(var).unwrap().node {
        Node::Stochastic { distribution, args } => (
            distribution.as_str(),
            args.iter().map(|a| (a.slot.as_str(), &a.value)).collect(),
        ),
        n => panic!("{var} is {n:?}"),
    }
}

fn var_ref(e: &Expr) -> &VarRef {
    match &e.op {
        ExprOp::Var(r) => r,
        op => panic!("not a reference: {op:?}"),
    }
}

/// (plate name, selecting categorical) for each plate of a reference.
fn index(m: &Model, r: &VarRef) -> Vec<(String, Option<String>)> {
    r.index
        .iter()
        .map(|i| {
            (
                m.plates[i.plate].name.clone(),
                i.by.as_ref().map(|c| c.name.clone()),
            )
        })
        .collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn single_gaussian() {
    let m = tutorial("single");
    assert_eq!(m.plates.len(), 2);
    assert_eq!(m.plates[0].name, "N");
    assert_eq!(m.plates[0].size, 500);
    assert_eq!(
        m.plates[0].source,
        PlateSource::Data {
            data: s("x"),
            axis: 0
        }
    );
    assert_eq!(m.plates[1].size, 2);
    assert_eq!(
        m.plates[1].source,
        PlateSource::Data {
            data: s("x"),
            axis: 1
        }
    );
    let names: Vec<&str> = m.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["mu", "gamma", "x"]);
    assert_eq!(m.topological_order, vec![0, 1, 2]);
    let x = m.variable("x").unwrap();
    assert!(x.observed);
    assert!(!m.variable("mu").unwrap().observed);
    assert_eq!(x.position.line, 5);
    let (dist, a) = args(&m, "x");
    assert_eq!(dist, "Gaussian");
    assert_eq!(a[0].0, "mean");
    assert_eq!(a[1].0, "precision");
    let mean = var_ref(a[0].1);
    assert_eq!(mean.name, "mu");
    assert_eq!(index(&m, mean), vec![(s("D"), None)]);
    assert_eq!(a[0].1.plates, vec![1]);
    assert_eq!(a[0].1.kind, Some(ValueKind::Real));
    let (dist, a) = args(&m, "gamma");
    assert_eq!(dist, "Gamma");
    assert_eq!(a[0].1.op, ExprOp::Const(ConstValue::Scalar(0.001)));
    assert_eq!(a[0].1.kind, None);
}

#[test]
fn mixture() {
    let m = tutorial("mixture");
    assert_eq!(
        m.plates
            .iter()
            .map(|p| (p.name.as_str(), p.size))
            .collect::<Vec<_>>(),
        [("K", 20), ("N", 500), ("D", 2)]
    );
    assert_eq!(plates(&m, "pi"), Vec::<String>::new());
    assert_eq!(events(&m, "pi"), [s("K")]);
    assert_eq!(m.variable("pi").unwrap().kind, ValueKind::Simplex);
    assert_eq!(plates(&m, "lambda"), [s("N")]);
    assert_eq!(
        events(&m, "lambda"),
        [s("K")],
        "categories inferred from pi"
    );
    assert_eq!(m.variable("lambda").unwrap().kind, ValueKind::Categorical);
    let (_, a) = args(&m, "x");
    let mean = var_ref(a[0].1);
    assert!(mean.is_mixture());
    assert_eq!(
        index(&m, mean),
        vec![(s("K"), Some(s("lambda"))), (s("D"), None)]
    );
    // The mixture mean varies over N (through lambda) and D.
    assert_eq!(m.plate_names(&a[0].1.plates), ["N", "D"]);
    let prec = var_ref(a[1].1);
    assert_eq!(
        index(&m, prec),
        vec![(s("K"), Some(s("lambda"))), (s("D"), None)]
    );
    let lambda = m.variables.iter().position(|v| v.name == "lambda").unwrap();
    assert_eq!(mean.index[0].by.as_ref().unwrap().var, lambda);
}

#[test]
fn shared_gamma() {
    let m = tutorial("shared_gamma");
    assert_eq!(plates(&m, "gamma"), [s("D")]);
    let (_, a) = args(&m, "x");
    let prec = var_ref(a[1].1);
    assert!(!prec.is_mixture());
    assert_eq!(index(&m, prec), vec![(s("D"), None)]);
}

#[test]
fn separable() {
    let m = tutorial("separable");
    assert_eq!(plates(&m, "pi"), [s("D")]);
    assert_eq!(plates(&m, "lambda"), [s("N"), s("D")]);
    let (_, a) = args(&m, "lambda");
    assert_eq!(index(&m, var_ref(a[0].1)), vec![(s("D"), None)]);
    let (_, a) = args(&m, "x");
    assert_eq!(
        index(&m, var_ref(a[0].1)),
        vec![(s("K"), Some(s("lambda"))), (s("D"), None)]
    );
    // The brief's spelling, with the D index explicit, resolves identically.
    let src = include_str!("../../../../examples/vibes_tutorial/separable.occam")
        .replace("mean = mu[lambda]", "mean = mu[lambda, D]");
    let m2 = build(&src, "b.occam", &DataShapes::new().with("x", 500, 2));
    let (_, a2) = args(&m2, "x");
    assert_eq!(var_ref(a2[0].1), var_ref(a[0].1));
}

#[test]
fn shared_pi_gamma() {
    let m = tutorial("shared_pi_gamma");
    assert_eq!(plates(&m, "pi"), Vec::<String>::new());
    assert_eq!(plates(&m, "gamma"), [s("K")]);
    assert_eq!(plates(&m, "lambda"), [s("N"), s("D")]);
    let (_, a) = args(&m, "x");
    assert_eq!(
        index(&m, var_ref(a[1].1)),
        vec![(s("K"), Some(s("lambda")))]
    );
    assert_eq!(m.plate_names(&a[1].1.plates), ["N", "D"]);
}

#[test]
fn bpca() {
    let src = include_str!("../../../../examples/models/bpca.occam");
    let m = build(src, "bpca.occam", &DataShapes::new().with("y", 100, 10));
    assert_eq!(
        m.plates
            .iter()
            .map(|p| (p.name.as_str(), p.size))
            .collect::<Vec<_>>(),
        [("N", 100), ("D", 10), ("Q", 9)]
    );
    assert_eq!(plates(&m, "W"), [s("D")]);
    assert_eq!(events(&m, "W"), [s("Q")]);
    assert_eq!(m.variable("W").unwrap().kind, ValueKind::Vector);
    // ARD precision alpha[Q] sits in W's event plate.
    let (dist, a) = args(&m, "W");
    assert_eq!(dist, "GaussianARD");
    assert_eq!(index(&m, var_ref(a[1].1)), vec![(s("Q"), None)]);
    assert_eq!(m.plate_names(&a[1].1.plates), ["Q"]);
    let (_, a) = args(&m, "y");
    let ExprOp::Sum(terms) = &a[0].1.op else {
        panic!("{:?}", a[0].1.op)
    };
    let ExprOp::Dot(w, x) = &terms[0].op else {
        panic!()
    };
    assert_eq!(var_ref(w).name, "W");
    assert_eq!(var_ref(x).name, "X");
    assert_eq!(terms[0].kind, Some(ValueKind::Real));
    assert_eq!(m.plate_names(&terms[0].plates), ["N", "D"]);
    assert_eq!(var_ref(&terms[1]).name, "mu");
    assert_eq!(a[0].1.event, None);
    assert_eq!(
        m.variable("X").unwrap().init,
        Some(Init::Random {
            scale: Some(1.0),
            seed: Some(7)
        })
    );
    assert!(m.variable("y").unwrap().observed);
}

#[test]
fn gmm_1d_with_let_map_and_init() {
    let src = include_str!("../../../../examples/models/gmm1d.occam");
    let m = build(src, "gmm1d.occam", &DataShapes::new().with("y", 300, 1));
    assert_eq!(m.constants.len(), 1);
    assert_eq!(m.constants[0].name, "a0");
    assert_eq!(m.plates[1].size, 300);
    assert!(m.variable("mu").unwrap().map);
    assert!(!m.variable("tau").unwrap().map);
    assert_eq!(
        m.variable("z").unwrap().init,
        Some(Init::Random {
            scale: None,
            seed: None
        })
    );
    assert_eq!(m.variable("tau").unwrap().init, None);
    let (_, a) = args(&m, "tau");
    assert_eq!(a[0].1.op, ExprOp::Const(ConstValue::Scalar(1e-3)));
    let (_, a) = args(&m, "y");
    assert_eq!(index(&m, var_ref(a[0].1)), vec![(s("K"), Some(s("z")))]);
}

#[test]
fn bernoulli_mixture() {
    let src = include_str!("../../../../examples/models/bernoulli_mixture.occam");
    let m = build(src, "bm.occam", &DataShapes::new().with("x", 50, 8));
    let (dist, a) = args(&m, "P");
    assert_eq!(dist, "Beta");
    assert_eq!(a[0], ("alpha", a[0].1));
    assert_eq!(a[1].1.op, ExprOp::Const(ConstValue::Scalar(0.5)));
    assert_eq!(m.variable("P").unwrap().kind, ValueKind::Probability);
    let (dist, a) = args(&m, "x");
    assert_eq!(dist, "Bernoulli");
    assert_eq!(a[0].0, "prob");
    assert_eq!(
        index(&m, var_ref(a[0].1)),
        vec![(s("K"), Some(s("z"))), (s("D"), None)]
    );
    assert_eq!(m.variable("x").unwrap().kind, ValueKind::Binary);
}

#[test]
fn hmm_chain() {
    let src = include_str!("../../../../examples/models/hmm.occam");
    let m = build(src, "hmm.occam", &DataShapes::new());
    assert_eq!(plates(&m, "A"), [s("K")]);
    assert_eq!(events(&m, "A"), [s("K")]);
    for z in ["z2", "z3", "z4"] {
        let (_, a) = args(&m, z);
        let r = var_ref(a[0].1);
        assert_eq!(r.name, "A");
        assert_eq!(index(&m, r).len(), 1);
        assert!(r.is_mixture());
        assert_eq!(events(&m, z), [s("K")]);
    }
    for y in ["y1", "y2", "y3", "y4"] {
        assert!(m.variable(y).unwrap().observed, "{y}");
    }
    assert!(!m.variable("z1").unwrap().observed);
}

#[test]
fn quickstart_positional_arguments() {
    let src = include_str!("../../../../examples/models/quickstart.occam");
    let m = build(
        src,
        "quickstart.occam",
        &DataShapes::new().with("y", 1000, 1),
    );
    assert_eq!(m.plates[0].size, 1000);
    let (_, a) = args(&m, "mu");
    assert_eq!(
        a.iter().map(|x| x.0).collect::<Vec<_>>(),
        ["mean", "precision"]
    );
    assert_eq!(a[1].1.op, ExprOp::Const(ConstValue::Scalar(1e-6)));
    let (_, a) = args(&m, "tau");
    assert_eq!(a.iter().map(|x| x.0).collect::<Vec<_>>(), ["shape", "rate"]);
    let (_, a) = args(&m, "y");
    assert_eq!(var_ref(a[0].1).name, "mu");
    assert_eq!(var_ref(a[1].1).name, "tau");
    assert!(a[0].1.plates.is_empty());
}

#[test]
fn regression_with_data_covariates() {
    let src = include_str!("../../../../examples/models/regression.occam");
    let m = build(
        src,
        "regression.occam",
        &DataShapes::new().with("X", 40, 3).with("y", 40, 1),
    );
    let x = m.variable("X").unwrap();
    assert_eq!(x.node, Node::Data);
    assert!(x.observed);
    assert_eq!(x.kind, ValueKind::Vector);
    assert_eq!(events(&m, "X"), [s("C")]);
    let (dist, a) = args(&m, "B");
    assert_eq!(dist, "MvGaussian");
    assert_eq!(a[1].1.op, ExprOp::Const(ConstValue::Identity(1e-3)));
    assert_eq!(events(&m, "B"), [s("C")]);
    let (_, a) = args(&m, "y");
    let ExprOp::Dot(l, r) = &a[0].1.op else {
        panic!()
    };
    assert_eq!(var_ref(l).name, "X");
    assert_eq!(var_ref(r).name, "B");
    assert_eq!(
        l.event,
        Some(Event {
            plate: Some(1),
            size: 3
        })
    );
    assert!(m.variable("y").unwrap().observed);
}

#[test]
fn factor_analysis_matvec() {
    let src = include_str!("../../../../examples/models/factor_analysis.occam");
    let m = build(src, "fa.occam", &DataShapes::new().with("y", 30, 4));
    let (_, a) = args(&m, "y");
    let mean = a[0].1;
    assert_eq!(mean.kind, Some(ValueKind::Vector));
    assert_eq!(mean.event.and_then(|e| e.plate), m.plate_index("D"));
    let ExprOp::Sum(terms) = &mean.op else {
        panic!()
    };
    let ExprOp::MatVec { matrix, vector } = &terms[0].op else {
        panic!()
    };
    assert_eq!(var_ref(matrix).name, "W");
    assert_eq!(var_ref(vector).name, "x");
    assert_eq!(m.plate_names(&terms[0].plates), ["N"]);
    let (dist, a) = args(&m, "Lambda");
    assert_eq!(dist, "Wishart");
    assert_eq!(a[1].1.op, ExprOp::Const(ConstValue::Identity(1e-5)));
    assert_eq!(m.variable("Lambda").unwrap().kind, ValueKind::Matrix);
}

#[test]
fn deterministic_concat_and_products() {
    let src = "plate N = 5\nplate C = 2\n\
               a ~ Gaussian(0, 1)\nb[N] ~ Gaussian(0, 1)\n\
               v[N] over C = concat(a, b)\n\
               w over C ~ MvGaussian(0, identity)\n\
               t1 ~ Gamma(1, 1)\nt2[N] ~ Exponential(2)\n\
               y[N] ~ Gaussian(mean = dot(v, w) + -1, precision = 2 * t1 * t2)\n\
               observe y\n";
    let m = build(src, "d.occam", &DataShapes::new());
    let v = m.variable("v").unwrap();
    assert_eq!(v.kind, ValueKind::Vector);
    assert_eq!(events(&m, "v"), [s("C")]);
    let Node::Deterministic { expr } = &v.node else {
        panic!()
    };
    let ExprOp::Concat(parts) = &expr.op else {
        panic!()
    };
    assert_eq!(parts.len(), 2);
    assert_eq!(
        expr.event,
        Some(Event {
            plate: None,
            size: 2
        })
    );
    let (_, a) = args(&m, "y");
    let ExprOp::Sum(t) = &a[0].1.op else { panic!() };
    assert_eq!(t[1].op, ExprOp::Const(ConstValue::Scalar(-1.0)));
    let ExprOp::Product(f) = &a[1].1.op else {
        panic!()
    };
    assert_eq!(f.len(), 3);
    assert_eq!(a[1].1.kind, Some(ValueKind::Positive));
    assert_eq!(f[2].op, ExprOp::Const(ConstValue::Scalar(2.0)));
    assert!(m.variable("y").unwrap().observed);
}

#[test]
fn declaration_order_is_free_and_topological_order_is_given() {
    let src = "x ~ Gaussian(mean = m, precision = 1)\nm ~ Gaussian(0, 1)\nobserve x\n";
    let m = build(src, "o.occam", &DataShapes::new());
    assert_eq!(m.variables[0].name, "x");
    assert_eq!(m.topological_order, vec![1, 0]);
}

#[test]
fn model_round_trips_through_json() {
    let m = tutorial("mixture");
    let json = serde_json::to_string(&m).unwrap();
    let back: Model = serde_json::from_str(&json).unwrap();
    assert_eq!(back, m);
    assert!(json.contains("\"distribution\":\"Categorical\""));
}

#[test]
fn ast_is_available_without_resolution() {
    let src = include_str!("../../../../examples/vibes_tutorial/mixture.occam");
    let f = occam_lang::parse(src, "mixture.occam").unwrap();
    assert_eq!(f.statements.len(), 7);
    // The AST parses models whose names do not resolve.
    assert!(occam_lang::parse("x ~ Nonsense(y)", "n.occam").is_ok());
}

#[test]
fn observed_categorical_and_wishart_data_shapes() {
    let src = "plate K = 3\nplate N from data z\nplate D = 2\n\
               pi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\n\
               L ~ Wishart(dof = 3, rate = identity) over D\n";
    // Category indices: one column, not one per category.
    let data = DataShapes::new().with("z", 10, 1).with("L", 2, 2);
    let m = build(src, "c.occam", &data);
    assert!(m.variable("z").unwrap().observed);
    assert!(m.variable("L").unwrap().observed);
    let bad = DataShapes::new().with("z", 10, 1).with("L", 2, 1);
    let err = compile(src, "c.occam", &bad).unwrap_err();
    assert_eq!(err.items.len(), 1);
    assert!(
        err.items[0]
            .message
            .contains("data `L` has shape 2 × 1 but `L over D` needs 2 × 2"),
        "{}",
        err.render_plain()
    );
}

#[test]
fn every_error_is_reported_not_just_the_first() {
    let src = "mu ~ Gausian(0, 1)\ntau ~ Gama(1, 1)\ny ~ Gaussian(mu, tua)\n";
    let err = compile(src, "e.occam", &DataShapes::new()).unwrap_err();
    let lines: Vec<String> = err.items.iter().map(|d| err.location(d)).collect();
    assert_eq!(lines, ["e.occam:1:6", "e.occam:2:7", "e.occam:3:18"]);
}

#[test]
fn the_sketch_from_the_issue_compiles_verbatim() {
    let src = "plate K = 20\n\
               plates N, D from data x\n\
               pi ~ Dirichlet(1) over K\n\
               mu[K, D] ~ Gaussian(mean = 0, precision = 0.01)\n\
               gamma[K, D] ~ Gamma(shape = 0.001, rate = 0.001)\n\
               lambda[N] ~ Categorical(pi)\n\
               x[N, D] ~ Gaussian(mean = mu[lambda, D], precision = gamma[lambda, D])   # indexing K by lambda = mixture\n";
    let data = DataShapes::new().with("x", 500, 2);
    let sketch = build(src, "sketch.occam", &data);
    let file = tutorial("mixture");
    // Same IR as the example file, up to spans and positions.
    let (_, a) = args(&sketch, "x");
    let (_, b) = args(&file, "x");
    assert_eq!(var_ref(a[0].1), var_ref(b[0].1));
    assert_eq!(var_ref(a[1].1), var_ref(b[1].1));
}

#[test]
fn syntax_variants() {
    let src = "const b0 = 2 * 0.5e-3; plate K = 2, T = 3\n\
               w over K ~ Dirichlet(alpha = 1)   # `over` before `~`\n\
               m ~ Normal(mu = 0, tau = b0)\n\
               v over T ~ MultivariateGaussian(\n    mean = 0,\n    precision = identity * 2\n)\n\
               z ~ Discrete(p = w)\n\
               μ ~ Gaussian(m, 1)\n";
    let m = build(src, "v.occam", &DataShapes::new());
    assert_eq!(m.constants[0].value, ConstValue::Scalar(1e-3));
    assert_eq!(m.plates.iter().map(|p| p.size).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(events(&m, "w"), [s("K")]);
    let (dist, a) = args(&m, "m");
    assert_eq!(dist, "Gaussian");
    assert_eq!(a[1].1.op, ExprOp::Const(ConstValue::Scalar(1e-3)));
    let (dist, a) = args(&m, "v");
    assert_eq!(dist, "MvGaussian");
    assert_eq!(a[1].1.op, ExprOp::Const(ConstValue::Identity(2.0)));
    assert_eq!(args(&m, "z").0, "Categorical");
    assert_eq!(events(&m, "z"), [s("K")]);
    assert_eq!(var_ref(args(&m, "μ").1[0].1).name, "m");
}

#[test]
fn parents_are_the_graph_edges() {
    let m = tutorial("mixture");
    let names = |v: usize| -> Vec<&str> {
        m.parents(v)
            .into_iter()
            .map(|p| m.variables[p].name.as_str())
            .collect()
    };
    let idx = |n: &str| m.variables.iter().position(|v| v.name == n).unwrap();
    assert_eq!(names(idx("x")), ["mu", "gamma", "lambda"]);
    assert_eq!(names(idx("lambda")), ["pi"]);
    assert!(names(idx("pi")).is_empty());
    // Every parent comes before its child in the topological order.
    let pos = |v: usize| m.topological_order.iter().position(|&u| u == v).unwrap();
    for v in 0..m.variables.len() {
        for p in m.parents(v) {
            assert!(pos(p) < pos(v));
        }
    }
}

/// The chain examples: the time plate (`over`) is the chain's last plate, its states come from
/// the transition rows, `lengths` is the last argument, and a child indexes the chain like a
/// Categorical (a mixture over the states).
#[test]
fn chains_resolve_with_the_time_plate_last_and_the_states_as_event() {
    let m = build(
        include_str!("../../../../examples/models/hmm_chain.occam"),
        "hmm_chain.occam",
        &DataShapes::new().with("y", 3, 60).with("L", 3, 1),
    );
    assert_eq!(plates(&m, "z"), ["S", "T"]);
    assert_eq!(events(&m, "z"), ["K"]);
    assert_eq!(m.variable("z").unwrap().kind, ValueKind::Categorical);
    let (dist, a) = args(&m, "z");
    assert_eq!(dist, "MarkovChain");
    let slots: Vec<&str> = a.iter().map(|(s, _)| *s).collect();
    assert_eq!(slots, ["initial", "transition", "lengths"]);
    assert_eq!(var_ref(a[2].1).name, "L");
    let (_, y) = args(&m, "y");
    assert_eq!(var_ref(y[0].1).index[0].by.as_ref().unwrap().name, "z");
    let lds = build(
        include_str!("../../../../examples/models/lds.occam"),
        "lds.occam",
        &DataShapes::new().with("y", 80, 4),
    );
    assert_eq!(plates(&lds, "x"), ["T"]);
    assert_eq!(events(&lds, "x"), ["D"]);
    let (dist, a) = args(&lds, "x");
    assert_eq!(dist, "GaussianMarkovChain");
    let slots: Vec<&str> = a.iter().map(|(s, _)| *s).collect();
    assert_eq!(slots, ["mean0", "precision0", "dynamics", "noise"]);
    // Known probability tables: data inputs used as probabilities are Simplex-valued.
    let known = build(
        include_str!("../../../../examples/bayespy/hmm_known/hmm_known.occam"),
        "hmm_known.occam",
        &DataShapes::new()
            .with("y", 100, 1)
            .with("p0", 1, 2)
            .with("A", 2, 2)
            .with("P", 2, 3),
    );
    for t in ["p0", "A", "P"] {
        assert_eq!(known.variable(t).unwrap().kind, ValueKind::Simplex, "{t}");
    }
}

#[test]
fn asia_resolves_with_two_q_blocks() {
    let src = include_str!("../../../../examples/asia/asia.occam");
    let mut shapes = DataShapes::new().with("xray", 1, 1).with("dysp", 1, 1);
    for (name, rows, cols) in [
        ("p_asia", 1, 2),
        ("p_smoke", 1, 2),
        ("p_tub", 2, 2),
        ("p_lung", 2, 2),
        ("p_bronc", 2, 2),
        ("p_either", 2, 4),
        ("p_xray", 2, 2),
        ("p_dysp", 2, 4),
    ] {
        shapes.insert(name, rows, cols);
    }
    let m = build(src, "asia.occam", &shapes);
    let names =
        |vs: &[usize]| -> Vec<String> { vs.iter().map(|&v| m.variables[v].name.clone()).collect() };
    assert_eq!(m.q_blocks.len(), 2);
    assert_eq!(names(&m.q_blocks[0].members), ["asia", "tub"]);
    assert_eq!(names(&m.q_blocks[1].members), ["smoke", "lung", "bronc"]);
    // `dysp` reads `bronc` but only one member of that block: no evidence joins.
    assert!(m.q_blocks.iter().all(|b| b.evidence.is_empty()));
}

mod repeats {
    //! What the check of Winn (2.41) accepts: collected sums, selectors, data and observed values.

    use occam_lang::ir::{ConstValue, ExprOp, Node};
    use occam_lang::{compile, DataShapes};

    fn ok(src: &str, shapes: &DataShapes) -> occam_lang::Model {
        compile(src, "m.occam", shapes).unwrap_or_else(|e| panic!("{}", e.render_plain()))
    }

    /// The mean of `y` (its first argument).
    fn mean(m: &occam_lang::Model, name: &str) -> ExprOp {
        match &m.variable(name).unwrap().node {
            Node::Stochastic { args, .. } => args[0].value.op.clone(),
            Node::Deterministic { expr } => expr.op.clone(),
            Node::Data => panic!("data"),
        }
    }

    /// `[var name, coefficient]` of a collected term `r * c`.
    fn term(op: &ExprOp) -> (String, f64) {
        match op {
            ExprOp::Product(p) => match (&p[0].op, &p[1].op) {
                (ExprOp::Var(r), ExprOp::Const(ConstValue::Scalar(c))) => (r.name.clone(), *c),
                other => panic!("{other:?}"),
            },
            ExprOp::Var(r) => (r.name.clone(), 1.0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn repeated_terms_of_a_sum_are_collected() {
        let none = DataShapes::new();
        let m = ok("a ~ Gaussian(0, 1)\nb = a + a\ny ~ Gaussian(b, 1)\n", &none);
        assert_eq!(term(&mean(&m, "b")), ("a".to_string(), 2.0));
        let m = ok(
            "a ~ Gaussian(0, 1)\nb ~ Gaussian(0, 1)\ny ~ Gaussian(2*a + b + a + 1, 1)\n",
            &none,
        );
        let ExprOp::Sum(parts) = mean(&m, "y") else {
            panic!("not a sum")
        };
        assert_eq!(parts.len(), 3);
        assert_eq!(term(&parts[0].op), ("a".to_string(), 3.0));
        assert_eq!(term(&parts[1].op), ("b".to_string(), 1.0));
        assert!(matches!(parts[2].op, ExprOp::Const(ConstValue::Scalar(c)) if c == 1.0));
        // `1 * a` is `a`.
        let m = ok("a ~ Gaussian(0, 1)\ny ~ Gaussian(a + 1 * a, 1)\n", &none);
        assert_eq!(term(&mean(&m, "y")), ("a".to_string(), 2.0));
        // `a + -1*a`: the coefficient may be 0 (kept as `0 * a`).
        let m = ok(
            "a ~ Gaussian(0, 1)\ny ~ Gaussian(a + -1 * a + 2, 1)\n",
            &none,
        );
        let ExprOp::Sum(parts) = mean(&m, "y") else {
            panic!("not a sum")
        };
        assert_eq!(term(&parts[0].op), ("a".to_string(), 0.0));
    }

    #[test]
    fn selectors_data_and_observed_values_are_not_repeats() {
        let none = DataShapes::new();
        // One selector gating two slots, and twice in one slot (`mu[z] + mu[z]` = `2 * mu[z]`).
        ok("plate K = 3\nplate N = 4\npi ~ Dirichlet(1) over K\nmu[K] ~ Gaussian(0, 1)\ntau[K] ~ Gamma(1, 1)\nz[N] ~ Categorical(pi)\ny[N] ~ Gaussian(mu[z] + mu[z], tau[z])\nx[N] ~ Gaussian(mu[z], tau[z])\n", &none);
        // Polynomial features of a data input and of an observed variable.
        let shapes = DataShapes::new().with("y", 4, 1).with("x", 4, 1);
        ok("plate N from data y\ndata x[N]\nw1 ~ Gaussian(0, 1)\nw2 ~ Gaussian(0, 1)\ny[N] ~ Gaussian(w1*x + w2*x*x, 1)\n", &shapes);
        ok("plate N from data y\nx[N] ~ Gaussian(0, 1)\nw1 ~ Gaussian(0, 1)\nw2 ~ Gaussian(0, 1)\ny[N] ~ Gaussian(w1*x + w2*x*x, 1)\n", &shapes);
        // A parent shared by many children, and by two slots of one child through different
        // deterministic variables, is no repeat within one expression.
        ok("plate N = 3\na ~ Gaussian(0, 1)\nt ~ Gamma(1, 1)\nm = a * 2\ny[N] ~ Gaussian(m, t)\nz[N] ~ Gaussian(a, t)\n", &none);
    }
}
