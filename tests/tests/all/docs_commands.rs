//! The commands the documentation shows, and those the component's own output tells a person to
//! run, parse whole with the CLI they name (clap's `try_get_matches_from` over the shim's grammar,
//! which `openclaw graphiti` shares: `docs/cli-grammar.json`); the README's `intent-test` picture is
//! what the CLI prints. Each check is shown failing on a planted command.

use clap::CommandFactory;
use graphiti_openclaw_tests::{tracked_files, workspace};
use host_shim::cli_grammar::Cli;
use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use regex::Regex;
use std::sync::LazyLock;

/// The names a command line starts with, and the words of that CLI's name.
const CLIS: [(&str, usize); 4] = [
    ("./target/release/graphiti-openclaw", 1),
    ("target/release/graphiti-openclaw", 1),
    ("graphiti-openclaw", 1),
    ("openclaw graphiti", 2),
];

/// Why `line` (a command line naming one of the CLIs) does not parse, if it does not.
fn parse_failure(line: &str) -> Option<String> {
    let words = match shlex::split(line) {
        Some(words) if !words.is_empty() => words,
        _ => return Some("not a shell command line (unbalanced quotes)".into()),
    };
    let (cli, skip) = CLIS.iter().find(|(name, n)| words[..*n.min(&words.len())].join(" ") == *name)?;
    let mut args: Vec<String> = vec!["graphiti-openclaw".into()];
    args.extend(words[*skip..].iter().cloned());
    if *cli == "openclaw graphiti" && args.get(1).is_some_and(|c| OPENCLAW_ONLY.contains(&c.as_str())) {
        return None;
    }
    // An option named alone ("give --state-dir DIR") is checked as given before a command.
    if args.len() > 1 && args[1..].iter().all(|a| a.starts_with('-') || a.chars().all(|c| c.is_ascii_uppercase())) {
        args.push("status".into());
    }
    match Cli::command().try_get_matches_from(&args) {
        Ok(_) => None,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => None,
        Err(e) => Some(e.to_string().lines().next().unwrap_or_default().to_string()),
    }
}

/// The commands only OpenClaw has (`docs/cli-grammar.json`): OpenClaw's CLI parses those.
const OPENCLAW_ONLY: [&str; 2] = ["setup", "widget"];

/// Where a CLI's name starts in `text`, at a word's start.
static CLI_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s`(])((?:\./)?(?:target/release/)?graphiti-openclaw\s|openclaw graphiti\s)").unwrap()
});

/// Whether `text` is a command line: a CLI's name, then one of its commands or an option (not
/// prose such as "the graphiti-openclaw CLI"), and no synopsis (`[…]`, `<…>`, `…`, ` | `).
fn is_command_line(text: &str) -> bool {
    let Some((_, skip)) = CLIS.iter().find(|(name, _)| text.starts_with(&format!("{name} "))) else {
        return false;
    };
    let next = text.split_whitespace().nth(*skip).unwrap_or_default();
    let cli = Cli::command();
    let known = next.starts_with('-')
        || cli.get_subcommands().any(|c| c.get_name() == next || c.get_all_aliases().any(|a| a == next))
        || OPENCLAW_ONLY.contains(&next);
    known && !text.contains(['[', '<', '…']) && !text.contains(" | ")
}

/// The command lines of a Markdown text with their line numbers: each line of a code block that
/// starts with a CLI's name (after `$ ` and variable assignments; a trailing `\` continues it), up
/// to a shell operator or comment; and each code span that is a command line.
fn markdown_commands(text: &str) -> Vec<(usize, String)> {
    static CONTINUATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\\n\s*").unwrap());
    static PROMPT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(?:\$\s+)?(?:[A-Z_]+=\S*\s+)*").unwrap());
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => block = Some((range.start, String::new())),
            Event::Text(t) if block.is_some() => block.as_mut().unwrap().1.push_str(&t),
            Event::End(TagEnd::CodeBlock) => {
                let (start, body) = block.take().unwrap();
                // The block's first line is its fence.
                let first = line_of(start) + 1;
                let joined = CONTINUATION.replace_all(&body, " ");
                let mut line_number = first;
                let mut lines = body.split('\n').map(|l| l.ends_with('\\'));
                for line in joined.split('\n') {
                    let command = PROMPT.replace(line, "");
                    let command = [" | ", " && ", " ; ", " > ", " 2>", " #", " &"]
                        .iter()
                        .fold(command.as_ref(), |c, op| c.split(op).next().unwrap())
                        .trim();
                    if is_command_line(command) {
                        found.push((line_number, command.to_string()));
                    }
                    line_number += 1;
                    while lines.next() == Some(true) {
                        line_number += 1;
                    }
                }
            }
            Event::Code(span) if block.is_none() && is_command_line(&span) => {
                found.push((line_of(range.start), span.to_string()));
            }
            _ => {}
        }
    }
    found
}

#[test]
fn every_command_line_the_documentation_shows_parses() {
    let root = workspace();
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in tracked_files(&["*.md"]) {
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else { continue };
        for (line, command) in markdown_commands(&text) {
            checked += 1;
            if let Some(why) = parse_failure(&command) {
                failures.push(format!("{}:{line}: {command}\n    {why}", file.display()));
            }
        }
    }
    assert!(checked > 20, "only {checked} command lines found");
    assert!(failures.is_empty(), "a command the documentation shows does not parse:\n{}", failures.join("\n"));
}

/// The command lines a Rust source's string literals tell a person to run: each in a code span
/// (`` `graphiti-openclaw …` ``), or ending where the literal, a parenthesis, a semicolon or a run of
/// spaces ends it. `{…}` placeholders stand for a word. Comments and constants are not output.
fn output_commands(source: &str) -> Vec<(usize, String)> {
    static CONTINUATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\\n\s*").unwrap());
    static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\{[^}]*\}").unwrap());
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") || code.starts_with("const ") || code.starts_with("pub const ") {
            continue;
        }
        // A string continued on the next line (`\` at the end) reads on into it.
        let rest: String = source.lines().skip(n + 1).take(3).collect::<Vec<_>>().join("\n");
        let joined = CONTINUATION.replace_all(&format!("{line}\n{rest}"), "").replace("\\\"", "'");
        let first = joined.lines().next().unwrap_or_default();
        for captures in CLI_NAME.captures_iter(first) {
            let at = captures.get(1).unwrap().start();
            let quoted = first[..at].ends_with('`');
            let tail = &first[at..];
            let end = if quoted {
                tail.find('`').unwrap_or(tail.len())
            } else {
                [tail.find("  "), tail.find(['(', ')', ';', '"', '`'])].into_iter().flatten().min().unwrap_or(tail.len())
            };
            let command = PLACEHOLDER.replace_all(tail[..end].trim(), "ID").into_owned();
            if is_command_line(&format!("{command} ")) {
                found.push((n + 1, command));
            }
        }
    }
    found
}

