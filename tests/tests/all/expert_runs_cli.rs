//! The expert runtime's commands from the real CLI: what each mounts (the experts directory writable
//! for install, bind and remove only; an installed directory at /install), the payload file of
//! `fire`, the time of `due`. Run after `scripts/build.sh`.


use crate::expert_runs_common::{EXPERT, fixture};
use graphiti_openclaw_tests::{copy_dir, example_config, temp_dir, workspace};
use std::path::Path;
use std::process::Command;

fn cli(experts: &Path, state: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(workspace().join("target/release/graphiti-openclaw"))
        .arg("--config-dir")
        .arg(example_config())
        .arg("--experts-dir")
        .arg(experts)
        .arg("--state-dir")
        .arg(state)
        .arg("--cache-dir")
        .arg(workspace().join("target/test-component-cache"))
        .arg("--quiet")
        .args(args)
        .output()
        .expect("the CLI runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn install_bind_validate_and_remove_from_the_command_line() {
    let (experts, state) = (temp_dir("cli-experts"), temp_dir("cli-state"));
    let sources = temp_dir("cli-source");
    let source = sources.path().join("ops");
    copy_dir(&fixture().join(EXPERT), &source);
    std::fs::remove_file(source.join("bindings.yaml")).unwrap();
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "install", source.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("installed ops-expert from"), "{out}");
    let (code, out, _) = cli(
        experts.path(),
        state.path(),
        &["experts", "validate", EXPERT],
    );
    assert_ne!(code, 0, "tickets is not bound yet: {out}");
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "bind", EXPERT, "tickets", "tickets-mcp"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = cli(
        experts.path(),
        state.path(),
        &["experts", "validate", EXPERT],
    );
    assert_eq!(code, 0, "bound: {out}");
    assert!(
        out.contains("MCP servers: not checked here") && out.contains("`openclaw graphiti experts validate <name>`"),
        "the CLI says it cannot reach the bound servers and where they are checked: {out}"
    );
    let (code, _, err) = cli(experts.path(), state.path(), &["experts", "remove", EXPERT]);
    assert_eq!(code, 0, "{err}");
    assert!(!experts.path().join(EXPERT).exists());

    let archives = temp_dir("cli-archive");
    let archive = archives.path().join("ops.tgz");
    let tar = Command::new("tar")
        .arg("czf")
        .arg(&archive)
        .arg("-C")
        .arg(source.parent().unwrap())
        .arg("ops")
        .status()
        .unwrap();
    assert!(tar.success());
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "install", archive.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(experts.path().join(EXPERT).join("expert.yaml").is_file());
}

#[test]
fn fire_reads_its_payload_file_and_due_reads_its_time() {
    let (experts, state) = (temp_dir("cli-experts"), temp_dir("cli-state"));
    copy_dir(&fixture(), experts.path());
    let payloads = temp_dir("cli-payload");
    let payload = payloads.path().join("event.json");
    std::fs::write(
        &payload,
        r#"{"event_id": "e-1", "ticket": {"id": "T-1", "summary": "down"}}"#,
    )
    .unwrap();
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &[
            "experts",
            "fire",
            EXPERT,
            "new_ticket",
            "--payload",
            payload.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("queue: serial_per_key T-1"), "{out}");
    let (code, out, _) = cli(experts.path(), state.path(), &["experts", "queue"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "no expert runs waiting or running\n"),
        "fire records nothing"
    );

    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "due", "--at", "2026-11-24T02:00:00+01:00"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ops-expert/nightly_report (0 2 * * * Europe/Berlin): not checked yet"),
        "{out}"
    );
    assert!(
        out.contains("next slot 2026-11-25T01:00:00.000Z"),
        "the next 02:00 Berlin after the moment given: {out}"
    );
    let (code, _, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "due", "--at", "tomorrow"],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("--at \"tomorrow\" is neither RFC 3339 nor epoch milliseconds"),
        "{err}"
    );
}

/// A misspelt time zone makes its trigger inactive, as the spec says: validation warns, names
/// the trigger and the zone, and shows the trigger inactive; the package loads, and the trigger is
/// never due.
#[test]
fn a_misspelled_time_zone_makes_its_trigger_inactive_and_says_so() {
    let (experts, state) = (temp_dir("cli-tz-experts"), temp_dir("cli-tz-state"));
    copy_dir(&fixture().join(EXPERT), &experts.path().join(EXPERT));
    graphiti_openclaw_tests::replace_in_file(
        &experts.path().join(EXPERT).join("expert.yaml"),
        "tz: Europe/Berlin",
        "tz: Europe/Berln",
    );
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "validate", EXPERT],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "warning [trigger.inactive] expert.yaml:"
        ) && out.contains(
            ".tz: trigger \"nightly_report\" stays inactive: unknown time zone \"Europe/Berln\" \
             (an IANA name such as Europe/Berlin)"
        ),
        "{out}"
    );
    assert!(
        out.contains("nightly_report: cron, inactive: time zone \"Europe/Berln\" is unknown"),
        "{out}"
    );
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["experts", "due", "--at", "2026-11-24T02:00:00+01:00"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("ops-expert/nightly_report"), "{out}");
}

/// The expert's prompt names the files of the workspace the CLI mounts (`--workspace-dir`), by
/// their real path, as OpenClaw's does; a `workspace_dir` the settings give still wins.
#[test]
fn the_prompt_names_the_mounted_workspace_by_its_real_path() {
    let (experts, state) = (temp_dir("cli-ws-experts"), temp_dir("cli-ws-state"));
    let workspace = temp_dir("cli-ws-workspace");
    copy_dir(&fixture().join(EXPERT), &experts.path().join(EXPERT));
    let dir = workspace.path().to_str().unwrap();
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["--workspace-dir", dir, "experts", "prompt", EXPERT],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("{dir}/expert-state/{EXPERT}")), "{out}");
    assert!(!out.contains("~/.openclaw/workspace"), "{out}");

    let settings = state.path().join("settings.json");
    std::fs::write(&settings, r#"{"experts": {"workspace_dir": "/srv/agents"}}"#).unwrap();
    let (code, out, err) = cli(
        experts.path(),
        state.path(),
        &["--workspace-dir", dir, "--settings", settings.to_str().unwrap(), "experts", "prompt", EXPERT],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("/srv/agents/expert-state/{EXPERT}")), "{out}");
}

/// `experts run --process … --inputs … --dry-run` queues a dry run of that process; inputs without a
/// process are refused by the grammar, before the component is asked.
#[test]
fn run_queues_a_dry_run_of_a_process_with_its_inputs() {
    let (experts, state) = (temp_dir("cli-experts"), temp_dir("cli-state"));
    copy_dir(&fixture(), experts.path());
    let args = ["experts", "run", EXPERT, "--process", "triage", "--inputs", r#"{"ticket_id": "T-5"}"#, "--dry-run"];
    let (code, out, err) = cli(experts.path(), state.path(), &args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("inv-1 queued: a manual run of ops-expert's process triage, a dry run: only AUTO operations execute"),
        "{out}"
    );
    let (_, queue, _) = cli(experts.path(), state.path(), &["experts", "queue"]);
    assert!(queue.contains("inv-1"), "{queue}");
    let (code, _, err) = cli(experts.path(), state.path(), &["experts", "run", EXPERT, "--inputs", "{}"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--process"), "{err}");
}
