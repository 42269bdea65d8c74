//! The user guide's command examples run: every fenced block marked ```` ```console ```` in
//! `docs/guide/*.md` and the top-level `README.md` is executed, so documented commands cannot
//! break and documented output cannot drift.
//!
//! In such a block, a line `$ occam ARGS...` runs the `occam` binary from the repository root with
//! `OCCAM_PLAIN=1` and `ARGS` split on whitespace; `{tmp}` (in arguments and in expected lines)
//! is a temporary directory fresh for each block and shared by its commands, so one command can
//! read what an earlier one wrote. The command must exit with 0, or with the code given in the
//! block's info string (```` ```console exit=2 ````). Every following line up to the next `$`
//! line, except blank lines and `...`, must appear verbatim (as a substring, trailing spaces
//! ignored) in the command's stdout or stderr. Lines `$ OTHER ...` (e.g. `$ cargo ...`) are shown
//! but not run, and their output lines are not checked.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// One `$ occam ...` command of a block, with the lines its output must contain.
#[derive(Debug, Clone, PartialEq)]
struct Example {
    /// Where it is written, `file:line`, for messages.
    place: String,
    /// The arguments after `occam`, unsplit.
    args: String,
    /// Output lines that must appear in stdout or stderr.
    expect: Vec<String>,
}

/// A ```` ```console ```` block.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// The exit code every command of the block must return.
    exit: i32,
    /// Its commands in order.
    examples: Vec<Example>,
}

/// Parses the console blocks of a Markdown file. `file` names it in messages; a malformed info
/// string (`exit=x`) or an unterminated block is an error.
fn parse_blocks(file: &str, text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let mut words = info.split_whitespace();
        let is_console = words.next() == Some("console");
        let mut exit = 0;
        if is_console {
            for w in words {
                match w.strip_prefix("exit=") {
                    Some(v) => {
                        exit = v.parse().map_err(|_| {
                            format!("{file}:{}: bad exit code in `{}`", i + 1, line.trim())
                        })?
                    }
                    None => {
                        return Err(format!(
                            "{file}:{}: unknown attribute `{w}` in `{}`",
                            i + 1,
                            line.trim()
                        ))
                    }
                }
            }
        }
        let mut examples: Vec<Example> = Vec::new();
        // Whether the lines after the current `$` line belong to an occam command.
        let mut in_occam = false;
        let mut closed = false;
        for (j, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                closed = true;
                break;
            }
            if !is_console {
                continue;
            }
            if let Some(cmd) = l.strip_prefix("$ ") {
                in_occam = false;
                if let Some(args) = cmd.strip_prefix("occam ") {
                    examples.push(Example {
                        place: format!("{file}:{}", j + 1),
                        args: args.trim().to_string(),
                        expect: Vec::new(),
                    });
                    in_occam = true;
                }
                continue;
            }
            let l = l.trim_end();
            if in_occam && !l.is_empty() && l != "..." {
                if let Some(e) = examples.last_mut() {
                    e.expect.push(l.to_string());
                }
            }
        }
        if !closed {
            return Err(format!("{file}:{}: code block is not closed", i + 1));
        }
        if is_console && !examples.is_empty() {
            blocks.push(Block { exit, examples });
        }
    }
    Ok(blocks)
}

/// The output of one run: exit code, stdout, stderr.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Checks one command's output against its example; `Err` says what differs.
fn check(example: &Example, exit: i32, ran: &Ran, tmp: &str) -> Result<(), String> {
    let shown = || {
        format!(
            "--- stdout ---\n{}--- stderr ---\n{}",
            ran.stdout, ran.stderr
        )
    };
    if ran.code != Some(exit) {
        return Err(format!(
            "{}: `occam {}` exited with {:?}, the guide says {exit}\n{}",
            example.place,
            example.args,
            ran.code,
            shown()
        ));
    }
    for want in &example.expect {
        let want = want.replace("{tmp}", tmp);
        if !ran.stdout.contains(&want) && !ran.stderr.contains(&want) {
            return Err(format!(
                "{}: `occam {}` did not print the documented line\n  {want}\n{}",
                example.place,
                example.args,
                shown()
            ));
        }
    }
    Ok(())
}

