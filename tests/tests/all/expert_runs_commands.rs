//! The runtime's commands through the real component: `fire` (a dry run, golden), `queue`,
//! `run`, `install` (directory and `.tgz`, hostile archives refused), `bind`, `remove`, and a
//! corrupt runtime record set aside rather than lost.


use crate::expert_runs_common::*;
use host_shim::{
    ExpertsCommand, FunctionCall, InstallSource, PackageArchive, Shim, ToolBinding,
    TriggerFire,
};
use std::path::Path;
use std::process::Command as Process;

#[test]
fn fire_is_a_dry_run_that_shows_process_inputs_queue_and_message() {
    let mut s = setup();
    let out = s.command(ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: ticket("e-1", "T-1"),
    }));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let head: String = out.stdout.lines().take(5).collect::<Vec<_>>().join("\n");
    assert_eq!(
        head,
        "trigger new_ticket (webhook) of ops-expert → process triage\n\
         inputs: {\"summary\":\"Checkout is down for T-1\",\"ticket_id\":\"T-1\"}\n\
         queue: serial_per_key T-1\n\
         session: isolated (expert:ops-expert:inv-N, one per invocation)\n\
         dedupe: event_id e-1 not seen in the last 24 h (experts.dedupe_window_hours): this event would be queued\n"
            .trim_end()
    );
    assert!(
        out.stdout.contains("Run the process `triage`"),
        "{}",
        out.stdout
    );
    assert!(s.queue().contains("no expert runs"), "fire records nothing");
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let again = s.command(ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: ticket("e-1", "T-1"),
    }));
    assert!(
        again.stdout.contains("was accepted at") && again.stdout.contains("would be skipped"),
        "{}",
        again.stdout
    );
    let bad = s.command(ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: "{}".into(),
    }));
    assert_eq!(bad.exit_code, 1);
    assert!(bad.stderr.contains("refused (422)"), "{}", bad.stderr);
}

/// Whether `text` holds a character that drives or reorders a terminal.
fn raw_escapes(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
}

#[test]
fn webhook_and_channel_values_reach_the_terminal_escaped() {
    let mut s = setup();
    s.channel(
        "telegram",
        "u-1\u{1b}[2J\u{9b}31m\u{202e}",
        "Where is my order?",
    );
    // JSON escapes: the payload's strings hold ESC, BEL and a right-to-left override.
    let event = "e-1\\u001b]0;owned\\u0007";
    let ticket_id = "T-1\\u001b[31m\\u202e";
    s.accepted("new_ticket", &ticket(event, ticket_id));
    let queue = s.queue();
    assert!(!raw_escapes(&queue), "{queue:?}");
    assert!(
        queue.contains("serial_per_key u-1\\u{1b}[2J\\u{9b}31m\\u{202e}"),
        "{queue}"
    );
    assert!(
        queue.contains("serial_per_key T-1\\u{1b}[31m\\u{202e}"),
        "{queue}"
    );
    let fire = s.command(ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: ticket(event, ticket_id),
    }));
    assert_eq!(fire.exit_code, 0, "{}", fire.stderr);
    assert!(!raw_escapes(&fire.stdout), "{:?}", fire.stdout);
    assert!(
        fire.stdout
            .contains("dedupe: event_id e-1\\u{1b}]0;owned\\u{7} was accepted at"),
        "{}",
        fire.stdout
    );
}

