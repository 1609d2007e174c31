//! Spec rows the loader met without a test to show it (docs/experts-conformance.md names each test):
//! what a package may leave out and what it may add that this runtime does not know.

use super::support::{TempPackage, assert_finding, assert_ready, assert_refused, findings_text};
use graphiti_openclaw::experts::Rule;
use graphiti_openclaw::experts::package::StateScope;

/// §3: keys under `requires` other than `tools` are for other runtimes; they load without a word.
#[test]
fn unrecognised_keys_under_requires_are_ignored() {
    let temp = TempPackage::base("requires-unknown-keys");
    temp.edit(
        "expert.yaml",
        "requires:\n",
        "requires:\n  gpu: true\n  runtimes:\n    - python3\n",
    );
    let expert = temp.load();
    assert_ready(&expert);
    let text = findings_text(&expert.findings);
    assert!(
        !text.contains("gpu") && !text.contains("runtimes"),
        "an unknown `requires` key was reported:\n{text}"
    );
    let package = expert.package.as_ref().expect("loaded");
    assert_eq!(
        package.required_tools,
        ["mail", "notes"],
        "the tools, sorted"
    );
}

/// §3: without `concurrency` in the package or on the trigger, a trigger's runs are `parallel`.
#[test]
fn a_package_without_concurrency_runs_its_triggers_in_parallel() {
    let temp = TempPackage::base("concurrency-default");
    let expert = temp.load();
    assert_ready(&expert);
    let package = expert.package.as_ref().expect("loaded");
    assert_eq!(package.concurrency.default, "parallel");
    assert_eq!(package.concurrency.key, None);
    let daily = &package.triggers[0];
    assert_eq!(
        (daily.name.as_str(), daily.concurrency.as_str()),
        ("daily", "parallel")
    );
    assert_eq!(daily.concurrency_key, None);
}

/// §3: `serial_per_key` without a key, on the trigger or in the package, is refused when the package
/// is validated, naming the trigger's field; with the package's key it loads.
#[test]
fn serial_per_key_without_any_key_is_refused_at_validation() {
    let temp = TempPackage::base("serial-per-key-no-key");
    temp.edit(
        "expert.yaml",
        "    process: daily-review\n",
        "    process: daily-review\n    concurrency: serial_per_key\n",
    );
    let expert = temp.load();
    assert_refused(&expert);
    assert_finding(
        &expert,
        Rule::ManifestValues,
        "expert.yaml",
        "triggers[0].concurrency_key",
        "serial_per_key needs `concurrency_key` here or `concurrency.key` in the package",
    );

    temp.manifest_before_components("concurrency:\n  key: item.id\n");
    let expert = temp.load();
    assert_ready(&expert);
    let daily = &expert.package.as_ref().expect("loaded").triggers[0];
    assert_eq!(daily.concurrency, "serial_per_key");
    assert_eq!(daily.concurrency_key.as_deref(), Some("item.id"));
}

/// §10: a state file whose frontmatter gives no `scope` is `persistent`.
#[test]
fn a_state_file_without_scope_is_persistent() {
    let temp = TempPackage::base("state-scope-default");
    temp.edit(
        "state/log.md",
        "scope: persistent\n",
        "description: What happened\n",
    );
    let expert = temp.load();
    assert_ready(&expert);
    let package = expert.package.as_ref().expect("loaded");
    let log = package
        .state
        .iter()
        .find(|s| s.path == "state/log.md")
        .expect("state/log.md is loaded");
    assert_eq!(log.scope, StateScope::Persistent);
    assert_eq!(log.description.as_deref(), Some("What happened"));
}

/// §14: a process's `tools` entry must be declared in `requires.tools`, as a function's must.
#[test]
fn a_process_naming_an_undeclared_tool_is_an_error() {
    let temp = TempPackage::base("process-undeclared-tool");
    temp.edit(
        "processes/daily-review.md",
        "tools:\n  - notes\n",
        "tools:\n  - notes\n  - calendar\n",
    );
    let expert = temp.load();
    assert_refused(&expert);
    assert_finding(
        &expert,
        Rule::XrefToolsDeclared,
        "processes/daily-review.md",
        "tools[1]",
        "tool \"calendar\" is not declared in requires.tools",
    );
}
