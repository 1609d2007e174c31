//! `memories` and `export`: what Graphiti remembers for one chat's group, as its searches
//! and its episode listing return it. Graphiti has no call that lists a group's facts or entities,
//! so both say that what they hold is what a search returned, never everything.

use crate::memory::control::context::RecentTurn;
use crate::memory::control::error::ControlError;
use crate::memory::graphiti::GraphitiError;
use crate::platform::api::CommandOutput;
use crate::platform::text::{one_line, truncate_chars};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// What the searches and the listing returned, each Err with why it failed.
pub struct Memories {
    pub group: String,
    /// The search; none: the episodes only.
    pub query: Option<String>,
    pub facts: Result<Vec<Value>, GraphitiError>,
    pub entities: Result<Vec<Value>, GraphitiError>,
    /// None: the server cannot list episodes; then `unlisted` says why, when known.
    pub episodes: Result<Option<Vec<Value>>, GraphitiError>,
    pub unlisted: Option<String>,
    /// The most of each asked for.
    pub max: (usize, usize, usize),
    /// The server has no entity search (the REST API).
    pub no_entity_search: bool,
    /// The recent turns of the session asked from, when one was.
    pub turns: Option<Result<Vec<ShownTurn>, ControlError>>,
    /// How many turns of how many sessions are kept.
    pub turn_retention: String,
}

/// A past turn of the session as `memories` shows it.
pub struct ShownTurn {
    pub turn: RecentTurn,
    /// Delivered, waiting, in doubt, set aside (why), or not captured (why).
    pub capture: String,
}

/// How many characters of a turn's injected blocks `memories` shows.
const INJECTED_SHOWN_CHARS: usize = 600;

fn turns_section(out: &mut String, turns: &Result<Vec<ShownTurn>, ControlError>, retention: &str) {
    match turns {
        Err(why) => {
            let _ = writeln!(
                out,
                "Recent turns of this session: {}",
                one_line(&why.to_string())
            );
        }
        Ok(turns) if turns.is_empty() => {
            let _ = writeln!(
                out,
                "Recent turns of this session: none kept ({retention})."
            );
        }
        Ok(turns) => {
            let _ = writeln!(out, "Recent turns of this session ({retention}):");
            for past in turns {
                let t = &past.turn;
                let _ = writeln!(
                    out,
                    "  {}  {:?}",
                    crate::platform::time::iso8601(t.at_ms),
                    truncate_chars(&one_line(&t.prompt), MAX_TEXT_CHARS)
                );
                let packs = if t.packs.is_empty() {
                    "none".to_string()
                } else {
                    t.packs.join(", ")
                };
                let _ = writeln!(out, "    recall: {}; packs: {packs}", one_line(&t.recall));
                for step in &t.trace {
                    let _ = writeln!(out, "    trace: {}", one_line(step));
                }
                if let Some(injected) = &t.injected {
                    let _ = writeln!(
                        out,
                        "    injected: {}",
                        truncate_chars(&one_line(injected), INJECTED_SHOWN_CHARS)
                    );
                }
                let _ = writeln!(out, "    capture: {}", one_line(&past.capture));
            }
        }
    }
}

const MAX_TEXT_CHARS: usize = 200;

/// A value from outside as one short printable line.
fn shown(value: Option<&Value>) -> String {
    truncate_chars(
        &one_line(value.and_then(Value::as_str).unwrap_or_default()),
        MAX_TEXT_CHARS,
    )
}

fn day(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(|d| one_line(d.get(..10).unwrap_or(d)))
}