#[test]
fn a_manual_run_queues_and_starts_in_its_own_session() {
    let mut s = setup();
    let out = s.command(ExpertsCommand::Run(manual_run(EXPERT, "Summarise the open tickets")));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let run = s.tick().start.remove(0);
    assert!(
        run.session_key.starts_with("expert:ops-expert:inv-"),
        "{}",
        run.session_key
    );
    assert!(run.message.contains("Summarise the open tickets"));
    let empty = s.command(ExpertsCommand::Run(manual_run(EXPERT, "  ")));
    assert!(
        empty.stderr.contains("the message is empty"),
        "{}",
        empty.stderr
    );
    let unknown = s.command(ExpertsCommand::Run(manual_run("nobody", "hi")));
    assert!(
        unknown.stderr.contains("no expert nobody"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_corrupt_runtime_record_is_set_aside_not_lost() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    std::fs::write(s.state.join("experts-runs.json"), b"{ torn").unwrap();
    let work = s.tick();
    assert!(
        work.notes
            .iter()
            .any(|n| n.contains("was set aside as experts-runs.json.unreadable-")),
        "{:?}",
        work.notes
    );
    let kept: Vec<_> = std::fs::read_dir(&s.state)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("experts-runs.json.unreadable-")
        })
        .collect();
    assert_eq!(
        kept.len(),
        1,
        "the unreadable record is kept for the operator"
    );
    assert_eq!(
        s.webhook("new_ticket", &ticket("e-2", "T-2")).status,
        202,
        "the runtime goes on"
    );
}

/// A held call reads the record on the hook's path, where no command is there to say what it set
/// aside: the log says it, since the next tick finds the record already replaced.
#[test]
fn a_held_call_that_sets_a_corrupt_record_aside_logs_where() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    std::fs::write(s.state.join("experts-runs.json"), b"{ torn").unwrap();
    s.shim.take_logs();
    s.tool_call(&run, "update_ticket", r#"{"id": "T-1"}"#);
    let logs: Vec<String> = s.shim.take_logs().into_iter().map(|(_, line)| line).collect();
    assert!(
        logs.iter().any(|l| l.starts_with("experts: experts-runs.json was set aside as experts-runs.json.unreadable-")),
        "{logs:?}"
    );
}

#[test]
fn every_command_reading_a_corrupt_record_says_where_it_was_set_aside() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let record = s.state.join("experts-runs.json");
    std::fs::write(&record, b"{ torn").unwrap();
    let queue = s.command(ExpertsCommand::Queue);
    assert_eq!(queue.exit_code, 0, "{}", queue.stderr);
    assert!(
        queue.stderr.contains("warning: experts-runs.json was set aside as experts-runs.json.unreadable-"),
        "the queue names what it set aside: {queue:?}"
    );
    // Said once: the next command reads the fresh record.
    let again = s.command(ExpertsCommand::DeadLetters);
    assert!(!again.stderr.contains("set aside"), "{again:?}");

    std::fs::write(&record, b"{ torn again").unwrap();
    let replay = s.command(ExpertsCommand::Replay("inv-9".into()));
    assert!(
        replay.stderr.contains("was set aside as experts-runs.json.unreadable-"),
        "a failing command says it too: {replay:?}"
    );
    std::fs::write(&record, b"{ torn once more").unwrap();
    let status = s.shim.run_command(&host_shim::Command::Status).stdout;
    assert!(
        status.contains("warning: experts-runs.json was set aside as"),
        "status says it: {status}"
    );
}

#[test]
fn a_run_is_told_a_retry_resumes_only_when_the_process_resumes_from_its_log() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let resuming = s.tick().start.remove(0).message;
    assert!(resuming.contains("so a retry can resume after it"), "{resuming}");
    s.edit_manifest("resume_from_execution_log: true", "resume_from_execution_log: false");
    s.accepted("new_ticket", &ticket("e-2", "T-2"));
    let starting_over = s.tick().start.remove(0).message;
    assert!(
        !starting_over.contains("retry can resume") && starting_over.contains("shows how far it got"),
        "a retry starts over: {starting_over}"
    );
}

/// The shim with the experts directory writable, as the CLI mounts it for install/bind/remove.
fn managing(s: &Setup, install: Option<&Path>) -> Shim {
    let mut options = options(&s.experts, &s.state, &s.workspace, &s.settings, &s.clock);
    options.experts_writable = true;
    options.install_dir = install.map(Path::to_path_buf);
    Shim::new(options).expect("shim starts")
}

