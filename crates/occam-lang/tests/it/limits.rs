//! Hostile sizes: long operator chains and deep nesting end in a located error, never a stack
//! overflow (the passes after the parser walk expression trees recursively).

fn model_with(expr: &str) -> String {
    format!("plate N = 3\na ~ Gaussian(0, 1)\nb = {expr}\ny[N] ~ Gaussian(b, 1)\n")
}

fn too_deep(src: &str) {
    let err = occam_lang::parse(src, "m.occam").expect_err("accepted");
    let text = err.render_plain();
    assert!(
        text.contains("nested too deeply") && text.contains("m.occam:3:"),
        "{}",
        &text[..text.len().min(400)]
    );
}

#[test]
fn long_chains_are_a_located_error() {
    for op in ["+", "*", "@"] {
        too_deep(&model_with(&vec!["a"; 10_000].join(op)));
    }
    too_deep(&model_with(&vec!["1"; 10_000].join("+")));
}

#[test]
fn deep_nesting_is_a_located_error() {
    too_deep(&model_with(&format!(
        "{}a{}",
        "(".repeat(5_000),
        ")".repeat(5_000)
    )));
    too_deep(&model_with(&format!("{}a", "-".repeat(5_000))));
    too_deep(&model_with(&format!(
        "{}a{}",
        "dot(a, ".repeat(5_000),
        ")".repeat(5_000)
    )));
}

#[test]
fn chains_within_the_limit_resolve() {
    let src = model_with(&vec!["a"; 500].join(" + "));
    let shapes = occam_lang::DataShapes::new();
    occam_lang::compile(&src, "m.occam", &shapes).expect("500 terms resolve");
}
