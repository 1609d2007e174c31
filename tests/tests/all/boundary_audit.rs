//! The boundary audit from the real CLI and from `scripts/audit-boundary.sh`: the example
//! configuration passes; each planted case (an e-mail address, a phone number, a token, an overlay
//! term, an overlay file git would commit) fails it with a message naming the case. Run after
//! `scripts/build.sh`.

use graphiti_openclaw_tests::{copy_dir, example_config, temp_dir, workspace};
use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

fn audit(config: &Path, overlay: Option<&Path>) -> (i32, String) {
    let mut command = Command::new(workspace().join("target/release/graphiti-openclaw"));
    command
        .arg("--config-dir")
        .arg(config)
        .arg("--cache-dir")
        .arg(workspace().join("target/test-component-cache"))
        .arg("--quiet");
    if let Some(overlay) = overlay {
        command.arg("--overlay-dir").arg(overlay);
    }
    let out = command
        .arg("audit-boundary")
        .output()
        .expect("the CLI runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// A copy of the example configuration (without a local private overlay) with `line` appended to
/// `file`; returns the directory and the line number of the planted line.
fn planted(file: &str, line: &str) -> (TempDir, usize) {
    let dir = temp_dir("boundary-config");
    copy_dir(&example_config(), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join("private"));
    let path = dir.path().join(file);
    let mut text = std::fs::read_to_string(&path).expect("the planted file exists");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    std::fs::write(&path, &text).unwrap();
    (dir, text.lines().count())
}

#[test]
fn the_example_configuration_passes_with_a_one_line_summary() {
    let config = temp_dir("boundary-example");
    copy_dir(&example_config(), config.path());
    let _ = std::fs::remove_dir_all(config.path().join("private"));
    let (code, out) = audit(config.path(), None);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("boundary audit passed: "), "{out}");
    assert!(
        out.contains("e-mail addresses, phone numbers, tokens and keys"),
        "{out}"
    );
}

#[test]
fn a_planted_email_phone_number_and_token_each_fail_the_audit_naming_the_case() {
    for (file, line, kind, shown) in [
        (
            "settings.yaml",
            "# owner: jordan.lee@fastmail.com",
            "e-mail address",
            "jor…com (23 characters)",
        ),
        (
            "packs/dining_recs.pack.yaml",
            "# booking line: (415) 555-0134",
            "phone number",
            "(41…134 (14 characters)",
        ),
        (
            "intent_rules.yaml",
            "# graphiti key: sk-proj-Q2x9LmV7pT4rZ8wN1bK6",
            "token: API key (sk-)",
            "sk-…bK6 (28 characters)",
        ),
    ] {
        let (config, number) = planted(file, line);
        let (code, out) = audit(config.path(), None);
        assert_eq!(code, 1, "{kind}: {out}");
        let expected = format!(
            "{}/{file}:{number}: {kind}: {shown}",
            config.path().display()
        );
        assert!(
            out.contains(&expected),
            "{kind}: expected {expected:?} in\n{out}"
        );
        assert!(
            out.contains("boundary audit FAILED: 1 findings"),
            "{kind}: {out}"
        );
        let secret = line.split_whitespace().last().unwrap();
        assert!(
            !out.contains(secret),
            "{kind}: the finding must not print it whole: {out}"
        );
    }
}

#[test]
fn a_term_of_the_overlay_in_the_public_configuration_fails_the_audit() {
    let (config, number) = planted(
        "packs/dining_recs.pack.yaml",
        "# favourite table: ask for Priya at Zuniga",
    );
    let overlay = temp_dir("boundary-overlay");
    std::fs::write(
        overlay.path().join("intent_rules.yaml"),
        "# Real rules\nrules:\n  - id: zuniga_priya\n    keywords: [Priya Shah, Zuniga]\n",
    )
    .unwrap();
    let (code, out) = audit(config.path(), Some(overlay.path()));
    assert_eq!(code, 1, "{out}");
    let place = format!(
        "{}/packs/dining_recs.pack.yaml:{number}",
        config.path().display()
    );
    for masked in ["P… (5 characters)", "Zu…ga (6 characters)"] {
        let expected = format!(
            "{place}: overlay term: {masked} (in {}/intent_rules.yaml:",
            overlay.path().display()
        );
        assert!(out.contains(&expected), "expected {expected:?} in\n{out}");
    }
    // Without the planted line the same overlay leaves the example configuration clean.
    let clean = temp_dir("boundary-clean");
    copy_dir(&example_config(), clean.path());
    let _ = std::fs::remove_dir_all(clean.path().join("private"));
    let (code, out) = audit(clean.path(), Some(overlay.path()));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("terms of the overlay"), "{out}");
}

/// A throwaway git repository holding the example configuration and `gitignore`.
fn repository(gitignore: &str) -> TempDir {
    let repo = temp_dir("boundary-repo");
    copy_dir(&example_config(), &repo.path().join("config"));
    let _ = std::fs::remove_dir_all(repo.path().join("config/private"));
    std::fs::write(repo.path().join(".gitignore"), gitignore).unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("git runs");
        assert!(
            status.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "-qm",
        "example",
    ]);
    // An overlay with a file in it, as a user would have.
    std::fs::create_dir_all(repo.path().join("config/private")).unwrap();
    std::fs::write(
        repo.path().join("config/private/settings.yaml"),
        "schema_version: 1\n",
    )
    .unwrap();
    repo
}

fn script(repo: &Path) -> (i32, String) {
    let out = Command::new("bash")
        .arg(workspace().join("scripts/audit-boundary.sh"))
        .arg(repo)
        // The shared test cache for the compiled component, not the user's.
        .env("XDG_CACHE_HOME", workspace().join("target/test-xdg-cache"))
        .output()
        .expect("the script runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_script_fails_when_git_would_commit_an_overlay_file() {
    let ignored = repository("/config/private/\n");
    let (code, out) = script(ignored.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("git ignores config/private/ and tracks none of its files"),
        "{out}"
    );

    let not_ignored = repository("/target\n");
    let (code, out) = script(not_ignored.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("git does not ignore config/private/"), "{out}");
    assert!(
        out.contains("config/private/settings.yaml would be committed: git does not ignore it"),
        "{out}"
    );

    let staged = repository("/config/private/\n");
    let added = Command::new("git")
        .args(["add", "-f", "config/private/settings.yaml"])
        .current_dir(&staged)
        .status()
        .unwrap();
    assert!(added.success());
    let (code, out) = script(staged.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("config/private/settings.yaml is in git (tracked or staged)"),
        "{out}"
    );
}