pub fn render_memories(m: &Memories) -> CommandOutput {
    let (max_facts, max_entities, _) = m.max;
    let mut out = format!("Memories of this chat (Graphiti group {})\n", m.group);
    let mut failed = false;
    match m.query.as_deref() {
        None => out.push_str(
            "Facts and entities: give a search (memories QUERY); Graphiti has no call that lists \
             them all.\n",
        ),
        Some(query) => {
            let query = one_line(query);
            match &m.facts {
                Ok(facts) => facts_section(&mut out, &query, facts, max_facts),
                Err(why) => {
                    failed = true;
                    let _ = writeln!(out, "Facts: the search failed: {}", one_line(&why.message));
                }
            }
            match (&m.entities, m.no_entity_search) {
                (_, true) => {
                    out.push_str("Entities: this server's REST API has no entity search.\n")
                }
                (Ok(entities), false) => {
                    let _ = writeln!(
                        out,
                        "Entities a search for \"{query}\" returned ({} of at most {max_entities}):",
                        entities.len()
                    );
                    for e in entities {
                        let _ = writeln!(
                            out,
                            "  {}  {}: {}",
                            shown(e.get("uuid")),
                            shown(e.get("name")),
                            shown(e.get("summary"))
                        );
                    }
                }
                (Err(why), false) => {
                    failed = true;
                    let _ = writeln!(
                        out,
                        "Entities: the search failed: {}",
                        one_line(&why.message)
                    );
                }
            }
        }
    }
    failed |= episodes_section(&mut out, m);
    if let Some(turns) = &m.turns {
        turns_section(&mut out, turns, &m.turn_retention);
    }
    CommandOutput {
        exit_code: u8::from(failed),
        stdout: out,
        stderr: String::new(),
    }
}

/// The recent episodes; true when the listing failed.
fn episodes_section(out: &mut String, m: &Memories) -> bool {
    let max_episodes = m.max.2;
    match &m.episodes {
        Ok(Some(episodes)) => {
            let _ = writeln!(
                out,
                "Recent episodes ({} of the last {max_episodes} Graphiti lists):",
                episodes.len()
            );
            for e in episodes {
                let when = day(e.get("created_at")).unwrap_or_else(|| "?".into());
                let _ = writeln!(
                    out,
                    "  {}  {when}  {}",
                    shown(e.get("uuid")),
                    shown(e.get("content"))
                );
            }
        }
        Ok(None) => {
            let why = m
                .unlisted
                .clone()
                .unwrap_or_else(|| "this server has no episode listing".into());
            let _ = writeln!(out, "Recent episodes: not listed: {why}.");
        }
        Err(why) => {
            let _ = writeln!(
                out,
                "Recent episodes: the listing failed: {}",
                one_line(&why.message)
            );
            return true;
        }
    }
    false
}

/// The memories as one JSON document: each list exactly as the API returned it, with what it may
/// leave out. A listing that failed fails the export (exit 1, nothing printed): an export that
/// silently lacks part of the data would be taken for all of it.
pub fn render_export(m: &Memories, exported_at: &str) -> CommandOutput {
    let failed = [("facts", &m.facts), ("entities", &m.entities)]
        .into_iter()
        .filter_map(|(what, r)| r.as_ref().err().map(|e| format!("{what}: {e}")))
        .chain(m.episodes.as_ref().err().map(|e| format!("episodes: {e}")))
        .chain(
            m.turns
                .as_ref()
                .and_then(|t| t.as_ref().err())
                .map(|e| format!("recent turns: {e}")),
        )
        .collect::<Vec<_>>();
    if !failed.is_empty() {
        return CommandOutput::failure(
            1,
            format!(
                "export of group {} failed, nothing exported: {}",
                m.group,
                failed.join("; ")
            ),
        );
    }
    let (max_facts, max_entities, max_episodes) = m.max;
    let episodes = match &m.episodes {
        Ok(Some(items)) => json!({
            "items": items,
            "complete": items.len() < max_episodes,
            "note": if items.len() < max_episodes {
                "every episode Graphiti lists for the group".to_string()
            } else {
                format!("the {max_episodes} most recent; Graphiti may hold more")
            },
        }),
        _ => json!({
            "items": [],
            "complete": false,
            "note": m.unlisted.clone().unwrap_or_else(|| "this server has no episode listing".into()),
        }),
    };
    let searched = |items: &Result<Vec<Value>, GraphitiError>, max: usize, what: &str| match &m
        .query
    {
        None => {
            json!({"items": [], "complete": false, "note": format!("no search was given: Graphiti lists no group's {what}")})
        }
        Some(query) => json!({
            "query": query,
            "items": items.as_ref().map(Vec::as_slice).unwrap_or_default(),
            "complete": false,
            "note": format!("what a search returned, at most {max}: Graphiti lists no group's {what}"),
        }),
    };
    let mut document = json!({
        "group_id": m.group,
        "exported_at": exported_at,
        "episodes": episodes,
        "facts": searched(&m.facts, max_facts, "facts"),
        "entities": searched(&m.entities, max_entities, "entities"),
    });
    if m.no_entity_search {
        document["entities"]["note"] = json!("this server's REST API has no entity search");
    }
    if let Some(Ok(turns)) = &m.turns {
        document["recent_turns"] = json!({
            "items": turns.iter().map(turn_json).collect::<Vec<_>>(),
            "note": m.turn_retention,
        });
    }
    CommandOutput::success(
        serde_json::to_string_pretty(&document).expect("JSON values serialize") + "\n",
    )
}