fn manage(shim: &mut Shim, command: ExpertsCommand) -> host_shim::CommandOutput {
    shim.run_command(&host_shim::Command::Experts(command))
}

fn tgz(dir: &Path, name: &str) -> Vec<u8> {
    let out = Process::new("tar")
        .arg("czf")
        .arg("-")
        .arg("-C")
        .arg(dir)
        .arg(name)
        .output()
        .expect("tar runs");
    assert!(out.status.success());
    out.stdout
}

/// A `.tgz` with one hand-made tar entry of `kind` ('0' file, '2' symlink, '3' device) at `path`.
fn hostile_tgz(path: &str, kind: u8) -> Vec<u8> {
    let mut header = [0u8; 512];
    header[..path.len()].copy_from_slice(path.as_bytes());
    header[100..108].copy_from_slice(b"0000644\0");
    header[124..136].copy_from_slice(b"00000000004\0");
    header[156] = kind;
    header[257..263].copy_from_slice(b"ustar\0");
    header[148..156].copy_from_slice(b"        ");
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    let mut tar = header.to_vec();
    tar.extend_from_slice(b"evil");
    tar.resize(512 * 2, 0);
    tar.extend_from_slice(&[0u8; 1024]);
    let mut gzip = Process::new("gzip")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    gzip.stdin.take().unwrap().write_all(&tar).unwrap();
    gzip.wait_with_output().unwrap().stdout
}

#[test]
fn install_validates_before_copying_and_refuses_hostile_archives() {
    let s = setup();
    let source = graphiti_openclaw_tests::temp_dir("install-source");
    graphiti_openclaw_tests::copy_dir(&fixture().join(EXPERT), &source.path().join("pkg"));
    std::fs::remove_dir_all(s.experts.join(EXPERT)).unwrap();
    let mut shim = managing(&s, Some(&source.path().join("pkg")));
    let out = manage(
        &mut shim,
        ExpertsCommand::Install(InstallSource::Directory("pkg".into())),
    );
    assert_eq!(out.exit_code, 0, "{}{}", out.stdout, out.stderr);
    assert!(s.experts.join(EXPERT).join("expert.yaml").is_file());
    let twice = manage(
        &mut shim,
        ExpertsCommand::Install(InstallSource::Directory("pkg".into())),
    );
    assert!(
        twice.stderr.contains("installed already"),
        "{}",
        twice.stderr
    );

    let removed = manage(&mut shim, ExpertsCommand::Remove(EXPERT.into()));
    assert_eq!(removed.exit_code, 0, "{}", removed.stderr);
    assert!(!s.experts.join(EXPERT).exists());
    let archive = tgz(source.path(), "pkg");
    let out = manage(
        &mut shim,
        ExpertsCommand::Install(InstallSource::Archive(PackageArchive { name: "ops.tgz".into(), bytes: archive.clone() })),
    );
    assert_eq!(out.exit_code, 0, "{}", out.stderr);

    let mut corrupt = archive;
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0xff;
    let hostile: Vec<(Vec<u8>, &str)> = vec![
        (
            hostile_tgz("../escape.md", b'0'),
            "climbs out of the package",
        ),
        (hostile_tgz("/etc/cron.d/x", b'0'), "absolute"),
        (hostile_tgz("pkg/link", b'2'), "is a link"),
        (hostile_tgz("pkg/dev", b'3'), "device"),
        (corrupt, "corrupt"),
        (b"not an archive".to_vec(), "not a gzip file"),
    ];
    for (bytes, says) in hostile {
        let out = manage(
            &mut shim,
            ExpertsCommand::Install(InstallSource::Archive(PackageArchive { name: "x.tgz".into(), bytes })),
        );
        assert_ne!(out.exit_code, 0);
        assert!(out.stderr.contains(says), "{says}: {}", out.stderr);
    }
    let invalid = graphiti_openclaw_tests::temp_dir("install-invalid");
    std::fs::write(
        invalid.path().join("expert.yaml"),
        "spec: \"1.0\"\nname: broken\n",
    )
    .unwrap();
    let mut shim = managing(&s, Some(invalid.path()));
    let out = manage(
        &mut shim,
        ExpertsCommand::Install(InstallSource::Directory("broken".into())),
    );
    assert!(
        out.stderr.contains("nothing was installed"),
        "{}",
        out.stderr
    );
    assert!(!s.experts.join("broken").exists());
    let leftovers: Vec<_> = std::fs::read_dir(&s.experts)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers,
        vec![std::ffi::OsString::from(EXPERT)],
        "no staging directory left behind"
    );
}

