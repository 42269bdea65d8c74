//! The guide's commands that are not `occam` examples: every line of a ```` ```sh ```` block and
//! every `$ cargo ...` line of a console block is either run by CI (the entry says where) or
//! listed with the reason it is not. The `occam` examples are run by `docs`, the Python examples
//! by `python/tests/test_guide.py`.

use super::docs::{documents, root};

/// Every other command the guide shows (lines of ```` ```sh ```` blocks, `$ cargo ...` lines of
/// console blocks), with how CI runs it, or why it does not. The Python examples (```` ```python
/// ````) are run by `python/tests/test_guide.py`. A command added to the guide without an entry
/// here fails `every_other_guide_command_is_run_or_accounted_for`, so nothing the guide tells a
/// user to type is left unchecked by accident.
const OTHER_COMMANDS: &[(&str, &str)] = &[
    ("git clone <the repository> occam", "CI starts from a clone"),
    ("cd occam", "CI runs at the repository root"),
    (
        "cargo build --release",
        "not run: CI builds the same code in the dev profile (a release build would add about 20 \
         minutes on CI's 2 cores); the build times in chapter 1 were measured with it",
    ),
    (
        "cargo install --path crates/occam-cli",
        "not run: a release build into ~/.cargo/bin (see `cargo build --release`)",
    ),
    ("scripts/test", "run by .ci/run"),
    (
        "cargo run --release -p occam-studies --example microarray_spot -- examples/microarray_spot 1",
        "not run: the occam-studies spot tests fit the same generated images (seeds 1–3) in the \
         dev profile and check the flags, centres, radii and intensities it prints",
    ),
    ("cargo test --workspace", "run by scripts/test"),
    ("cargo test -p occam-cli --test it docs::", "part of `cargo test --workspace`"),
    (
        "OCCAM_FUZZ_CASES=20000 cargo test -p occam --test it fuzz::",
        "run by `cargo test --workspace` with the default number of cases",
    ),
    (
        "OCCAM_FUZZ_CASES=20000 cargo test -p occam-lang --test it fuzz::",
        "run by `cargo test --workspace` with the default number of cases",
    ),
    (
        "OCCAM_FUZZ_CASES=2000 cargo test -p occam-cli --test it fuzz_flags::",
        "run by `cargo test --workspace` with the default number of cases",
    ),
    (
        "OCCAM_FUZZ_CASES=5000 OCCAM_FUZZ_SEED=1 target/pyenv/bin/python -m pytest python/tests/test_fuzz.py",
        "run by scripts/test (in target/pyenv) with the default number of cases and seed",
    ),
    (
        "scripts/wheel",
        "run by scripts/test as `scripts/wheel --dev`: the same script in cargo's dev profile",
    ),
    (
        "pip install target/wheels/occam-*.whl",
        "run by scripts/test, into a fresh virtual environment with no compiler on PATH",
    ),
    (
        "pip install target/wheels/occam-*.whl scikit-learn",
        "run by scripts/test (its pinned scikit-learn)",
    ),
    (
        "occam nn reproduce sunspots --full --out out/",
        "not run: the papers' full schedules take hours; the tests of occam-nn run every \
         reproduction on a shortened schedule",
    ),
    ("occam nn reproduce tecator --full --out out/", "as sunspots --full"),
    ("occam nn reproduce t61 --full --out out/", "as sunspots --full"),
    ("occam nn reproduce protocols --full --out out/", "as sunspots --full"),
    ("occam nn reproduce ltu --full --out out/", "as sunspots --full"),
    (
        "cargo run --release -p occam-nn --example reproduce -- full out/ sunspots tecator protocols",
        "not run: as `occam nn reproduce ... --full`; `cargo test` compiles the example",
    ),
    (
        "cargo run --release -p occam-nn --example ltu_table_3_1",
        "not run: as `occam nn reproduce ltu --full`; `cargo test` compiles the example",
    ),
    (
        "cargo bench -p occam-nn --bench fits",
        "not run: a benchmark (fat LTO); `cargo clippy --all-targets` compiles it",
    ),
    (
        "bench/peers/setup_advi.sh",
        "not run: downloads JAX and NumPyro for the peer benchmark",
    ),
    (
        "cargo build --release -p occam-cli",
        "not run: a release build (see `cargo build --release`)",
    ),
    (
        "bench/peers/.venv-advi/bin/python bench/peers/advi_bnn.py",
        "not run: the peer benchmark (see bench/peers/setup_advi.sh)",
    ),
    (
        "cargo run --release -p occam-studies --example polynomial -- examples/polynomial",
        "not run as such: occam-studies' test \
         the_evidence_peaks_at_the_true_degree_while_the_likelihood_rises runs the same study",
    ),
];

/// The commands of the guide's ```` ```sh ```` blocks (comments and blank lines dropped) and the
/// `$ ` lines of its console blocks that are not `occam` commands, with their places.
fn other_commands(file: &str, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut info: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("```") {
            info = match info {
                None => Some(rest.split_whitespace().next().unwrap_or("")),
                Some(_) => None,
            };
            continue;
        }
        let command = match info {
            Some("sh") => {
                let code = match t.find(" #") {
                    Some(at) => &t[..at],
                    None => t,
                };
                (!code.is_empty() && !code.starts_with('#')).then(|| code.trim().to_string())
            }
            Some("console") => line
                .strip_prefix("$ ")
                .filter(|c| !c.starts_with("occam "))
                .map(|c| c.trim().to_string()),
            _ => None,
        };
        if let Some(c) = command {
            out.push((format!("{file}:{}", i + 1), c));
        }
    }
    out
}

#[test]
fn every_other_guide_command_is_run_or_accounted_for() {
    let root = root();
    let mut unknown = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for path in documents() {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (place, command) in other_commands(&name, &text) {
            match OTHER_COMMANDS.iter().find(|(c, _)| *c == command) {
                Some((c, _)) => {
                    seen.insert(*c);
                }
                None => unknown.push(format!("{place}: {command}")),
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "guide commands neither run nor listed in OTHER_COMMANDS (docs.rs):\n{}",
        unknown.join("\n")
    );
    // An entry whose command left the guide is dead weight: remove it.
    let stale: Vec<&str> = OTHER_COMMANDS
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !seen.contains(c))
        .collect();
    assert!(
        stale.is_empty(),
        "OTHER_COMMANDS lists commands the guide no longer shows: {stale:?}"
    );
}

#[test]
fn other_commands_are_read_from_sh_blocks_and_dollar_lines() {
    let text = "```sh\ncargo build   # comment\n# only a comment\n\nscripts/test\n```\n\
                ```console\n$ occam fit m.occam\n$ cargo run\n   Compiling x\n```\n\
                ```python\nimport occam\n```\n";
    let found = other_commands("g.md", text);
    assert_eq!(
        found,
        vec![
            ("g.md:2".to_string(), "cargo build".to_string()),
            ("g.md:5".to_string(), "scripts/test".to_string()),
            ("g.md:9".to_string(), "cargo run".to_string()),
        ]
    );
}
