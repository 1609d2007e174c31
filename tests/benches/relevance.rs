//! Precision and recall of the facts (and entities) recall injects, over the labelled set in
//! `tests/relevance/set.yaml`, through the component: each case's pool is seeded into its own group
//! of the Graphiti stand-in, which answers like a hybrid search (matches first, then the group's
//! other items), and a real turn (`before_agent_start`, with the earlier user messages) runs in the
//! shim. What the `<graphiti-context>` block shows is compared with the labels, with the relevance
//! floor off (`recall.min_relevance: 0`) and at its default. Asserts precision ≥ 0.9 and recall ≥
//! 0.8 of relevant facts at the default.
//!
//! Run: `cargo bench -p graphiti-openclaw-tests --bench relevance` (after scripts/build.sh); it also
//! prints the figures for a range of floors. `RELEVANCE_BENCH_QUICK=1`: off and default only.

use graphiti_openclaw_tests::{
    copy_dir, example_config, graphiti_shim, hook_context, temp_dir, workspace,
};
use graphiti_standin::{Fact, Node, Options, StandIn};
use host_shim::{ChatType, HookContext, PromptEvent, Shim};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use tempfile::TempDir;

const MIN_PRECISION: f64 = 0.9;
const MIN_RECALL: f64 = 0.8;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Set {
    personas: BTreeMap<String, Persona>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Persona {
    facts: BTreeMap<String, String>,
    entities: BTreeMap<String, Entity>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entity {
    name: String,
    labels: Vec<String>,
    summary: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    persona: String,
    #[serde(default)]
    hard: Option<String>,
    #[serde(default)]
    earlier: Vec<String>,
    prompt: String,
    pool: Vec<String>,
    relevant: Vec<String>,
}

fn load_set() -> Set {
    let path = workspace().join("tests/relevance/set.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let set: Set =
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for case in &set.cases {
        let persona = set
            .personas
            .get(&case.persona)
            .unwrap_or_else(|| panic!("case {}: no persona {:?}", case.id, case.persona));
        for id in case.pool.iter().chain(&case.relevant) {
            assert!(
                persona.facts.contains_key(id) || persona.entities.contains_key(id),
                "case {}: {id} is not in persona {}",
                case.id,
                case.persona
            );
        }
        for id in &case.relevant {
            assert!(
                case.pool.contains(id),
                "case {}: relevant {id} is not in the pool",
                case.id
            );
        }
    }
    set
}

/// Each case in its own group (`rel-dm-<case>`), so a search sees only that case's pool, in order.
fn context(case: &Case) -> HookContext {
    let mut ctx = hook_context(&format!("relevance-{}", case.id), ChatType::Direct);
    ctx.agent_id = Some("rel".into());
    ctx.sender_id = Some(case.id.clone());
    ctx
}

fn group(case: &Case) -> String {
    format!("rel-dm-{}", case.id)
}

fn seed(standin: &StandIn, set: &Set) {
    for case in &set.cases {
        let persona = &set.personas[&case.persona];
        let mut facts = Vec::new();
        let mut nodes = Vec::new();
        for id in &case.pool {
            if let Some(text) = persona.facts.get(id) {
                facts.push(Fact {
                    uuid: format!("{}-{id}", case.id),
                    name: "RELATES_TO".into(),
                    fact: text.clone(),
                    ..Fact::default()
                });
            } else {
                let e = &persona.entities[id];
                let mut labels = vec!["Entity".to_string()];
                labels.extend(e.labels.iter().cloned());
                nodes.push(Node {
                    uuid: format!("{}-{id}", case.id),
                    name: e.name.clone(),
                    labels,
                    summary: e.summary.clone(),
                    ..Node::default()
                });
            }
        }
        standin.seed(&group(case), nodes, facts);
    }
}

/// The example configuration against the stand-in, limits high enough that every pool item fits
/// (so "floor off" shows the whole pool) and `min_relevance` as given (None: the default); the
/// configuration and state directories, removed when dropped.
fn shim(standin: &StandIn, min_relevance: Option<f64>) -> (Shim, [TempDir; 2]) {
    let dir = temp_dir("relevance-config");
    copy_dir(&example_config(), dir.path());
    let floor = min_relevance.map_or(String::new(), |f| format!("  min_relevance: {f}\n"));
    let settings = format!(
        "schema_version: 1\ngraphiti:\n  url: {}/mcp\n  transport: mcp\n\
         recall:\n  timeout_ms: 5000\n  max_facts: 20\n  max_nodes: 20\n  max_chars: 20000\n{floor}",
        standin.url()
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    let state = temp_dir("relevance-state");
    let shim = graphiti_shim(dir.path(), state.path(), &standin.url());
    (shim, [dir, state])
}

/// The pool items the turn's `<graphiti-context>` block showed.
fn shown(shim: &mut Shim, set: &Set, case: &Case) -> BTreeSet<String> {
    let mut messages = Vec::new();
    for text in &case.earlier {
        messages.push(serde_json::json!({"role": "user", "content": text}));
        messages.push(serde_json::json!({"role": "assistant", "content": "Noted."}));
    }
    messages.push(serde_json::json!({"role": "user", "content": case.prompt}));
    let event = PromptEvent {
        prompt: case.prompt.clone(),
        messages_json: serde_json::Value::Array(messages).to_string(),
    };
    let injection = shim.before_agent_start(&event, &context(case));
    let text = injection.prepend_context.unwrap_or_default();
    assert!(
        !text.contains("<graphiti-fallback>"),
        "case {}: recall failed: {text}",
        case.id
    );
    let block = match (
        text.find("<graphiti-context"),
        text.find("</graphiti-context>"),
    ) {
        (Some(start), Some(end)) => &text[start..end],
        _ => "",
    };
    let (facts, entities) = block.split_once("\nEntities:\n").unwrap_or((block, ""));
    let lines = |section: &str| -> Vec<String> {
        section
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(str::to_string)
            .collect()
    };
    let (fact_lines, entity_lines) = (lines(facts), lines(entities));
    let persona = &set.personas[&case.persona];
    case.pool
        .iter()
        .filter(|id| match persona.facts.get(*id) {
            Some(fact) => fact_lines.iter().any(|l| l.starts_with(fact.as_str())),
            None => {
                let name = &persona.entities[*id].name;
                entity_lines
                    .iter()
                    .any(|l| l.starts_with(&format!("{name} [")))
            }
        })
        .cloned()
        .collect()
}

#[derive(Default)]
struct Counts {
    true_positive: usize,
    false_positive: usize,
    false_negative: usize,
}

impl Counts {
    fn precision(&self) -> f64 {
        let shown = self.true_positive + self.false_positive;
        if shown == 0 {
            1.0
        } else {
            self.true_positive as f64 / shown as f64
        }
    }
    fn recall(&self) -> f64 {
        let relevant = self.true_positive + self.false_negative;
        if relevant == 0 {
            1.0
        } else {
            self.true_positive as f64 / relevant as f64
        }
    }
}

#[derive(Default)]
struct Run {
    facts: Counts,
    entities: Counts,
    /// Cases with no relevant item that still got a block, of all such cases.
    unrelated_with_memories: usize,
    unrelated: usize,
    /// Per case: items shown but not relevant, relevant but not shown.
    mistakes: Vec<(String, Vec<String>, Vec<String>)>,
}

fn run(standin: &StandIn, set: &Set, min_relevance: Option<f64>) -> Run {
    let (mut shim, _dirs) = shim(standin, min_relevance);
    let mut out = Run::default();
    for case in &set.cases {
        let shown = shown(&mut shim, set, case);
        let relevant: BTreeSet<String> = case.relevant.iter().cloned().collect();
        let persona = &set.personas[&case.persona];
        for id in &case.pool {
            let counts = if persona.facts.contains_key(id) {
                &mut out.facts
            } else {
                &mut out.entities
            };
            match (shown.contains(id), relevant.contains(id)) {
                (true, true) => counts.true_positive += 1,
                (true, false) => counts.false_positive += 1,
                (false, true) => counts.false_negative += 1,
                (false, false) => {}
            }
        }
        if relevant.is_empty() {
            out.unrelated += 1;
            out.unrelated_with_memories += usize::from(!shown.is_empty());
        }
        let wrong: Vec<String> = shown.difference(&relevant).cloned().collect();
        let missed: Vec<String> = relevant.difference(&shown).cloned().collect();
        if !wrong.is_empty() || !missed.is_empty() {
            let id = match &case.hard {
                Some(why) => format!("{} (hard: {why})", case.id),
                None => case.id.clone(),
            };
            out.mistakes.push((id, wrong, missed));
        }
    }
    out
}

fn report(label: &str, r: &Run) {
    println!(
        "{label:<22} facts: precision {:.3} recall {:.3} (tp {}, fp {}, fn {})   entities: precision {:.3} recall {:.3}   unrelated prompts with memories: {}/{}",
        r.facts.precision(),
        r.facts.recall(),
        r.facts.true_positive,
        r.facts.false_positive,
        r.facts.false_negative,
        r.entities.precision(),
        r.entities.recall(),
        r.unrelated_with_memories,
        r.unrelated
    );
}

fn main() {
    let quick = std::env::var_os("RELEVANCE_BENCH_QUICK").is_some();
    let set = load_set();
    let standin = StandIn::start(Options::default()).expect("stand-in starts");
    standin.set_search_fill(true);
    seed(&standin, &set);
    println!(
        "relevance: {} prompts ({} with nothing relevant), through the component against the stand-in",
        set.cases.len(),
        set.cases.iter().filter(|c| c.relevant.is_empty()).count()
    );
    let before = run(&standin, &set, Some(0.0));
    report("floor off (0)", &before);
    if !quick {
        for floor in [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.3] {
            report(&format!("floor {floor}"), &run(&standin, &set, Some(floor)));
        }
    }
    let after = run(&standin, &set, None);
    report("floor at default", &after);
    for (case, wrong, missed) in &after.mistakes {
        println!("  {case}: shown but not relevant {wrong:?}; relevant but hidden {missed:?}");
    }
    let (precision, recall) = (after.facts.precision(), after.facts.recall());
    assert!(
        precision >= MIN_PRECISION && recall >= MIN_RECALL,
        "at the default floor, facts precision {precision:.3} (target {MIN_PRECISION}) and recall {recall:.3} (target {MIN_RECALL})"
    );
}
