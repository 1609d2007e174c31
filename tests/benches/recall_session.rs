//! A 20-turn conversation right after captures, through the component in the shim, against the
//! stand-in behaving as the real Graphiti does while it ingests (each episode takes seconds to
//! ingest, one at a time; searches take seconds more while episodes are queued): how many turns
//! get memories, how many from the recent-results cache, and how long recall took, for each
//! configuration side by side in one run, at once, each with its own stand-in. Each turn is
//! captured and sent, so the backlog is real.
//!
//! Run: `cargo bench -p graphiti-openclaw-tests --bench recall_session` (after scripts/build.sh);
//! `RECALL_BENCH_QUICK=1` runs only the default configuration and the cache turned off. It asserts
//! that the default gets memories on at least 80% of turns, each recall within its budget.

use graphiti_openclaw_tests::{copy_dir, example_config, graphiti_shim, hook_context, temp_dir};
use graphiti_standin::{Behaviour, BusySearch, Options, StandIn};
use host_shim::{AgentEndEvent, ChatType, PromptEvent};
use std::time::{Duration, Instant};

/// The user's graph: what earlier conversations left (synthetic).
const SEED: &str = r#"{"group_id": "main-dm-user-1",
  "nodes": [
    {"uuid": "n1", "name": "Maya", "labels": ["Entity", "Person"], "summary": "Maya is the user's daughter, 7, in second grade at Hillcrest Elementary"},
    {"uuid": "n2", "name": "Dr. Osei", "labels": ["Entity", "Person"], "summary": "Dr. Osei is Maya's dentist on Alder Street"},
    {"uuid": "n3", "name": "Northwind Labs", "labels": ["Entity", "Organization"], "summary": "Northwind Labs is where the user works as a data engineer"},
    {"uuid": "n4", "name": "Lisbon", "labels": ["Entity", "Place"], "summary": "Lisbon is where the family travels in December"},
    {"uuid": "n5", "name": "Biscuit", "labels": ["Entity", "Animal"], "summary": "Biscuit is the family's beagle"}
  ],
  "facts": [
    {"uuid": "f1", "name": "HAS_APPOINTMENT", "fact": "Maya has a dentist appointment with Dr. Osei on Friday at 3 pm", "valid_at": "2026-11-10T00:00:00+00:00"},
    {"uuid": "f2", "name": "ATTENDS", "fact": "Maya attends second grade at Hillcrest Elementary", "valid_at": "2026-09-01T00:00:00+00:00"},
    {"uuid": "f3", "name": "WORKS_AT", "fact": "The user works at Northwind Labs as a data engineer", "valid_at": "2025-03-01T00:00:00+00:00"},
    {"uuid": "f4", "name": "REPORTS_TO", "fact": "The user's manager at Northwind Labs is Jonas Berg", "valid_at": "2025-03-01T00:00:00+00:00"},
    {"uuid": "f5", "name": "PLANS_TRIP", "fact": "The family flies to Lisbon on December 18 for the holidays", "valid_at": "2026-10-20T00:00:00+00:00"},
    {"uuid": "f6", "name": "BOOKED", "fact": "The family booked the Alfama apartment in Lisbon for six nights", "valid_at": "2026-10-22T00:00:00+00:00"},
    {"uuid": "f7", "name": "OWNS", "fact": "The family owns a beagle named Biscuit", "valid_at": "2024-05-01T00:00:00+00:00"},
    {"uuid": "f8", "name": "NEEDS", "fact": "Biscuit needs a dog sitter when the family travels", "valid_at": "2026-10-25T00:00:00+00:00"},
    {"uuid": "f9", "name": "ALLERGIC_TO", "fact": "Maya is allergic to peanuts", "valid_at": "2023-01-01T00:00:00+00:00"},
    {"uuid": "f10", "name": "PREFERS", "fact": "The user prefers window seats on flights", "valid_at": "2024-01-01T00:00:00+00:00"},
    {"uuid": "f11", "name": "DEADLINE", "fact": "The quarterly data migration at Northwind Labs is due on December 12", "valid_at": "2026-11-01T00:00:00+00:00"},
    {"uuid": "f12", "name": "SITTER", "fact": "Rosa from next door walked Biscuit last summer", "valid_at": "2026-07-01T00:00:00+00:00"}
  ]}"#;

/// A conversation as users have them: topics come up, are followed up, come back.
const TURNS: [&str; 20] = [
    "When is Maya's dentist appointment again?",
    "Can you remind me which dentist Maya sees?",
    "Should I move Maya's dentist visit so it doesn't clash with school?",
    "What grade is Maya in at Hillcrest?",
    "Help me plan the Lisbon trip in December",
    "Which apartment did we book in Lisbon?",
    "What seats should I pick for the Lisbon flights?",
    "Who can look after Biscuit while we're in Lisbon?",
    "Did Rosa walk Biscuit before? Draft her a message",
    "What snacks can I pack for Maya on the flight, given her allergy?",
    "When is my data migration deadline at Northwind?",
    "Draft a status update on the migration for my manager",
    "Who is my manager at Northwind Labs again?",
    "Will the migration deadline clash with the Lisbon trip?",
    "Remind me when we fly to Lisbon",
    "How many nights is the Alfama apartment booked?",
    "Is Maya's dentist appointment before or after the migration deadline?",
    "Write a note for Rosa about feeding Biscuit",
    "What should Maya bring to school on Friday after the dentist?",
    "Summarise what I need to do before the Lisbon trip",
];

struct Config {
    label: &'static str,
    budget_ms: u64,
    cache_minutes: u64,
}

struct Outcome {
    with_memories: usize,
    from_cache: usize,
    recall_ms: Vec<f64>,
}