#[test]
fn every_command_the_components_output_names_parses() {
    let root = workspace();
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in tracked_files(&["plugin/src/*.rs"]) {
        let source = std::fs::read_to_string(root.join(&file)).unwrap();
        for (line, command) in output_commands(&source) {
            checked += 1;
            if let Some(why) = parse_failure(&command) {
                failures.push(format!("{}:{line}: {command}\n    {why}", file.display()));
            }
        }
    }
    assert!(checked > 5, "only {checked} commands found in plugin/src");
    assert!(failures.is_empty(), "a command the component tells a person to run does not parse:\n{}", failures.join("\n"));
}

#[test]
fn planted_commands_that_do_not_parse_are_found() {
    let doc = "Run `graphiti-openclaw memory forget --confirm ID` to delete.\n\n```sh\ngraphiti-openclaw memories --chat 42 | head\nopenclaw graphiti forget --confirm ID\n```\n";
    let failing: Vec<usize> = markdown_commands(doc)
        .into_iter()
        .filter(|(_, c)| parse_failure(c).is_some())
        .map(|(line, _)| line)
        .collect();
    assert_eq!(failing, [1, 5]);
    let source = "        \"To delete: graphiti-openclaw memory forget --confirm {id}\\n\"\n        \"see `graphiti-openclaw memories --chat ID`\"\n";
    let commands = output_commands(source);
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(parse_failure(&commands[0].1).is_some(), "{commands:?}");
    assert_eq!(parse_failure(&commands[1].1), None);
}

/// The README's first picture is what `intent-test` prints for its prompt: each of its lines, in
/// order, among the lines the CLI prints with the example configuration.
#[test]
fn the_readmes_intent_test_picture_is_what_the_cli_prints() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let block = readme
        .split("```")
        .find(|b| b.trim_start().starts_with("$ graphiti-openclaw intent-test"))
        .expect("the README shows an intent-test run");
    let mut lines = block.trim_matches('\n').lines();
    let command = lines.next().unwrap();
    let prompt = command.split('"').nth(1).expect("the prompt in quotes");
    let state = graphiti_openclaw_tests::temp_dir("readme-picture");
    let out = graphiti_openclaw_tests::cli_command(state.path(), &["intent-test", prompt])
        .output()
        .expect("the CLI runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{command}: {out:?}");
    let mut rest = printed.lines().map(str::trim_end);
    for shown in lines.map(str::trim_end).filter(|l| !l.is_empty()) {
        assert!(rest.any(|l| l == shown), "the README shows \"{shown}\", which {command} does not print (in this order):\n{printed}");
    }
}
