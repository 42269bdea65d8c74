//! The command lists and option tables of the documentation are generated from `occam --help`,
//! and this test fails when they are stale.
//!
//! `docs/cli.md` is generated whole: every command and subcommand, its usage, arguments and
//! options, as `occam COMMAND --help` prints them. Elsewhere (the guide, the READMEs) a generated
//! part sits between two markers:
//!
//! ```text
//! <!-- generated from occam --help: commands -->         the commands of `occam`
//! <!-- generated from occam --help: commands nn -->      the subcommands of `occam nn`
//! <!-- generated from occam --help: options fit -->      the options of `occam fit`
//! ...
//! <!-- end of generated part -->
//! ```
//!
//! To regenerate everything after changing a command's help (a flag added, a doc comment edited):
//! `scripts/cli-docs` (which runs this test with `OCCAM_WRITE_CLI_DOCS=1`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// One entry of a help section: `--seed <SEED>` (or `fit`, `<MODEL>`) and its description.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    name: String,
    text: String,
}

/// A command's `--help`, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
struct Help {
    /// The description above `Usage:`, paragraphs joined.
    about: String,
    /// The usage line without `Usage: `.
    usage: String,
    commands: Vec<Item>,
    arguments: Vec<Item>,
    options: Vec<Item>,
}

/// Parses clap's help text: the description, `Usage:`, then sections (`Commands:`,
/// `Arguments:`, `Options:`) whose entries start at an indent of at most 6 and whose
/// descriptions follow on the same line (after two spaces) or on deeper-indented lines.
fn parse_help(text: &str) -> Result<Help, String> {
    let mut help = Help::default();
    let mut about = Vec::new();
    let mut section: Option<&str> = None;
    let mut items: Vec<Item> = Vec::new();
    let flush = |section: Option<&str>, items: &mut Vec<Item>, help: &mut Help| {
        let done = std::mem::take(items);
        match section {
            Some("Commands") => help.commands = done,
            Some("Arguments") => help.arguments = done,
            Some("Options") => help.options = done,
            _ => {}
        }
    };
    for line in text.lines() {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            help.usage = usage.trim().to_string();
            section = Some("Usage");
            continue;
        }
        if !line.starts_with(' ') && line.ends_with(':') && !line.is_empty() {
            flush(section, &mut items, &mut help);
            let name = line.trim_end_matches(':');
            if !["Commands", "Arguments", "Options"].contains(&name) {
                return Err(format!("unknown help section `{line}`"));
            }
            section = Some(match name {
                "Commands" => "Commands",
                "Arguments" => "Arguments",
                _ => "Options",
            });
            continue;
        }
        match section {
            None => about.push(line.trim().to_string()),
            Some("Usage") => {
                if !line.trim().is_empty() {
                    return Err(format!("unexpected line after the usage: `{line}`"));
                }
            }
            Some(_) => {
                let indent = line.len() - line.trim_start().len();
                let body = line.trim();
                if body.is_empty() {
                    continue;
                }
                if indent <= 6 {
                    let (name, text) = match body.find("  ") {
                        Some(at) => (&body[..at], body[at..].trim()),
                        None => (body, ""),
                    };
                    items.push(Item {
                        name: name.to_string(),
                        text: text.to_string(),
                    });
                } else {
                    let item = items
                        .last_mut()
                        .ok_or_else(|| format!("description before any entry: `{line}`"))?;
                    if !item.text.is_empty() {
                        item.text.push(' ');
                    }
                    item.text.push_str(body);
                }
            }
        }
    }
    flush(section, &mut items, &mut help);
    help.about = about
        .split(|l| l.is_empty())
        .map(|p| p.join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if help.usage.is_empty() {
        return Err("no `Usage:` line".into());
    }
    Ok(help)
}

/// `occam PATH... --help`, parsed.
fn help_of(path: &[String]) -> Help {
    let out = Command::cargo_bin("occam")
        .unwrap()
        .env("OCCAM_PLAIN", "1")
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "occam {} --help failed",
        path.join(" ")
    );
    let text = String::from_utf8(out.stdout).unwrap();
    parse_help(&text).unwrap_or_else(|e| panic!("occam {} --help: {e}\n{text}", path.join(" ")))
}