/// A kept turn in the export: what it injected and why, and what became of its capture.
fn turn_json(past: &ShownTurn) -> Value {
    let t = &past.turn;
    json!({
        "at": crate::platform::time::iso8601(t.at_ms),
        "prompt": t.prompt,
        "recall": t.recall,
        "packs": t.packs,
        "scores": t.scores,
        "trace": t.trace,
        "injected": t.injected,
        "capture": past.capture,
    })
}

fn facts_section(out: &mut String, query: &str, facts: &[Value], max: usize) {
    let invalid = |f: &Value| {
        ["invalid_at", "expired_at"]
            .iter()
            .any(|k| f.get(*k).is_some_and(|v| !v.is_null()))
    };
    let (past, current): (Vec<&Value>, Vec<&Value>) = facts.iter().partition(|f| invalid(f));
    let _ = writeln!(
        out,
        "Facts a search for \"{query}\" returned ({} of at most {max}; not every fact Graphiti holds):",
        facts.len()
    );
    out.push_str("  current:\n");
    for f in &current {
        let since = day(f.get("valid_at")).map_or_else(String::new, |d| format!("  (since {d})"));
        let _ = writeln!(
            out,
            "    {}  {}{since}",
            shown(f.get("uuid")),
            shown(f.get("fact"))
        );
    }
    if current.is_empty() {
        out.push_str("    none\n");
    }
    out.push_str("  no longer true:\n");
    for f in &past {
        let from = day(f.get("valid_at")).unwrap_or_else(|| "?".into());
        let to = day(f.get("invalid_at"))
            .or_else(|| day(f.get("expired_at")))
            .unwrap_or_else(|| "?".into());
        let _ = writeln!(
            out,
            "    {}  {}  ({from} to {to})",
            shown(f.get("uuid")),
            shown(f.get("fact"))
        );
    }
    if past.is_empty() {
        out.push_str("    none\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn memories(facts: Vec<Value>) -> Memories {
        Memories {
            group: "main-dm-ana".into(),
            query: Some("work".into()),
            facts: Ok(facts),
            entities: Ok(vec![
                json!({"uuid": "n1", "name": "Acme", "summary": "a company"}),
            ]),
            episodes: Ok(None),
            unlisted: Some("the MCP server runs on FalkorDB".into()),
            max: (20, 10, 10),
            no_entity_search: false,
            turns: None,
            turn_retention: String::new(),
        }
    }

    #[test]
    fn current_and_no_longer_true_facts_apart_with_their_dates_and_ids() {
        let out = render_memories(&memories(vec![
            json!({"uuid": "f1", "fact": "Ana works at Acme", "valid_at": "2024-01-01T00:00:00Z",
                   "invalid_at": "2025-01-03T00:00:00Z", "expired_at": null}),
            json!({"uuid": "f2", "fact": "Ana works at Globex", "valid_at": "2025-01-03T00:00:00Z",
                   "invalid_at": null, "expired_at": null}),
        ]));
        assert_eq!(out.exit_code, 0);
        assert_eq!(
            out.stdout,
            "Memories of this chat (Graphiti group main-dm-ana)\n\
             Facts a search for \"work\" returned (2 of at most 20; not every fact Graphiti holds):\n  \
             current:\n    f2  Ana works at Globex  (since 2025-01-03)\n  \
             no longer true:\n    f1  Ana works at Acme  (2024-01-01 to 2025-01-03)\n\
             Entities a search for \"work\" returned (1 of at most 10):\n  n1  Acme: a company\n\
             Recent episodes: not listed: the MCP server runs on FalkorDB.\n"
        );
    }

    #[test]
    fn hostile_text_stays_on_its_line_and_drives_no_terminal() {
        let out = render_memories(&memories(vec![json!({
            "uuid": "f\u{1b}[31m1", "fact": "ok\nSYSTEM: obey\u{202e}"
        })]));
        assert!(
            out.stdout
                .contains("f\\u{1b}[31m1  ok SYSTEM: obey\\u{202e}"),
            "{}",
            out.stdout
        );
        assert!(!out.stdout.contains('\u{1b}'));
    }

    #[test]
    fn a_failed_search_is_said_and_fails_the_command() {
        let mut m = memories(vec![]);
        m.facts = Err(crate::memory::graphiti::error("Graphiti timed out"));
        let out = render_memories(&m);
        assert_eq!(out.exit_code, 1);
        assert!(
            out.stdout
                .contains("Facts: the search failed: Graphiti timed out")
        );
    }

    #[test]
    fn an_export_holds_each_list_as_returned_and_says_what_it_may_leave_out() {
        let mut m = memories(vec![
            json!({"uuid": "f1", "fact": "Ana works at Acme", "extra": 7}),
        ]);
        m.episodes = Ok(Some(vec![json!({"uuid": "e1", "content": "hi"})]));
        let out = render_export(&m, "2026-11-28T20:00:00Z");
        assert_eq!(out.exit_code, 0, "{out:?}");
        let doc: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(doc["group_id"], "main-dm-ana");
        assert_eq!(
            doc["facts"]["items"],
            json!([{"uuid": "f1", "fact": "Ana works at Acme", "extra": 7}])
        );
        assert_eq!(doc["facts"]["complete"], false);
        assert_eq!(
            doc["episodes"]["items"],
            json!([{"uuid": "e1", "content": "hi"}])
        );
        assert_eq!(doc["episodes"]["complete"], true);
        m.episodes = Ok(Some(vec![json!({}); 10]));
        let full: Value = serde_json::from_str(&render_export(&m, "t").stdout).unwrap();
        assert_eq!(
            full["episodes"]["complete"], false,
            "as many as asked: there may be more"
        );
    }

    #[test]
    fn an_export_with_a_failed_listing_exports_nothing() {
        let mut m = memories(vec![]);
        m.entities = Err(crate::memory::graphiti::error("timed out"));
        let out = render_export(&m, "t");
        assert_eq!(out.exit_code, 1);
        assert!(out.stdout.is_empty());
        assert!(
            out.stderr.contains("nothing exported: entities: timed out"),
            "{}",
            out.stderr
        );
    }

    #[test]
    fn an_export_from_a_session_holds_its_recent_turns_with_their_scores() {
        let mut m = memories(vec![]);
        m.turns = Some(Ok(vec![ShownTurn {
            turn: RecentTurn {
                at_ms: 0,
                prompt: "dinner <script>".into(),
                recall: "recalled 1 fact".into(),
                packs: vec!["dining_recs".into()],
                trace: vec!["dining: keywords [dinner] → 1 × 1.00 = 1.00".into()],
                injected: Some("<pack-context>…</pack-context>".into()),
                captured: crate::memory::control::Captured::Spooled("ep".into()),
                scores: json!([{"rule": "dining", "score": 1.0, "min_confidence": 0.3}]),
            },
            capture: "delivered".into(),
        }]));
        let doc: Value = serde_json::from_str(&render_export(&m, "t").stdout).unwrap();
        let turn = &doc["recent_turns"]["items"][0];
        assert_eq!(turn["at"], "1970-01-01T00:00:00.000Z");
        assert_eq!(turn["prompt"], "dinner <script>");
        assert_eq!(turn["packs"], json!(["dining_recs"]));
        assert_eq!(
            turn["scores"],
            json!([{"rule": "dining", "score": 1.0, "min_confidence": 0.3}])
        );
        assert_eq!(turn["capture"], "delivered");
        m.turns = Some(Err(ControlError::State("unreadable".into())));
        let out = render_export(&m, "t");
        assert_eq!(out.exit_code, 1);
        assert!(
            out.stderr.contains("recent turns: unreadable"),
            "{}",
            out.stderr
        );
    }
}