#[test]
fn install_refuses_a_name_that_differs_only_in_case_from_an_installed_one() {
    let s = setup();
    let source = graphiti_openclaw_tests::temp_dir("install-case");
    graphiti_openclaw_tests::copy_dir(&fixture().join(EXPERT), &source.path().join("pkg"));
    graphiti_openclaw_tests::replace_in_file(
        &source.path().join("pkg/expert.yaml"),
        "name: ops-expert",
        "name: Ops-Expert",
    );
    let mut shim = managing(&s, Some(&source.path().join("pkg")));
    let out = manage(
        &mut shim,
        ExpertsCommand::Install(InstallSource::Directory("pkg".into())),
    );
    assert_ne!(out.exit_code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "Ops-Expert cannot be installed beside ops-expert (in ops-expert/): names equal once \
             lower-cased are one name, as OpenClaw lower-cases session keys"
        ),
        "{}",
        out.stderr
    );
    assert!(!s.experts.join("Ops-Expert").exists());
}

#[test]
fn bind_writes_bindings_and_the_experts_directory_is_read_only_otherwise() {
    let mut s = setup();
    let read_only = s.command(ExpertsCommand::Bind(ToolBinding {
        expert: EXPERT.into(),
        tool: "tickets".into(),
        server: "helpdesk-mcp".into(),
    }));
    assert_ne!(
        read_only.exit_code, 0,
        "the experts directory is writable for the managing commands only"
    );
    let mut shim = managing(&s, None);
    let out = manage(
        &mut shim,
        ExpertsCommand::Bind(ToolBinding { expert: EXPERT.into(), tool: "tickets".into(), server: "helpdesk-mcp".into() }),
    );
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let bindings = std::fs::read_to_string(s.experts.join(EXPERT).join("bindings.yaml")).unwrap();
    assert!(bindings.contains("server: helpdesk-mcp"), "{bindings}");
    let unknown = manage(
        &mut shim,
        ExpertsCommand::Bind(ToolBinding { expert: EXPERT.into(), tool: "email".into(), server: "x".into() }),
    );
    assert!(
        unknown.stderr.contains("requires no tool \"email\""),
        "{}",
        unknown.stderr
    );
    let outside = manage(&mut shim, ExpertsCommand::Remove("../state".into()));
    assert!(
        outside.stderr.contains("is installed"),
        "{}",
        outside.stderr
    );
}

#[test]
fn an_isolated_function_gets_a_child_session_of_its_own_with_its_inputs() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let call = |s: &mut Setup, name: &str, inputs: &str, ctx: host_shim::HookContext| {
        s.command(ExpertsCommand::Function(FunctionCall { name: name.into(), inputs_json: inputs.into(), ctx }))
    };
    let out = call(
        &mut s,
        "classify",
        r#"{"summary": "Checkout is down"}"#,
        run_context(&run),
    );
    assert_eq!(out.exit_code, 0, "{}", out.stdout);
    let answer: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let key = answer["session_key"].as_str().unwrap();
    assert!(
        key.starts_with("expert:ops-expert:fn-") && key != run.session_key,
        "{key}"
    );
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.contains("\"summary\": \"Checkout is down\"") && message.contains("outputs only"),
        "{message}"
    );
    let again = call(
        &mut s,
        "classify",
        r#"{"summary": "Another"}"#,
        run_context(&run),
    );
    assert_ne!(
        again.stdout, out.stdout,
        "each call gets a session of its own"
    );
    let inline = call(&mut s, "summarise", "{}", run_context(&run));
    assert!(inline.stdout.contains("runs inline"), "{}", inline.stdout);
    let main =
        graphiti_openclaw_tests::hook_context("agent:main:main", host_shim::ChatType::Direct);
    let outside = call(&mut s, "classify", "{}", main);
    assert!(
        outside.stdout.contains("not an expert's"),
        "{}",
        outside.stdout
    );
    let bad = call(&mut s, "classify", "[1]", run_context(&run));
    assert!(bad.stdout.contains("not a JSON object"), "{}", bad.stdout);
}