/// Every command reachable from `occam`, depth first, with its help (`occam` itself first).
fn all_commands() -> Vec<(Vec<String>, Help)> {
    fn walk(path: Vec<String>, out: &mut Vec<(Vec<String>, Help)>) {
        let help = help_of(&path);
        let subs: Vec<String> = help
            .commands
            .iter()
            .map(|c| c.name.clone())
            // clap's own `help` of a command group (`occam nn help`) repeats the group's list;
            // `occam help` is a command of its own (`occam help distributions`).
            .filter(|n| n != "help" || path.is_empty())
            .collect();
        out.push((path.clone(), help));
        for sub in subs {
            let mut p = path.clone();
            p.push(sub);
            walk(p, out);
        }
    }
    let mut out = Vec::new();
    walk(Vec::new(), &mut out);
    out
}

/// A Markdown table cell: pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn command_name(path: &[String]) -> String {
    std::iter::once("occam")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The table of the subcommands of `prefix`, in the order its `--help` lists them.
fn commands_table(all: &[(Vec<String>, Help)], prefix: &[String]) -> Result<String, String> {
    let mut s = String::from("| command | what it does |\n|---|---|\n");
    let mut rows = 0;
    for (path, help) in all {
        if path.len() == prefix.len() + 1 && path.starts_with(prefix) {
            s += &format!("| `{}` | {} |\n", command_name(path), cell(&help.about));
            rows += 1;
        }
    }
    if rows == 0 {
        return Err(format!("`{}` has no subcommands", command_name(prefix)));
    }
    Ok(s)
}

/// The options table (and the arguments, when the command has any) of one command.
fn options_table(help: &Help) -> String {
    let mut s = String::new();
    if !help.arguments.is_empty() {
        s += "| argument | meaning |\n|---|---|\n";
        for a in &help.arguments {
            s += &format!("| `{}` | {} |\n", cell(&a.name), cell(&a.text));
        }
        s += "\n";
    }
    s += "| option | meaning |\n|---|---|\n";
    for o in &help.options {
        s += &format!("| `{}` | {} |\n", cell(&o.name), cell(&o.text));
    }
    s
}

/// The whole of `docs/cli.md`.
fn reference(all: &[(Vec<String>, Help)]) -> String {
    let mut s = String::from(
        "# Command reference\n\n\
         <!-- Generated from `occam --help` by scripts/cli-docs: do not edit, rerun it. -->\n\n\
         Every command of `occam`, as its `--help` prints it. The user guide \
         (`docs/guide/`) explains them with examples.\n\n",
    );
    s += &commands_table(all, &[]).expect("occam has commands");
    for (path, help) in all.iter().skip(1) {
        let depth = "#".repeat(path.len() + 1);
        s += &format!("\n{depth} `{}`\n\n{}\n\n", command_name(path), help.about);
        s += &format!("```text\n{}\n```\n\n", help.usage);
        if !help.commands.is_empty() {
            s += &commands_table(all, path).expect("listed subcommands");
        } else {
            s += &options_table(help);
        }
    }
    s
}

const BEGIN: &str = "<!-- generated from occam --help: ";
const END: &str = "<!-- end of generated part -->";

/// `text` with every generated part regenerated; `file` names it in errors.
fn regenerate(file: &str, text: &str, all: &[(Vec<String>, Help)]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(BEGIN) {
        let line_no = text[..text.len() - rest.len() + at].lines().count() + 1;
        let head_end = rest[at..]
            .find("-->")
            .map(|e| at + e + 3)
            .ok_or_else(|| format!("{file}:{line_no}: unterminated marker"))?;
        let what = rest[at + BEGIN.len()..head_end - 3].trim();
        let end = rest[head_end..]
            .find(END)
            .map(|e| head_end + e)
            .ok_or_else(|| format!("{file}:{line_no}: no `{END}` after `{what}`"))?;
        let mut words = what.split_whitespace();
        let kind = words.next().unwrap_or("");
        let path: Vec<String> = words.map(str::to_string).collect();
        let body = match kind {
            "commands" => commands_table(all, &path),
            "options" => all
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, h)| options_table(h))
                .ok_or_else(|| format!("no command `{}`", command_name(&path))),
            _ => Err(format!("unknown generated part `{what}`")),
        }
        .map_err(|e| format!("{file}:{line_no}: {e}"))?;
        out += &rest[..head_end];
        out += "\n\n";
        out += &body;
        out += "\n";
        out += END;
        rest = &rest[end + END.len()..];
    }
    out += rest;
    Ok(out)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The Markdown files that may hold generated parts: the READMEs, docs/ and the guide.
fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("python/README.md")];
    for dir in ["docs", "docs/guide"] {
        let mut md: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        md.sort();
        files.extend(md);
    }
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("README.md"))
        .filter(|p| p.is_file())
        .collect();
    crates.sort();
    files.extend(crates);
    files
}

