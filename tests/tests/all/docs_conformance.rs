//! The openexperts conformance table (`docs/experts-conformance.md`) names, for each requirement of
//! the specification, the tests that show it: every test and rule fixture it names must exist, so a
//! renamed or removed test cannot leave a row claiming what nothing checks any more. Each row has a
//! status, and a row marked met names a test. The check is shown failing on planted names.

use graphiti_openclaw_tests::workspace;
use std::fs;
use std::path::Path;

/// The table, relative to the workspace.
const TABLE: &str = "docs/experts-conformance.md";

/// The header the checks read the cells by: the last cell of a row names its tests.
const HEADER: &str = "| Spec | Requirement | Status | Shown by |";

/// A row's status cell starts with one of these, then `: why` when it says more.
const STATUSES: [&str; 4] = ["met", "partly", "not met", "not applicable"];

/// What a "Shown by" cell says when no test shows the row.
const NO_TEST: &str = "no test";

/// One folder per validation rule, its golden findings in `expected.txt`, each checked by
/// `every_rule_has_a_fixture_breaking_only_it_with_golden_findings` (`plugin/tests/all/experts.rs`).
const RULE_FIXTURES: &str = "plugin/tests/experts/rules/";

/// A JavaScript test is named by the start of its title: long enough to pick out one test.
const MIN_TITLE_CHARS: usize = 30;

/// Fewer rows than this means the table was cut or no longer parses as one.
const MIN_ROWS: usize = 50;

/// A row of the table, with its line for messages.
struct Row {
    line: usize,
    cells: Vec<String>,
}

/// The body rows of the Markdown tables in `text`: each table's header and separator left out.
fn rows(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<String> = line
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let separator = cells
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')));
        if !in_table {
            in_table = true; // the header
        } else if !separator {
            rows.push(Row { line: i + 1, cells });
        }
    }
    rows
}

/// The entries of a "Shown by" cell: split at `<br>`, code spans unwrapped.
fn entries(cell: &str) -> impl Iterator<Item = &str> {
    cell.split("<br>")
        .map(|e| e.trim().trim_matches('`').trim())
        .filter(|e| !e.is_empty())
}

/// Why `entry` names nothing that exists under `root`, if it does not: `file.rs::name` needs
/// `fn name(` in that file, `file.test.js: title` a `test('title` or `test("title` there, and a rule
/// fixture its folder with golden findings.
fn why_missing(entry: &str, root: &Path) -> Option<String> {
    let read = |file: &str| fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"));
    if entry == NO_TEST {
        None
    } else if let Some((file, name)) = entry.split_once(".rs::") {
        let file = format!("{file}.rs");
        match read(&file) {
            Err(why) => Some(why),
            Ok(text) => (!text.contains(&format!("fn {name}(")))
                .then(|| format!("no `fn {name}(` in {file}")),
        }
    } else if let Some((file, title)) = entry.split_once(".test.js: ") {
        let file = format!("{file}.test.js");
        if title.chars().count() < MIN_TITLE_CHARS {
            return Some(format!(
                "name at least {MIN_TITLE_CHARS} characters of the title"
            ));
        }
        match read(&file) {
            Err(why) => Some(why),
            Ok(text) => {
                let found = ["test('", "test(\""]
                    .iter()
                    .any(|open| text.contains(&format!("{open}{title}")));
                (!found).then(|| format!("no test in {file} has a title starting {title:?}"))
            }
        }
    } else if let Some(rule) = entry.strip_prefix(RULE_FIXTURES) {
        let rule = rule.trim_end_matches('/');
        let golden = root.join(RULE_FIXTURES).join(rule).join("expected.txt");
        (rule.is_empty() || !golden.is_file()).then(|| {
            format!(
                "no rule fixture with golden findings ({})",
                golden.display()
            )
        })
    } else {
        Some(format!(
            "neither `file.rs::name`, `file.test.js: title`, `{RULE_FIXTURES}<rule-id>/` nor \"{NO_TEST}\""
        ))
    }
}

