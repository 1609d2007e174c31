//! The guest's opens never block and reach only regular files and directories (issue 9, defect 4).
//! A FIFO named like a configuration file used to block the guest's open in the kernel, out of reach
//! of the call deadline, and hang the host for good. Every test here has a watchdog, so on a host that
//! still blocks it fails as a timeout instead of hanging the suite.


use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use host_shim::{Limits, Shim, ShimOptions};
use crate::support::{
    as_root, example_config, make_fifo, make_zero_device, plugin_wasm, probe_wasm, release_fifo,
    run_cli_with_watchdog, temp_dir,
};

const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// Start-up (a cached component) and exit, on a busy machine.
const MARGIN: Duration = Duration::from_secs(8);
/// What the probe answers when the host refuses to open a file that is not a regular file.
const REFUSED_READ: &str = "read err: Permission denied (os error 2)";

// ---- the probe: raw opens ----

/// Shared with the shim's other tests; outlives the run.
fn shared_cache() -> PathBuf {
    std::env::temp_dir().join("graphiti-openclaw-test-cache")
}

fn probe_shim(config: &Path, state: Option<&Path>) -> Shim {
    Shim::new(ShimOptions {
        state_dir: state.map(Path::to_path_buf),
        cache_dir: Some(shared_cache()),
        echo_logs: false,
        ..ShimOptions::new(
            probe_wasm(),
            config,
            Limits {
                call_timeout: CALL_TIMEOUT,
                memory_bytes: 64 << 20,
                send_timeout: CALL_TIMEOUT,
            },
        )
    })
    .expect("the shim starts")
}

/// The probe's answer to `command`, run on another thread; a call still running after the deadline
/// plus the margin fails the test (after unblocking `fifo`, so no thread stays stuck).
fn probe_answer(shim: Shim, command: &str, fifo: Option<&Path>) -> (String, Shim) {
    let (done, answer) = mpsc::channel();
    let command = command.to_string();
    std::thread::spawn(move || {
        let mut shim = shim;
        let injection = shim.before_agent_start(
            &host_shim::PromptEvent {
                prompt: command,
                messages_json: "[]".into(),
            },
            &host_shim::HookContext {
                session_key: Some("test".into()),
                session_id: None,
                agent_id: None,
                sender_id: None,
                sender_name: None,
                chat_id: None,
                channel: None,
                chat_type: host_shim::ChatType::Direct,
                trigger: Some("user".into()),
                run_id: None,
                input_provenance: None,
            },
        );
        let text = injection
            .prepend_context
            .unwrap_or_else(|| format!("no answer: {:?}", injection.notes));
        let _ = done.send((text, shim));
    });
    match answer.recv_timeout(CALL_TIMEOUT + MARGIN) {
        Ok(answered) => answered,
        Err(_) => {
            if let Some(fifo) = fifo {
                release_fifo(fifo);
            }
            panic!("the call hung: no answer after {:?}", CALL_TIMEOUT + MARGIN);
        }
    }
}

fn refused_by_the_host(shim: &Shim, name: &str) -> bool {
    shim.take_logs()
        .iter()
        .any(|(_, line)| line.contains("refused to open") && line.contains(name))
}

#[test]
fn reading_a_fifo_in_config_fails_at_once() {
    let config = temp_dir("fifo-read");
    let fifo = config.path().join("rules.yaml");
    make_fifo(&fifo);
    std::os::unix::fs::symlink("rules.yaml", config.path().join("link.yaml")).unwrap();
    let mut shim = probe_shim(config.path(), None);

    for name in ["rules.yaml", "link.yaml"] {
        let started = Instant::now();
        let answer;
        (answer, shim) = probe_answer(shim, &format!("read /config/{name}"), Some(&fifo));
        assert_eq!(answer, REFUSED_READ, "{name}");
        assert!(
            started.elapsed() < CALL_TIMEOUT,
            "{name}: {:?}",
            started.elapsed()
        );
        assert!(refused_by_the_host(&shim, name), "{name}: no host log");
    }
    // Regular files still read.
    std::fs::write(config.path().join("ok.yaml"), "ok").unwrap();
    let (answer, _) = probe_answer(shim, "read /config/ok.yaml", None);
    assert_eq!(answer, "read ok: 2 bytes");
}

#[test]
fn writing_to_a_fifo_in_state_fails_at_once() {
    let (config, state) = (temp_dir("fifo-write-config"), temp_dir("fifo-write"));
    let fifo = state.path().join("pipe");
    make_fifo(&fifo);
    let shim = probe_shim(config.path(), Some(state.path()));

    let (answer, shim) = probe_answer(shim, "write /state/pipe", Some(&fifo));
    assert_eq!(answer, "write err: Permission denied (os error 2)");
    assert!(refused_by_the_host(&shim, "pipe"));
    let (answer, _) = probe_answer(shim, "write /state/file", None);
    assert_eq!(answer, "write ok");
}

#[test]
fn devices_and_sockets_are_refused_however_they_are_reached() {
    let config = temp_dir("special");
    let mut names = vec!["dev-zero-link", "socket"];
    if as_root("a device node in the config directory") {
        make_zero_device(&config.path().join("zero"));
        names.push("zero");
    }
    std::os::unix::fs::symlink("/dev/zero", config.path().join("dev-zero-link")).unwrap();
    let _socket = UnixListener::bind(config.path().join("socket")).unwrap();
    let mut shim = probe_shim(config.path(), None);

    for name in names {
        let answer;
        (answer, shim) = probe_answer(shim, &format!("read /config/{name}"), None);
        // Not a read that ran until the guest ran out of memory: refused at the open. (The link
        // leaves the mount: the sandbox's own refusal.)
        if name == "dev-zero-link" {
            assert!(answer.starts_with("read err: "), "{name}: {answer}");
        } else {
            assert_eq!(answer, REFUSED_READ, "{name}");
        }
    }
}

