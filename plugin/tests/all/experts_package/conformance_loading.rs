//! Loading fixes found against the upstream openexperts fixture: CRLF files, no follow-on findings
//! about a file that failed to load, Unicode package names.

use super::support::{TempPackage, assert_findings, assert_ready, findings_text, prompt};
use graphiti_openclaw::experts::package::is_safe_name;
use std::fs;
use std::path::Path;

fn crlf_copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            crlf_copy(&entry.path(), &target);
        } else {
            let text = fs::read_to_string(entry.path()).unwrap();
            fs::write(&target, text.replace('\n', "\r\n")).unwrap();
        }
    }
}

#[test]
fn crlf_and_cr_files_give_the_same_prompt_as_lf_files() {
    let lf = TempPackage::base("line-ends-lf");
    let crlf = TempPackage::base("line-ends-crlf");
    fs::remove_dir_all(&crlf.dir).unwrap();
    crlf_copy(&lf.dir, &crlf.dir);
    let (lf_expert, crlf_expert) = (lf.load(), crlf.load());
    assert_ready(&crlf_expert);
    assert_eq!(crlf_expert.findings, lf_expert.findings);
    let text = prompt(&crlf_expert);
    assert!(!text.contains('\r'), "{text:?}");
    assert_eq!(text, prompt(&lf_expert));
    // An old Mac line end (a lone CR) is a line end too.
    lf.write("orchestrator.md", b"Route notes.\rMail waits.\r");
    let text = prompt(&lf.load());
    assert!(text.contains("\nRoute notes.\nMail waits.\n"), "{text:?}");
}

#[test]
fn a_component_that_failed_to_load_causes_no_follow_on_findings() {
    // A function without a description: the process naming it is not told it names nothing.
    let temp = TempPackage::base("failed-function");
    temp.edit(
        "functions/summarize.md",
        "description: Summarize the day's notes\n",
        "",
    );
    assert_findings(
        &temp.load(),
        &[
            "error [frontmatter.function] functions/summarize.md:1: description: frontmatter field `description` is required",
        ],
    );
    // A function file whose YAML does not parse, under another file name: its `name` still counts.
    let temp = TempPackage::base("failed-function-yaml");
    temp.write(
        "functions/sum.md",
        b"---\nname: summarize\ndescription: [unclosed\n---\nSummarize.\n",
    );
    temp.edit("expert.yaml", "functions/summarize.md", "functions/sum.md");
    let expert = temp.load();
    assert_eq!(
        expert.findings.len(),
        1,
        "{}",
        findings_text(&expert.findings)
    );
    assert_eq!(expert.findings[0].file, "functions/sum.md");
    // A process file that does not parse: the trigger starting it is not said to name nothing.
    let temp = TempPackage::base("failed-process");
    temp.edit(
        "processes/daily-review.md",
        "functions:\n",
        "functions: [\n",
    );
    let expert = temp.load();
    assert_eq!(
        expert.findings.len(),
        1,
        "{}",
        findings_text(&expert.findings)
    );
    assert_eq!(expert.findings[0].file, "processes/daily-review.md");
    // A tool file that is missing: overrides of its operations and the tool are not reported again.
    let temp = TempPackage::base("failed-tool");
    fs::remove_file(temp.dir.join("tools/notes.yaml")).unwrap();
    let expert = temp.load();
    assert_eq!(
        expert.findings.len(),
        1,
        "{}",
        findings_text(&expert.findings)
    );
    assert_eq!(
        expert.findings[0].field.as_deref(),
        Some("components.tools[0]")
    );
}

#[test]
fn package_names_may_be_unicode_but_stay_one_safe_segment() {
    let temp = TempPackage::base("unicode-name");
    temp.edit(
        "expert.yaml",
        "name: fixture-expert",
        "name: reiseplaner-ü-旅行",
    );
    let expert = temp.load();
    assert_ready(&expert);
    assert_eq!(expert.name, "reiseplaner-ü-旅行");
    for good in ["Überblick", "旅行", "trip_planner-2.0", "ab.c"] {
        assert!(is_safe_name(good), "{good}");
    }
    for bad in [
        "",
        ".hidden",
        "a/b",
        "a\\b",
        "..",
        "a..b",
        "a b",
        "a\tb",
        "a\u{7}b",
        "a\u{202e}b",
        "a:b",
    ] {
        assert!(!is_safe_name(bad), "{bad:?}");
    }
}

#[test]
fn a_duplicate_key_in_the_manifest_is_reported_at_its_own_line() {
    let temp = TempPackage::base("duplicate-top-key");
    temp.edit(
        "expert.yaml",
        "requires:\n",
        "name: second-name\nrequires:\n",
    );
    assert_findings(
        &temp.load(),
        &["error [manifest.syntax] expert.yaml:5: `name` is given twice here; keep one"],
    );
    let temp = TempPackage::base("duplicate-nested-key");
    temp.edit(
        "expert.yaml",
        "    process: daily-review\n",
        "    process: daily-review\n    expr: \"0 10 * * *\"\n",
    );
    assert_findings(
        &temp.load(),
        &[
            "error [manifest.syntax] expert.yaml:14: triggers[0]: `expr` is given twice here; keep one",
        ],
    );
}

#[test]
fn a_misspelt_components_key_is_named_once_not_followed_by_what_it_hides() {
    let temp = TempPackage::base("misspelt-components");
    temp.edit("expert.yaml", "\ncomponents:\n", "\ncomponent:\n");
    let expert = temp.load();
    assert_findings(
        &expert,
        &[
            "error [manifest.required-fields] expert.yaml: components: required field `components` is missing or empty (`component` looks like it, misspelt)",
            "warning [manifest.unknown-key] expert.yaml:24: component: `component` is not a key of expert.yaml in spec 1.0 and is ignored; did you mean `components`?",
        ],
    );
}
