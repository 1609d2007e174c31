//! No product code branches on the text of an error: what a failure means is a kind or cause set
//! where the error is made (`memory::graphiti::Cause`, `memory::control::ControlError`), because a
//! reworded message, or another program's text quoted in it, silently changes what a branch on
//! the words does. Read from `plugin/src` without compiling, tests left out (`tests.rs`, `tests/`
//! folders, `#[cfg(test)]` items), comments and literals blanked.
//!
//! An error's text is, by name: `e`, `err`, `error`, `why`, `message` or `msg`, each alone or with
//! `.message`, `.to_string()` or `.as_str()` after it, and a name a `let` binds to an error's
//! `.message`. A branch on it is `.contains(`, `.starts_with(`, `.ends_with(`, or `==` or `!=` a
//! string literal.

use graphiti_openclaw_native_tests::module_graph::product_code;
use graphiti_openclaw_native_tests::{tracked_files, workspace};
use regex::Regex;

/// Names that hold an error's text, as a pattern.
const ERROR_TEXT: &str =
    r"(?:e|err|error|why|message|msg)(?:\.message)?(?:\.(?:to_string|as_str)\(\))?";
/// A branch on the text before it; a comparison counts when a string literal follows it.
const BRANCH: &str = r"\s*(?:\.(?:contains|starts_with|ends_with)\(|(?P<compared>[!=]=))";
/// A `let` binding an error's message to a name.
const BOUND: &str = r"\blet\s+(\w+)\s*=\s*&?(?:e|err|error)\.message\b";

/// Files whose branch on an error's text has no other way, with why.
const ALLOWED: &[(&str, &str)] = &[(
    "plugin/src/platform/documents/errors.rs",
    "serde's parse errors carry no kind: the field an unknown or missing field names is read off its words",
)];

/// The lines (1-based) of `text` that branch on an error's text.
fn error_text_branches(text: &str) -> Vec<usize> {
    let code = product_code(text);
    let mut patterns = vec![Regex::new(&format!(r"(?:^|[^.\w]){ERROR_TEXT}{BRANCH}")).unwrap()];
    for bound in Regex::new(BOUND).unwrap().captures_iter(&code) {
        let name = regex::escape(&bound[1]);
        patterns.push(Regex::new(&format!(r"(?:^|[^.\w]){name}{BRANCH}")).unwrap());
    }
    let literal = Regex::new(r#"^\s*b?(?:r#*)?""#).unwrap();
    // The code keeps every character's place (blanked ones are spaces), so a match's end is
    // where the original line goes on.
    let branches = |(code, original): (&str, &str)| {
        patterns
            .iter()
            .flat_map(|p| p.captures_iter(code))
            .any(|c| match c.name("compared") {
                None => true,
                Some(op) => {
                    let after: String = original
                        .chars()
                        .skip(code[..op.end()].chars().count())
                        .collect();
                    literal.is_match(&after)
                }
            })
    };
    code.lines()
        .zip(text.lines())
        .enumerate()
        .filter(|(_, lines)| branches(*lines))
        .map(|(index, _)| index + 1)
        .collect()
}

#[test]
fn no_product_code_branches_on_an_errors_text() {
    let root = workspace();
    let mut found = Vec::new();
    for file in tracked_files(&["plugin/src"]) {
        let name = file.to_string_lossy().replace('\\', "/");
        let is_test = name.ends_with("/tests.rs") || name.contains("/tests/");
        if !name.ends_with(".rs") || is_test || ALLOWED.iter().any(|(allowed, _)| *allowed == name)
        {
            continue;
        }
        let text =
            std::fs::read_to_string(root.join(&file)).unwrap_or_else(|e| panic!("{name}: {e}"));
        for line in error_text_branches(&text) {
            let shown = text.lines().nth(line - 1).unwrap_or_default().trim();
            found.push(format!("{name}:{line}: {shown}"));
        }
    }
    assert!(
        found.is_empty(),
        "branches on an error's text: give the error a kind set where it is made, and branch on that:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_branch_on_an_errors_text_is_found_and_a_branch_on_its_kind_is_not() {
    let planted = "fn f(r: Result<(), E>) {\n\
                   \x20   match r {\n\
                   \x20       Err(e) if e.message.contains(\"isError\") => {}\n\
                   \x20       _ => {}\n\
                   \x20   }\n\
                   }\n\
                   fn g(e: &E) -> bool {\n\
                   \x20   let m = e.message.as_str();\n\
                   \x20   m.contains(\"timed out\")\n\
                   }\n\
                   fn h(why: String) -> bool { why == \"busy\" }\n";
    assert_eq!(error_text_branches(planted), [3, 9, 11]);
    let clean = "fn f(r: Result<(), E>) {\n\
                 \x20   match r {\n\
                 \x20       Err(e) if e.cause == Cause::ToolError => {}\n\
                 \x20       _ => {}\n\
                 \x20   }\n\
                 \x20   // e.message.contains(\"isError\") in a comment is no branch\n\
                 \x20   let words = \"err.contains(x)\";\n\
                 \x20   let held = entries.contains(&name);\n\
                 \x20   let one = e == 1 || why != reason;\n\
                 }\n\
                 #[cfg(test)]\n\
                 mod tests {\n\
                 \x20   fn t(e: E) { assert!(e.message.contains(\"isError\")); }\n\
                 }\n";
    assert_eq!(error_text_branches(clean), Vec::<usize>::new());
}