fn run(config: &Config, model_time: Duration) -> Outcome {
    let standin = StandIn::start(Options {
        port: 0,
        ingest_delay: Duration::ZERO,
        legacy_node_search: false,
    })
    .unwrap();
    standin.seed_json(SEED).unwrap();
    standin.set_behaviour(Behaviour {
        latency: Duration::from_millis(30),
        // Small local models take seconds per episode: the backlog grows while the user chats.
        ingest: Duration::from_secs(4),
        busy_search: Some(BusySearch {
            min: Duration::from_millis(300),
            max: Duration::from_millis(5300),
            seed: 7,
        }),
        ..Behaviour::default()
    });
    let dir = temp_dir("recall-session-config");
    copy_dir(&example_config(), dir.path());
    std::fs::write(
        dir.path().join("settings.yaml"),
        format!(
            "schema_version: 1\ngraphiti:\n  url: {}/mcp\nrecall:\n  timeout_ms: {}\n  cache_max_age_minutes: {}\n",
            standin.url(),
            config.budget_ms,
            config.cache_minutes
        ),
    )
    .unwrap();
    let state = temp_dir("recall-session-state");
    let mut shim = graphiti_shim(dir.path(), state.path(), &standin.url());
    let ctx = hook_context("session-bench", ChatType::Direct);

    // The conversation before this one was just captured: six episodes wait to be ingested.
    for i in 0..6 {
        shim.agent_end(
            &exchange(
                &format!("Earlier message {i} about the week ahead"),
                "Noted.",
            ),
            &ctx,
        );
    }
    assert_eq!(shim.tick().sent, 6);

    let mut outcome = Outcome {
        with_memories: 0,
        from_cache: 0,
        recall_ms: Vec::new(),
    };
    // The session's messages so far, as OpenClaw passes them (recall adds the last user messages to
    // its query).
    let mut messages: Vec<serde_json::Value> = Vec::new();
    for (turn, prompt) in TURNS.iter().enumerate() {
        let started = Instant::now();
        let injection = shim.before_agent_start(
            &PromptEvent {
                prompt: (*prompt).into(),
                messages_json: serde_json::Value::Array(messages.clone()).to_string(),
            },
            &ctx,
        );
        outcome
            .recall_ms
            .push(started.elapsed().as_secs_f64() * 1e3);
        let block = injection.prepend_context.unwrap_or_default();
        let memories = block.contains("<graphiti-context")
            && (block.contains("Facts:") || block.contains("Entities:"));
        outcome.with_memories += usize::from(memories);
        outcome.from_cache += usize::from(memories && block.contains("cached="));
        if std::env::var_os("RECALL_BENCH_VERBOSE").is_some() {
            println!(
                "  turn {turn:>2}: {:>5.0} ms {}",
                outcome.recall_ms[turn],
                if memories { "memories" } else { "none" }
            );
        }
        std::thread::sleep(model_time);
        shim.agent_end(&exchange(prompt, "Here is what I found."), &ctx);
        shim.tick();
        messages.push(serde_json::json!({"role": "user", "content": prompt}));
        messages.push(serde_json::json!({"role": "assistant", "content": "Here is what I found."}));
    }
    outcome
}

fn exchange(user: &str, assistant: &str) -> AgentEndEvent {
    let messages = serde_json::json!([{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]);
    AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: Some(1000),
    }
}

fn percentile(samples: &[f64], p: usize) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn main() {
    let quick = std::env::var_os("RECALL_BENCH_QUICK").is_some();
    let model_time = Duration::from_millis(1000);
    let default_budget = 2500;
    let mut configs = vec![
        Config {
            label: "default (cache on)",
            budget_ms: default_budget,
            cache_minutes: 30,
        },
        Config {
            label: "cache off",
            budget_ms: default_budget,
            cache_minutes: 0,
        },
    ];
    if !quick {
        for budget_ms in [1000, 1500, 2500] {
            configs.push(Config {
                label: "cache on",
                budget_ms,
                cache_minutes: 30,
            });
        }
        configs.push(Config {
            label: "cache off",
            budget_ms: 1500,
            cache_minutes: 0,
        });
    }
    println!(
        "recall session: {} turns right after 6 captures, each turn captured; searches 0.3-5.3 s while episodes queue",
        TURNS.len()
    );
    println!(
        "{:<22} {:>9} {:>11} {:>10} {:>10} {:>10}",
        "configuration", "budget", "memories", "cached", "p50 ms", "max ms"
    );
    // Each configuration has its own stand-in and state; they wait on sleeps and timeouts, not the
    // CPU, so they run side by side.
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let runs: Vec<_> = configs
            .iter()
            .map(|config| scope.spawn(move || run(config, model_time)))
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("a configuration's run panicked"))
            .collect()
    });
    let mut default = None;
    for (config, outcome) in configs.iter().zip(outcomes) {
        println!(
            "{:<22} {:>6} ms {:>5}/{:<5} {:>10} {:>10.0} {:>10.0}",
            config.label,
            config.budget_ms,
            outcome.with_memories,
            TURNS.len(),
            outcome.from_cache,
            percentile(&outcome.recall_ms, 50),
            percentile(&outcome.recall_ms, 100)
        );
        let slowest = percentile(&outcome.recall_ms, 100);
        assert!(
            slowest < (config.budget_ms + 500) as f64,
            "{}: a recall took {slowest:.0} ms, over its {} ms budget",
            config.label,
            config.budget_ms
        );
        if default.is_none() {
            default = Some(outcome.with_memories);
        }
    }
    let with_memories = default.unwrap_or(0);
    assert!(
        with_memories * 100 >= TURNS.len() * 80,
        "the default configuration gave memories on {with_memories} of {} turns, below 80%",
        TURNS.len()
    );
}