/// The tests and fixtures the last cell of each row of `table` names that do not exist under
/// `root`, each with its line and why.
fn missing_tests(table: &str, root: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    for row in rows(table) {
        for entry in entries(row.cells.last().map_or("", String::as_str)) {
            if let Some(why) = why_missing(entry, root) {
                missing.push(format!("line {}: {entry}: {why}", row.line));
            }
        }
    }
    missing
}

/// What is wrong with `row`'s shape and status: four cells, a known status (with its reason unless
/// met), and at least one entry naming its tests (at least one test when met).
fn row_problems(row: &Row) -> Option<String> {
    let [_, _, status_cell, shown_by] = row.cells.as_slice() else {
        return Some(format!("{} cells, 4 expected ({HEADER})", row.cells.len()));
    };
    let (status, why) = status_cell
        .split_once(':')
        .unwrap_or((status_cell.as_str(), ""));
    let status = status.trim();
    let named = entries(shown_by).filter(|e| *e != NO_TEST).count();
    if !STATUSES.contains(&status) {
        Some(format!("status {status:?} is none of {STATUSES:?}"))
    } else if status != "met" && why.trim().is_empty() {
        Some(format!("{status}: say why after a colon"))
    } else if entries(shown_by).next().is_none() {
        Some(format!("no tests named: name them, or say \"{NO_TEST}\""))
    } else if status == "met" && named == 0 {
        Some("met, but no test shows it".into())
    } else {
        None
    }
}

#[test]
fn every_test_the_conformance_table_names_exists() {
    let root = workspace();
    let table = fs::read_to_string(root.join(TABLE)).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    assert!(
        table.lines().any(|l| l.trim() == HEADER),
        "{TABLE} has no table headed {HEADER}"
    );
    let rows = rows(&table);
    assert!(
        rows.len() >= MIN_ROWS,
        "{TABLE}: {} rows, at least {MIN_ROWS} expected",
        rows.len()
    );
    let problems: Vec<String> = rows
        .iter()
        .filter_map(|row| row_problems(row).map(|why| format!("line {}: {why}", row.line)))
        .collect();
    assert!(problems.is_empty(), "{TABLE}:\n{}", problems.join("\n"));
    let missing = missing_tests(&table, &root);
    assert!(
        missing.is_empty(),
        "{TABLE} names tests that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_test_name_that_does_not_exist_fails_the_check() {
    let planted = [
        "tests/tests/all/docs_conformance.rs::no_such_test",
        "tests/openclaw/expert-runs.test.js: no test of this suite has this title",
        "plugin/tests/experts/rules/no.such-rule/",
        "tests/openclaw/expert-runs.test.js: a CONFIRM",
        "the approval tests",
    ];
    let real = [
        "tests/tests/all/docs_conformance.rs::every_test_the_conformance_table_names_exists",
        "tests/openclaw/expert-runs.test.js: a CONFIRM call waits for /experts approve",
        "plugin/tests/experts/rules/xref.trigger-process/",
        NO_TEST,
    ];
    let cell = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        names.join("<br>")
    };
    let table = format!(
        "{HEADER}\n|---|---|---|---|\n| §0 | Planted. | met | {} |\n| §0 | Real. | met | {} |\n",
        cell(&planted),
        cell(&real)
    );
    let missing = missing_tests(&table, &workspace());
    assert_eq!(missing.len(), planted.len(), "{missing:#?}");
    for (found, name) in missing.iter().zip(planted) {
        assert!(
            found.starts_with(&format!("line 3: {name}: ")),
            "{found} should report {name}"
        );
    }
    let rows = rows(&table);
    let problems = |status: &str, shown_by: &str| {
        let cells = Vec::from(["§0", "Planted.", status, shown_by].map(String::from));
        row_problems(&Row { line: 1, cells })
    };
    assert_eq!(rows.len(), 2);
    let real_row = row_problems(&rows[1]);
    assert!(real_row.is_none(), "{real_row:?}");
    assert!(
        problems("done", &cell(&real)).is_some(),
        "an unknown status"
    );
    assert!(
        problems("partly", &cell(&real)).is_some(),
        "partly without why"
    );
    assert!(problems("met", NO_TEST).is_some(), "met with no test");
    assert!(problems("met", "").is_some(), "nothing named");
    let not_met = problems("not met: no dry run", NO_TEST);
    assert!(not_met.is_none(), "{not_met:?}");
}
