//! What the loaded package carries for the runtime: the spec's defaults, the package's defaults, each
//! process's overrides field by field, and the trigger, process and function fields.

use super::support::TempPackage;
use graphiti_openclaw::experts::package::{
    Backoff, Delivery, DeliveryFormat, Execution, Learning, OnFailure, Retry, SessionMode,
    SlaBreach,
};
use graphiti_openclaw::experts::{Package, Tier};

fn ready(package: &TempPackage) -> Package {
    let expert = package.load();
    assert!(
        expert.findings.is_empty(),
        "{}",
        super::support::findings_text(&expert.findings)
    );
    expert.ready().unwrap().clone()
}

fn process<'a>(
    package: &'a Package,
    name: &str,
) -> &'a graphiti_openclaw::experts::package::Process {
    package.processes.iter().find(|p| p.name == name).unwrap()
}

#[test]
fn without_settings_the_spec_defaults_apply() {
    let temp = TempPackage::base("defaults");
    temp.edit(
        "expert.yaml",
        "learning:\n  enabled: true\n  approval: confirm\n",
        "",
    );
    let package = ready(&temp);
    let spec_execution = Execution {
        timeout_secs: None,
        idempotent: false,
        retry: Retry {
            max_attempts: 1,
            backoff: Backoff::Exponential,
            delay_secs: 30,
        },
        on_failure: OnFailure::Escalate,
        resume_from_execution_log: false,
    };
    let spec_delivery = Delivery {
        format: DeliveryFormat::Both,
        channel: "main".into(),
        sla_secs: None,
        sla_breach: SlaBreach::Warn,
    };
    assert_eq!(package.execution, spec_execution);
    assert_eq!(package.delivery, spec_delivery);
    let spec_learning = Learning {
        enabled: false,
        approval: Tier::Confirm,
        max_entries_per_file: 50,
    };
    assert_eq!(package.learning, spec_learning);
    for p in &package.processes {
        assert_eq!(
            (&p.execution, &p.delivery),
            (&spec_execution, &spec_delivery)
        );
    }
    let trigger = &package.triggers[0];
    assert_eq!(trigger.session, SessionMode::Isolated);
    assert_eq!(
        (trigger.dedupe_key.as_ref(), trigger.payload_mapping.len()),
        (None, 0)
    );
    assert!(package.functions.iter().all(|f| !f.isolated));
}

const PACKAGE_RUNTIME: &str = "\
execution:
  timeout: 10m
  retry:
    max_attempts: 3
    delay: 1m
  on_failure: dead_letter
  resume_from_execution_log: true
delivery:
  format: narrative
  sla_breach: escalate
";

const PROCESS_OVERRIDES: &str = "\
execution:
  timeout: 2m
  retry:
    backoff: fixed
delivery:
  format: structured
  sla: 5m
";

#[test]
fn a_process_overrides_only_the_fields_it_sets() {
    let temp = TempPackage::base("overrides");
    temp.manifest_before_components(PACKAGE_RUNTIME);
    temp.edit(
        "processes/daily-review.md",
        "trigger: daily\n",
        &format!("trigger: daily\n{PROCESS_OVERRIDES}"),
    );
    let package = ready(&temp);
    let defaults = Execution {
        timeout_secs: Some(600),
        idempotent: false,
        retry: Retry {
            max_attempts: 3,
            backoff: Backoff::Exponential,
            delay_secs: 60,
        },
        on_failure: OnFailure::DeadLetter,
        resume_from_execution_log: true,
    };
    assert_eq!(package.execution, defaults);
    let overridden = Execution {
        timeout_secs: Some(120),
        retry: Retry {
            backoff: Backoff::Fixed,
            ..defaults.retry.clone()
        },
        ..defaults.clone()
    };
    assert_eq!(process(&package, "daily-review").execution, overridden);
    assert_eq!(process(&package, "weekly-cleanup").execution, defaults);

    let delivery = |format, sla_secs| Delivery {
        format,
        channel: "main".into(),
        sla_secs,
        sla_breach: SlaBreach::Escalate,
    };
    assert_eq!(package.delivery, delivery(DeliveryFormat::Narrative, None));
    assert_eq!(
        process(&package, "daily-review").delivery,
        delivery(DeliveryFormat::Structured, Some(300))
    );
    assert_eq!(
        process(&package, "weekly-cleanup").delivery,
        delivery(DeliveryFormat::Narrative, None)
    );
}

const WEBHOOK: &str = "  - name: note_added
    type: webhook
    process: weekly-cleanup
    session: main
    dedupe_key: event.id
    concurrency: serial_per_key
    concurrency_key: note.folder
    payload_mapping:
      zeta: note.body
      alpha: messages[0].id
      mid: note.tags[2]
";

#[test]
fn triggers_carry_session_dedupe_key_and_the_mapping_in_manifest_order() {
    let temp = TempPackage::base("webhook");
    temp.edit(
        "expert.yaml",
        "learning:\n",
        &format!("{WEBHOOK}learning:\n"),
    );
    let package = ready(&temp);
    let trigger = package
        .triggers
        .iter()
        .find(|t| t.name == "note_added")
        .unwrap();
    assert_eq!(trigger.session, SessionMode::Main);
    assert_eq!(trigger.dedupe_key.as_deref(), Some("event.id"));
    assert_eq!(trigger.concurrency_key.as_deref(), Some("note.folder"));
    let mapping: Vec<(&str, &str)> = trigger
        .payload_mapping
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        mapping,
        [
            ("zeta", "note.body"),
            ("alpha", "messages[0].id"),
            ("mid", "note.tags[2]")
        ]
    );
}