// ---- the real component through the CLI ----

/// Puts a special file at the path.
type MakeFile = fn(&Path);

/// A copy of the example configuration.
fn config_copy(dir: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-R")
        .arg(example_config())
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Runs the CLI with the real component; fails when it outlives the call timeout plus the margin.
/// The first call compiles the component into the shared cache, with a generous limit, so the
/// watched runs measure the call, not the compilation.
fn cli(home: &Path, args: &[&str], fifo: Option<&Path>) -> String {
    static WARM: OnceLock<()> = OnceLock::new();
    WARM.get_or_init(|| {
        let config = example_config();
        let args = [
            &["--config-dir", config.to_str().unwrap()][..],
            &["lint-rules"],
        ]
        .concat();
        run_cli(home, &args, None, Duration::from_secs(600));
    });
    run_cli(home, args, fifo, CALL_TIMEOUT + MARGIN)
}

fn run_cli(home: &Path, args: &[&str], fifo: Option<&Path>, limit: Duration) -> String {
    let (wasm, cache) = (plugin_wasm(), shared_cache());
    let timeout = CALL_TIMEOUT.as_millis().to_string();
    // Quiet: the host's own log lines stay out, so what names the file is the component's answer.
    let base = [
        "--quiet",
        "--wasm",
        wasm.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "--call-timeout-ms",
        &timeout,
        "--memory-limit-mb",
        "64",
    ];
    let args = [&base[..], args].concat();
    let started = Instant::now();
    let Some(output) = run_cli_with_watchdog(&args, home, limit) else {
        if let Some(fifo) = fifo {
            release_fifo(fifo);
        }
        panic!(
            "graphiti-openclaw {} hung: killed after {:?}",
            args.join(" "),
            started.elapsed()
        );
    };
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

#[test]
fn a_special_file_as_intent_rules_is_a_config_error_naming_it() {
    let home = temp_dir("cli-rules");
    let config = home.path().join("config");
    config_copy(&config);
    let rules = config.join("intent_rules.yaml");
    let kinds: [(&str, MakeFile); 3] = [
        ("fifo", make_fifo),
        ("char device", make_zero_device),
        // Kept listening for the rest of the test.
        ("socket", |path| {
            std::mem::forget(UnixListener::bind(path).unwrap())
        }),
    ];
    for (kind, make) in kinds {
        if kind == "char device" && !as_root("a device node as intent_rules.yaml") {
            continue;
        }
        std::fs::remove_file(&rules).unwrap();
        make(&rules);
        for command in [
            &["check-config"][..],
            &["intent-test", "book a table for dinner"],
        ] {
            let args = [&["--config-dir", config.to_str().unwrap()][..], command].concat();
            let output = cli(home.path(), &args, Some(&rules));
            assert!(
                output.contains("intent_rules.yaml"),
                "{kind}, {command:?}: the output does not name the file:\n{output}"
            );
            assert!(
                !output.contains("memory limit"),
                "{kind}, {command:?}:\n{output}"
            );
        }
    }
}

#[test]
fn a_fifo_as_an_overlay_pack_is_a_located_config_error() {
    let home = temp_dir("cli-overlay");
    let overlay = home.path().join("overlay");
    std::fs::create_dir_all(overlay.join("packs")).unwrap();
    let pack = overlay.join("packs/dining_recs.pack.yaml");
    make_fifo(&pack);
    let config = example_config();
    for command in [
        &["check-config"][..],
        &["intent-test", "book a table for dinner"],
    ] {
        let args = [
            &[
                "--config-dir",
                config.to_str().unwrap(),
                "--overlay-dir",
                overlay.to_str().unwrap(),
            ][..],
            command,
        ]
        .concat();
        let output = cli(home.path(), &args, Some(&pack));
        // The component locates a pack it cannot read at the registry entry naming its file.
        assert!(
            output.contains("pack_registry.yaml:4") && output.contains("cannot read"),
            "{command:?}: the output does not locate the pack:\n{output}"
        );
    }
}

#[test]
fn a_fifo_in_the_state_directory_does_not_hang_a_turn_or_status() {
    let home = temp_dir("cli-state");
    let state = home.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let stats = state.join("stats.json");
    make_fifo(&stats);
    let config = example_config();
    let base = [
        "--config-dir",
        config.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ];
    cli(
        home.path(),
        &[&base[..], &["status"]].concat(),
        Some(&stats),
    );
    cli(
        home.path(),
        &[&base[..], &["turn", "book a table for dinner"]].concat(),
        Some(&stats),
    );
}

/// A configuration file too big for the memory limit: the call fails, and the message names the
/// file, its size and the two ways out, not only the limit.
#[test]
fn a_rules_file_too_big_for_the_memory_limit_is_named_with_its_size() {
    let home = temp_dir("cli-huge-rules");
    let config = home.path().join("config");
    config_copy(&config);
    let rules = config.join("intent_rules.yaml");
    let line = format!("# {}\n", "x".repeat(1021));
    std::fs::write(&rules, line.repeat(80 * 1024)).unwrap();
    let args = ["--config-dir", config.to_str().unwrap(), "check-config"];
    let output = cli(home.path(), &args, None);
    let real = rules.canonicalize().unwrap();
    assert!(
        output.contains(&format!(
            "exceeded its memory limit of 64 MiB; the largest file it opened in the call: {} \
             (80.0 MiB); give the host more memory (--memory-limit-mb) or make the file smaller",
            real.display()
        )),
        "{output}"
    );
}