/// The repository root, where the guide's commands run.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Runs every command of a block in a fresh temporary directory `{tmp}`.
fn run_block(block: &Block) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tmp = dir.path().to_str().ok_or("temporary path is not UTF-8")?;
    for ex in &block.examples {
        let args: Vec<String> = ex
            .args
            .split_whitespace()
            .map(|a| a.replace("{tmp}", tmp))
            .collect();
        let out = Command::cargo_bin("occam")
            .map_err(|e| e.to_string())?
            .current_dir(root())
            .env("OCCAM_PLAIN", "1")
            .args(&args)
            .output()
            .map_err(|e| format!("{}: cannot run occam: {e}", ex.place))?;
        let ran = Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        check(ex, block.exit, &ran, tmp)?;
    }
    Ok(())
}

/// The guide's chapters and the top-level README, sorted.
pub(crate) fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("docs/guide exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.push(root.join("README.md"));
    files
}

#[test]
fn guide_commands_run_and_print_what_the_guide_shows() {
    let root = root();
    let mut failures = Vec::new();
    let mut commands = 0;
    for path in documents() {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let blocks = match parse_blocks(&name, &text) {
            Ok(b) => b,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for block in &blocks {
            commands += block.examples.len();
            if let Err(e) = run_block(block) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The guide documents the commands by example; losing them all (say, by renaming the info
    // string) must not pass silently.
    assert!(commands >= 20, "only {commands} documented commands found");
}

#[test]
fn every_guide_chapter_is_in_the_table_of_contents() {
    let root = root();
    let toc = std::fs::read_to_string(root.join("docs/guide/README.md")).unwrap();
    for path in documents() {
        let name = path.file_name().unwrap().to_str().unwrap();
        if path.parent().unwrap().ends_with("docs/guide") && name != "README.md" {
            assert!(
                toc.contains(&format!("({name})")),
                "docs/guide/README.md does not link {name}"
            );
        }
    }
}

#[test]
fn chapters_are_numbered_as_their_files_without_gaps() {
    // `NN-name.md` opens with `# N. ` and is item N of the table of contents; the numbers run
    // 1, 2, ... without a gap or a repeat.
    let root = root();
    let toc = std::fs::read_to_string(root.join("docs/guide/README.md")).unwrap();
    let mut numbers = Vec::new();
    for path in documents() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(n) = name.split('-').next().and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let title = text.lines().next().unwrap_or("");
        assert!(
            title.starts_with(&format!("# {n}. ")),
            "{name} opens with `{title}`, not `# {n}. ...`"
        );
        assert!(
            toc.contains(&format!("{n}. [")) && toc.contains(&format!("]({name})")),
            "docs/guide/README.md does not list {name} as item {n}"
        );
        numbers.push(n);
    }
    assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>());
}

const SAMPLE: &str = "\
Intro.

```console
$ occam check examples/bayespy/quickstart/quickstart.occam
examples/bayespy/quickstart/quickstart.occam: ok
...
  N = 10 (rows of data `y`)

$ cargo build
   Compiling occam
```

```rust
$ occam not run
```

```console exit=2
$ occam fit   examples/nowhere.occam
error: cannot read
$ occam graph --out {tmp}/g.svg m.occam
wrote {tmp}/g.svg
```
";

#[test]
fn parser_finds_commands_expected_lines_and_exit_codes() {
    let blocks = parse_blocks("sample.md", SAMPLE).unwrap();
    assert_eq!(
        blocks,
        vec![
            Block {
                exit: 0,
                examples: vec![Example {
                    place: "sample.md:4".into(),
                    args: "check examples/bayespy/quickstart/quickstart.occam".into(),
                    expect: vec![
                        "examples/bayespy/quickstart/quickstart.occam: ok".into(),
                        "  N = 10 (rows of data `y`)".into(),
                    ],
                }],
            },
            Block {
                exit: 2,
                examples: vec![
                    Example {
                        place: "sample.md:18".into(),
                        args: "fit   examples/nowhere.occam".into(),
                        expect: vec!["error: cannot read".into()],
                    },
                    Example {
                        place: "sample.md:20".into(),
                        args: "graph --out {tmp}/g.svg m.occam".into(),
                        expect: vec!["wrote {tmp}/g.svg".into()],
                    },
                ],
            },
        ]
    );
}

#[test]
fn parser_rejects_bad_info_strings_and_open_blocks() {
    let e = parse_blocks("a.md", "```console exit=two\n$ occam x\n```\n").unwrap_err();
    assert!(e.starts_with("a.md:1: bad exit code"), "{e}");
    let e = parse_blocks("a.md", "```console timeout=3\n$ occam x\n```\n").unwrap_err();
    assert!(e.contains("unknown attribute `timeout=3`"), "{e}");
    let e = parse_blocks("a.md", "text\n```console\n$ occam x\n").unwrap_err();
    assert_eq!(e, "a.md:2: code block is not closed");
}

#[test]
fn matcher_accepts_the_shown_output_and_rejects_drift() {
    let ex = Example {
        place: "g.md:3".into(),
        args: "sample m.occam --out {tmp}/x.csv".into(),
        expect: vec![
            "lower bound L = -58.202875".into(),
            "wrote {tmp}/x.csv".into(),
        ],
    };
    let ran = |code, stdout: &str, stderr: &str| Ran {
        code: Some(code),
        stdout: stdout.into(),
        stderr: stderr.into(),
    };
    let good = ran(
        0,
        "model m\nlower bound L = -58.202875 after 4 iterations\n",
        "wrote /t/x.csv\n",
    );
    assert_eq!(check(&ex, 0, &good, "/t"), Ok(()));
    // A changed number, a wrong exit code and a different temporary directory are all caught.
    let drifted = ran(
        0,
        "lower bound L = -58.202876 after 4 iterations\n",
        "wrote /t/x.csv\n",
    );
    let e = check(&ex, 0, &drifted, "/t").unwrap_err();
    assert!(
        e.contains("did not print the documented line\n  lower bound L = -58.202875"),
        "{e}"
    );
    let e = check(&ex, 2, &good, "/t").unwrap_err();
    assert!(e.contains("exited with Some(0), the guide says 2"), "{e}");
    assert!(check(&ex, 0, &good, "/u").is_err());
}

#[test]
fn a_deliberately_broken_block_fails_when_run() {
    // A real command whose shown output is wrong, and one whose exit code is wrong.
    let wrong_output = "```console\n\
        $ occam check examples/bayespy/quickstart/quickstart.occam\n\
        N = 11 (rows of data `y`)\n\
        ```\n";
    let wrong_exit = "```console exit=2\n\
        $ occam check examples/bayespy/quickstart/quickstart.occam\n\
        ```\n";
    let right = "```console\n\
        $ occam check examples/bayespy/quickstart/quickstart.occam\n\
        N = 10 (rows of data `y`)\n\
        ```\n";
    let run = |text: &str| {
        let blocks = parse_blocks("broken.md", text).unwrap();
        assert_eq!(blocks.len(), 1);
        run_block(&blocks[0])
    };
    let e = run(wrong_output).unwrap_err();
    assert!(e.contains("broken.md:2: `occam check"), "{e}");
    assert!(e.contains("N = 11 (rows of data `y`)"), "{e}");
    let e = run(wrong_exit).unwrap_err();
    assert!(e.contains("exited with Some(0), the guide says 2"), "{e}");
    assert_eq!(run(right), Ok(()));
}