const PROCESS_FIELDS: &str = "\
inputs:
  - name: note_id
    type: string
  - folder
outputs:
  - name: summary
    type: string
context:
  - ./state/log.md
  - knowledge/style.md
scratchpad: ./scratch/review-{note_id}.md
";

#[test]
fn processes_carry_inputs_outputs_context_and_scratchpad() {
    let temp = TempPackage::base("process-fields");
    temp.edit(
        "processes/daily-review.md",
        "trigger: daily\n",
        &format!("trigger: daily\n{PROCESS_FIELDS}"),
    );
    let package = ready(&temp);
    let p = process(&package, "daily-review");
    assert_eq!(p.inputs, ["note_id", "folder"]);
    assert_eq!(p.outputs, ["summary"]);
    assert_eq!(p.context, ["state/log.md", "knowledge/style.md"]);
    assert_eq!(
        p.scratchpad.as_deref(),
        Some("./scratch/review-{note_id}.md")
    );
    let other = process(&package, "weekly-cleanup");
    assert!(other.inputs.is_empty() && other.context.is_empty() && other.scratchpad.is_none());
}

#[test]
fn functions_and_learning_carry_their_settings() {
    let temp = TempPackage::base("function-session");
    temp.edit(
        "functions/reply.md",
        "tools:\n",
        "session: isolated\ntools:\n",
    );
    temp.edit(
        "functions/summarize.md",
        "tools:",
        "session: inline\ntools:",
    );
    temp.edit(
        "expert.yaml",
        "  approval: confirm\n",
        "  approval: manual\n  max_entries_per_file: 7\n",
    );
    let package = ready(&temp);
    let isolated: Vec<(&str, bool)> = package
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.isolated))
        .collect();
    assert_eq!(isolated, [("reply", true), ("summarize", false)]);
    assert_eq!(
        package.learning,
        Learning {
            enabled: true,
            approval: Tier::Manual,
            max_entries_per_file: 7
        }
    );
}

fn example() -> Package {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../config/experts/trip-planner-expert");
    let expert = graphiti_openclaw::experts::load_expert(&dir, &Default::default());
    expert.ready().expect("the example loads clean").clone()
}

#[test]
fn the_example_processes_inherit_and_override_the_runtime_settings() {
    let package = &example();
    let inherited = Execution {
        timeout_secs: Some(900),
        idempotent: false,
        retry: Retry {
            max_attempts: 2,
            backoff: Backoff::Exponential,
            delay_secs: 60,
        },
        on_failure: OnFailure::Escalate,
        resume_from_execution_log: true,
    };
    assert_eq!(process(package, "plan-trip").execution, inherited);
    assert_eq!(process(package, "plan-trip").delivery.sla_secs, Some(600));
    let track = process(package, "track-booking");
    assert_eq!(
        track.execution,
        Execution {
            timeout_secs: Some(300),
            idempotent: true,
            retry: Retry {
                max_attempts: 3,
                backoff: Backoff::Fixed,
                delay_secs: 30,
            },
            resume_from_execution_log: false,
            ..inherited
        }
    );
    assert_eq!(
        track.delivery,
        Delivery {
            format: DeliveryFormat::Narrative,
            channel: "main".into(),
            sla_secs: Some(120),
            sla_breach: SlaBreach::Escalate,
        }
    );
    assert_eq!(
        track.inputs,
        ["booking_id", "traveler_id", "status", "changed_leg"]
    );
    assert_eq!(track.context, ["state/trips.md"]);
    assert_eq!(
        track.scratchpad.as_deref(),
        Some("./scratch/booking-{booking_id}.md")
    );
}

#[test]
fn the_example_uses_every_trigger_type_an_isolated_function_and_learning() {
    let package = example();
    let mut kinds: Vec<&str> = package.triggers.iter().map(|t| t.kind.as_str()).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["channel", "cron", "webhook"]);
    let track = process(&package, "track-booking");
    let webhook = package
        .triggers
        .iter()
        .find(|t| t.kind == "webhook")
        .unwrap();
    assert_eq!(
        (
            webhook.dedupe_key.as_deref(),
            webhook.concurrency_key.as_deref()
        ),
        (Some("event_id"), Some("traveler_id"))
    );
    let mapped: Vec<&str> = webhook
        .payload_mapping
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(mapped, track.inputs);
    let cron = package.triggers.iter().find(|t| t.kind == "cron").unwrap();
    assert!(graphiti_openclaw::experts::cron::parse(cron.expr.as_deref().unwrap()).is_ok());
    let isolated: Vec<&str> = package
        .functions
        .iter()
        .filter(|f| f.isolated)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(isolated, ["assess-trip-request"]);
    assert_eq!(
        package.learning,
        Learning {
            enabled: true,
            approval: Tier::Confirm,
            max_entries_per_file: 50
        }
    );
}
