//! Arbitrary input never panics the lexer, parser, resolver or renderers, and every diagnostic
//! names its place (`f.occam:line:column`). Part of the fuzz harness (see `crates/occam/tests/it/fuzz.rs`
//! for the data readers, `.fg` files and settings): `OCCAM_FUZZ_CASES=N` sets the cases per
//! property for a longer local run (default 256).

#[path = "../support/fuzz_config.rs"]
mod fuzz_config;

use occam_lang::{compile, parse, DataShapes, Diagnostics};
use proptest::prelude::*;

const MODELS: &[&str] = &[
    include_str!("../../../../examples/vibes_tutorial/mixture.occam"),
    include_str!("../../../../examples/vibes_tutorial/separable.occam"),
    include_str!("../../../../examples/models/bpca.occam"),
    include_str!("../../../../examples/models/hmm.occam"),
    include_str!("../../../../examples/models/regression.occam"),
    include_str!("../../../../examples/models/factor_analysis.occam"),
];

const WORDS: &[&str] = &[
    "plate",
    "plates",
    "from",
    "data",
    "observe",
    "let",
    "const",
    "init",
    "over",
    "map",
    "x",
    "y",
    "mu",
    "tau",
    "pi",
    "lambda",
    "K",
    "N",
    "D",
    "Q",
    "Gaussian",
    "Gamma",
    "Dirichlet",
    "Categorical",
    "GaussianARD",
    "MvGaussian",
    "Wishart",
    "Beta",
    "Bernoulli",
    "dot",
    "matvec",
    "concat",
    "sum",
    "product",
    "identity",
    "random",
    "prior",
    "mean",
    "precision",
    "shape",
    "rate",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    "~",
    "+",
    "-",
    "*",
    "@",
    "\n",
    ";",
    "#",
    "0",
    "1",
    "-3",
    "2.5",
    "1e-3",
    "1e999",
    "μ",
    "$",
];

fn data() -> DataShapes {
    DataShapes::new()
        .with("x", 5, 2)
        .with("y", 4, 3)
        .with("X", 4, 3)
}

/// Compiles and renders; checks every span lies inside the source.
fn exercise(src: &str) {
    let _ = parse(src, "f.occam");
    match compile(src, "f.occam", &data()) {
        Ok(model) => {
            let json = serde_json::to_string(&model).expect("serialisable");
            let back: occam_lang::Model = serde_json::from_str(&json).expect("deserialisable");
            assert_eq!(back.variables.len(), model.variables.len());
        }
        Err(d) => check_diagnostics(src, &d),
    }
}

fn check_diagnostics(src: &str, d: &Diagnostics) {
    assert!(!d.items.is_empty());
    for item in &d.items {
        assert!(item.span.start <= item.span.end, "{item:?}");
        assert!(item.span.end <= src.len(), "{item:?}");
    }
    let plain = d.render_plain();
    assert!(plain.starts_with("error: "));
    assert!(plain.contains("f.occam:"), "no place named:\n{plain}");
    let _ = d.render_fancy(false);
}

fn mutate(base: &str, edits: &[(usize, usize, String)]) -> String {
    let mut s: Vec<char> = base.chars().collect();
    for (pos, del, ins) in edits {
        let at = pos % (s.len() + 1);
        let end = (at + del).min(s.len());
        s.splice(at..end, ins.chars());
    }
    s.into_iter().collect()
}

proptest! {
    #![proptest_config(fuzz_config::config(256))]

    #[test]
    fn arbitrary_strings(src in "\\PC{0,200}") {
        exercise(&src);
    }

    #[test]
    fn arbitrary_bytes_as_text(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup(words in proptest::collection::vec(proptest::sample::select(WORDS), 0..60)) {
        exercise(&words.join(" "));
    }

    #[test]
    fn mutated_models(
        which in 0..MODELS.len(),
        edits in proptest::collection::vec(
            (any::<usize>(), 0usize..4, proptest::sample::select(WORDS).prop_map(String::from)),
            1..4,
        ),
    ) {
        exercise(&mutate(MODELS[which], &edits));
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let src = format!(
        "y ~ Gaussian({}0{}, 1)\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let err = compile(&src, "deep.occam", &DataShapes::new()).unwrap_err();
    assert!(
        err.render_plain().contains("nested too deeply"),
        "{}",
        err.render_plain()
    );
    let src = format!("y ~ Gaussian({}1, 1)\n", "-".repeat(5000));
    assert!(compile(&src, "deep.occam", &DataShapes::new()).is_err());
}

#[test]
fn long_dependency_chains_resolve() {
    let mut src = String::from("a0 ~ Gaussian(0, 1)\n");
    for i in 1..2000 {
        src.push_str(&format!("a{i} ~ Gaussian(a{}, 1)\n", i - 1));
    }
    let m = compile(&src, "chain.occam", &DataShapes::new()).unwrap();
    assert_eq!(m.topological_order.len(), 2000);
    // A long cycle is found without recursion.
    src.push_str("b ~ Gaussian(c, 1)\nc ~ Gaussian(b, 1)\n");
    let src = src.replacen("a0 ~ Gaussian(0, 1)", "a0 ~ Gaussian(a1999, 1)", 1);
    let err = compile(&src, "cycle.occam", &DataShapes::new()).unwrap_err();
    assert_eq!(err.items.len(), 2, "{}", err.render_plain());
}