#[test]
fn generated_command_lists_and_option_tables_match_the_help() {
    let write = std::env::var_os("OCCAM_WRITE_CLI_DOCS").is_some();
    let all = all_commands();
    let root = root();
    let mut stale = Vec::new();
    let mut wanted = vec![(root.join("docs/cli.md"), reference(&all))];
    let mut parts = 0;
    for path in markdown_files() {
        if path.ends_with("docs/cli.md") {
            continue;
        }
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        parts += text.matches(BEGIN).count();
        let new = regenerate(&name, &text, &all).unwrap_or_else(|e| panic!("{e}"));
        wanted.push((path, new));
    }
    for (path, new) in wanted {
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != new {
            if write {
                std::fs::write(&path, new).unwrap();
                eprintln!("wrote {}", path.display());
            } else {
                stale.push(path.strip_prefix(&root).unwrap().display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated from `occam --help` and now stale: {}; regenerate them with scripts/cli-docs",
        stale.join(", ")
    );
    // The guide's and the READMEs' lists are generated parts; losing every marker (say, by a
    // rename of the marker text) must not pass silently.
    assert!(parts >= 3, "only {parts} generated parts found");
}

#[test]
fn every_subcommand_of_the_help_is_in_the_reference() {
    let all = all_commands();
    let text = reference(&all);
    for (path, _) in &all[1..] {
        assert!(
            text.contains(&format!("`{}`", command_name(path))),
            "{} is missing",
            command_name(path)
        );
    }
    // The walk found the commands the guide teaches (a parser that lost the `Commands:` section
    // would find none).
    for c in [
        "check", "fit", "compare", "predict", "sample", "graph", "nn", "latent",
    ] {
        assert!(all.iter().any(|(p, _)| p == &[c.to_string()]), "{c}");
    }
}

const SAMPLE_HELP: &str = "\
Fit several models.

More about it.

Usage: occam compare [OPTIONS] <MODELS>...

Arguments:
  <MODELS>...  Model files

Options:
      --data <NAME=FILE>
          Attach data: NAME=FILE (.csv with a header)
          or a | b
  -s, --seed <SEED>  Seed [default: 0]
  -h, --help         Print help
";

#[test]
fn help_parser_reads_descriptions_on_the_same_and_the_next_lines() {
    let h = parse_help(SAMPLE_HELP).unwrap();
    assert_eq!(h.about, "Fit several models. More about it.");
    assert_eq!(h.usage, "occam compare [OPTIONS] <MODELS>...");
    assert_eq!(
        h.arguments,
        vec![Item {
            name: "<MODELS>...".into(),
            text: "Model files".into()
        }]
    );
    let names: Vec<&str> = h.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        ["--data <NAME=FILE>", "-s, --seed <SEED>", "-h, --help"]
    );
    assert_eq!(
        h.options[0].text,
        "Attach data: NAME=FILE (.csv with a header) or a | b"
    );
    assert_eq!(h.options[1].text, "Seed [default: 0]");
    let table = options_table(&h);
    assert!(table.contains(
        "| `--data <NAME=FILE>` | Attach data: NAME=FILE (.csv with a header) or a \\| b |"
    ));
    assert!(parse_help("no usage here\n").is_err());
    assert!(parse_help("Usage: x\n\nWeird:\n").is_err());
}

#[test]
fn markers_are_regenerated_and_bad_ones_are_located_errors() {
    let help = |about: &str| Help {
        about: about.into(),
        usage: "u".into(),
        ..Help::default()
    };
    let all = vec![
        (vec![], help("top")),
        (vec!["fit".to_string()], help("Run it.")),
    ];
    let text = "a\n<!-- generated from occam --help: commands -->\nold\n<!-- end of generated part -->\nb\n";
    let new = regenerate("x.md", text, &all).unwrap();
    assert_eq!(
        new,
        "a\n<!-- generated from occam --help: commands -->\n\n| command | what it does |\n|---|---|\n\
         | `occam fit` | Run it. |\n\n<!-- end of generated part -->\nb\n"
    );
    // Regenerating is idempotent.
    assert_eq!(regenerate("x.md", &new, &all).unwrap(), new);
    let e = regenerate(
        "x.md",
        "\n<!-- generated from occam --help: options nope -->\n<!-- end of generated part -->",
        &all,
    )
    .unwrap_err();
    assert_eq!(e, "x.md:2: no command `occam nope`");
    let e = regenerate(
        "x.md",
        "<!-- generated from occam --help: commands -->\n",
        &all,
    )
    .unwrap_err();
    assert!(
        e.contains("x.md:1: no `<!-- end of generated part -->`"),
        "{e}"
    );
}
