//! Golden outputs: `fit --json`, `fit`, `compare`, `check`, `graph` and `sample` on every example
//! print and write exactly what the CLI printed before the library moved out of it
//! (`tests/golden/cases.txt`; `tests/golden/make.sh` records them with a given binary).

mod common;

use std::path::Path;

use common::{occam, root};

fn compare_text(case: &str, what: &str, got: &str, want: &str, failures: &mut Vec<String>) {
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
        failures.push(format!(
            "{case}: {what} differs from the golden output at line {}:\n  got:  {}\n  want: {}",
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            want.lines().nth(line).unwrap_or("<end>")
        ));
    }
}

#[test]
fn every_example_prints_its_golden_output() {
    let dir = root().join("crates/occam-cli/tests/golden");
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (name, args) = line.split_once('|').unwrap();
        let name = name.trim();
        let out = tempfile::tempdir().unwrap();
        let outs = out.path().display().to_string();
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| a.replace("{OUT}", &outs))
            .collect();
        let o = occam().args(&args).output().unwrap();
        let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).unwrap();
        let code = o.status.code().unwrap_or(-1).to_string();
        compare_text(name, "exit code", &code, read("code").trim(), &mut failures);
        let stdout = String::from_utf8_lossy(&o.stdout).replace(&outs, "{OUT}");
        let stderr = String::from_utf8_lossy(&o.stderr).replace(&outs, "{OUT}");
        compare_text(name, "stdout", &stdout, &read("stdout"), &mut failures);
        compare_text(name, "stderr", &stderr, &read("stderr"), &mut failures);
        for f in std::fs::read_dir(out.path()).unwrap() {
            let f = f.unwrap().path();
            let file = f.file_name().unwrap().to_string_lossy().into_owned();
            let want = std::fs::read_to_string(dir.join(&file))
                .unwrap_or_else(|_| panic!("{name}: wrote {file}, which has no golden copy"));
            let got = std::fs::read_to_string(&f).unwrap();
            compare_text(name, &file, &got, &want, &mut failures);
        }
        assert!(Path::new(&dir).is_dir());
        count += 1;
    }
    assert!(count >= 25, "only {count} golden cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