#[test]
fn a_unicode_mixed_case_expert_is_found_from_openclaws_lower_cased_session_key() {
    let mut s = setup();
    s.edit_manifest("name: ops-expert", "name: Büro-Ops");
    let answer = s.webhook_with(
        "Büro-Ops/new_ticket",
        Some(TOKEN),
        ticket("e-1", "T-1").as_bytes(),
    );
    assert_eq!(answer.status, 202, "{}", answer.body);
    let mut run = s.tick().start.remove(0);
    assert_eq!(run.session_key, "expert:Büro-Ops:inv-1");
    // What OpenClaw makes of the key.
    run.session_key = "agent:main:expert:büro-ops:inv-1".into();
    let injection = s
        .shim
        .before_agent_start(&graphiti_openclaw_tests::prompt("go"), &run_context(&run));
    assert!(
        injection
            .system_context
            .unwrap_or_default()
            .contains("careful support operator"),
        "the expert's prompt"
    );
    let verdict = s.tool_call(&run, "send_reply", r#"{"to": "T-1"}"#);
    assert!(
        matches!(verdict, host_shim::ToolVerdict::Block(_)),
        "its policy applies: {verdict:?}"
    );
    let drafts = s.tick().deliver;
    assert!(
        drafts.iter().any(|d| d.text.contains("Büro-Ops")),
        "the run's draft is delivered: {drafts:?}"
    );
}

/// The names in the state directory that begin with `prefix`.
fn aside(s: &Setup, prefix: &str) -> Vec<String> {
    std::fs::read_dir(&s.state)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[test]
fn a_huge_or_special_runtime_record_is_set_aside_unread() {
    let mut s = setup();
    let record = s.state.join("experts-runs.json");
    let huge = std::fs::File::create(&record).unwrap();
    huge.set_len(1 << 30).unwrap(); // sparse: 1 GiB of nothing
    drop(huge);
    let answer = s.webhook("new_ticket", &ticket("e-1", "T-1"));
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(aside(&s, "experts-runs.json.unreadable-").len(), 1);
    std::fs::remove_file(&record).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&record)
        .status()
        .unwrap();
    assert!(made.success());
    let work = s.tick();
    assert!(
        work.notes.iter().any(|n| n.contains("not a regular file")),
        "a FIFO is never opened: {:?}",
        work.notes
    );
    assert_eq!(s.webhook("new_ticket", &ticket("e-2", "T-2")).status, 202);
}

#[test]
fn a_record_whose_counter_went_back_gives_no_id_twice() {
    let mut s = setup();
    let first = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let record = s.state.join("experts-runs.json");
    let mut runs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    runs["next_seq"] = 0.into();
    std::fs::write(&record, runs.to_string()).unwrap();
    let second = s.accepted("new_ticket", &ticket("e-2", "T-2"));
    assert_ne!(first, second, "a new invocation never reuses an id");
    assert_eq!(
        aside(&s, "experts-runs.json.inconsistent-").len(),
        1,
        "the record as it was is kept for the operator"
    );
    assert_eq!(s.accepted("new_ticket", &ticket("e-3", "T-3")), "inv-3");
}
