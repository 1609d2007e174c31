//! The commands the documentation shows, run or parsed by the CLI they name.

use graphiti_openclaw_tests::workspace;

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
