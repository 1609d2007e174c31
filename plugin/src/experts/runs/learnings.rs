//! Learnings (spec §12): a run proposes one through the `expert_learning` tool; `learning.approval`
//! decides (auto: appended now; confirm: waits for `experts approve`; manual: delivered to the user as
//! a draft). Approved entries are appended to `learnings/_package.md` or `learnings/<function>.md` in
//! the expert's runtime workspace, newest kept within `max_entries_per_file`, and reach the expert's
//! prompt ([`prompt_section`]).

use super::store::{PendingLearning, Runs};
use super::{Runtime, invocation_of_session, post};
use crate::experts::Tier;
use crate::platform::api::DeliveryKind;
use crate::platform::files::write_atomically;
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};

/// The learnings reaching a prompt, at most (characters); the newest entries are kept.
pub const PROMPT_LEARNINGS_CHARS: usize = 8_000;
const ENTRY_MARK: &str = "\n### ";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Proposal {
    scope: String,
    title: String,
    observation: String,
    correction: String,
    confidence: String,
    #[serde(default)]
    source: Option<String>,
}

fn one_line(text: &str) -> String {
    crate::platform::text::one_line(text.trim())
}

fn learnings_dir(workspace: &Path, expert: &str) -> PathBuf {
    workspace
        .join("expert-state")
        .join(expert)
        .join("learnings")
}

fn file_name(scope: &str) -> String {
    if scope == "package" {
        "_package.md".into()
    } else {
        format!("{scope}.md")
    }
}

impl Runtime<'_> {
    /// The `expert_learning` tool in session `session_key`.
    pub fn propose_learning(
        &mut self,
        expert: &str,
        session_key: &str,
        proposal_json: &str,
        now_ms: u64,
    ) -> Result<String, String> {
        let package = self.package(expert)?;
        if !package.learning.enabled {
            return Err(format!(
                "{expert} does not use learnings (learning.enabled is false)"
            ));
        }
        let p: Proposal = serde_json::from_slice(proposal_json.as_bytes())
            .map_err(|e| format!("the proposal is not {{scope, title, observation, correction, confidence[, source]}}: {e}"))?;
        if p.scope != "package" && !package.functions.iter().any(|f| f.name == p.scope) {
            return Err(format!(
                "scope {:?} is neither package nor a function of {expert}",
                p.scope
            ));
        }
        if !matches!(p.confidence.as_str(), "high" | "medium" | "low") {
            return Err("confidence is high, medium or low".into());
        }
        let source = p
            .source
            .clone()
            .or_else(|| invocation_of_session(session_key).map(|i| format!("invocation {i}")))
            .unwrap_or_else(|| session_key.to_string());
        let entry = format!(
            "### {}\n- **Date**: {}\n- **Source**: {}\n- **Observation**: {}\n- **Correction**: {}\n- **Confidence**: {}\n",
            one_line(&p.title),
            &crate::platform::time::iso8601(now_ms)[..10],
            one_line(&source),
            one_line(&p.observation),
            one_line(&p.correction),
            p.confidence
        );
        let (tier, max) = (
            package.learning.approval,
            package.learning.max_entries_per_file,
        );
        match tier {
            Tier::Auto => {
                // Under the record's lock: two runs appending at once must not drop one.
                self.with_record(now_ms, |rt, _, _| {
                    Ok((rt.append_learning(expert, &p.scope, &entry, max)?, false))
                })?;
                Ok(format!(
                    "learning recorded in learnings/{}",
                    file_name(&p.scope)
                ))
            }
            Tier::Manual => {
                let text = format!(
                    "{expert} proposes a learning (manual: add it yourself if you agree) for learnings/{}:\n\n{entry}",
                    file_name(&p.scope)
                );
                self.with_record(now_ms, |_, runs, _| {
                    post(
                        runs,
                        expert,
                        invocation_of_session(session_key),
                        DeliveryKind::Draft,
                        text,
                    );
                    Ok(((), true))
                })?;
                Ok("the learning was delivered to the user as a draft".into())
            }
            Tier::Confirm => {
                let (id, _) = self.with_record(now_ms, |_, runs, _| {
                    let id = format!("learn-{}", runs.next_seq());
                    runs.learnings.push(PendingLearning { id: id.clone(), expert: expert.to_string(), scope: p.scope.clone(), entry: entry.clone(), proposed_ms: now_ms });
                    let text = format!("{expert} proposes a learning for learnings/{}:\n\n{entry}\nApprove: `experts approve {id}` · reject: `experts reject {id}`.", file_name(&p.scope));
                    post(runs, expert, invocation_of_session(session_key), DeliveryKind::Notice, text);
                    Ok((id, true))
                })?;
                Ok(format!("the learning waits for the user's approval ({id})"))
            }
        }
    }

    /// `experts approve|reject learn-N`; None when `id` is no pending learning.
    pub fn answer_learning(
        &mut self,
        id: &str,
        approved: bool,
        now_ms: u64,
    ) -> Option<Result<String, String>> {
        // The entry is appended before the pending proposal is dropped, both under the lock: a
        // failed write keeps the proposal for another try.
        let answered = self.with_record(now_ms, |rt, runs: &mut Runs, _| {
            let Some(n) = runs.learnings.iter().position(|l| l.id == id) else {
                return Ok((None, false));
            };
            let learning = runs.learnings[n].clone();
            if approved {
                let max = rt
                    .package(&learning.expert)
                    .map_or(50, |p| p.learning.max_entries_per_file);
                rt.append_learning(&learning.expert, &learning.scope, &learning.entry, max)?;
            }
            runs.learnings.remove(n);
            let said = if approved {
                format!(
                    "learning {id} approved: appended to learnings/{}",
                    file_name(&learning.scope)
                )
            } else {
                format!("learning {id} rejected")
            };
            Ok((Some(said), true))
        });
        match answered {
            Ok((Some(said), _)) => Some(Ok(said)),
            Ok((None, _)) => None,
            Err(why) => Some(Err(why)),
        }
    }

    fn append_learning(
        &self,
        expert: &str,
        scope: &str,
        entry: &str,
        max_entries: u32,
    ) -> Result<(), String> {
        let workspace = self
            .workspace
            .ok_or("no workspace is mounted for learnings")?;
        let path = learnings_dir(workspace, expert).join(file_name(scope));
        let existing = fs::read_to_string(&path).unwrap_or_default();
        let mut entries = entries_of(&existing);
        entries.push(entry.trim_end().to_string());
        let keep = entries.len().saturating_sub(max_entries.max(1) as usize);
        let entries = &entries[keep..];
        let text = format!(
            "---\nscope: {scope}\nentry_count: {}\n---\n\n{}\n",
            entries.len(),
            entries.join("\n\n")
        );
        write_atomically(&path, text.as_bytes())
            .map_err(|e| format!("learnings/{} cannot be written: {e}", file_name(scope)))
    }
}

/// The `### ` entries of a learnings file, in order.
fn entries_of(text: &str) -> Vec<String> {
    let body = format!("\n{}", text.split_once("\n---\n").map_or(text, |(_, b)| b));
    body.split(ENTRY_MARK)
        .skip(1)
        .map(|e| format!("### {}", e.trim_end()))
        .collect()
}

/// `text`'s entries, newest first, as many as fit in `budget` characters.
fn newest_within(text: &str, budget: usize) -> String {
    let mut out = String::new();
    for entry in entries_of(text).iter().rev() {
        if out.len() + entry.len() > budget {
            break;
        }
        out.push_str(entry);
        out.push_str("\n\n");
    }
    out
}

/// The approved learnings for an expert's prompt: the package-wide ones, newest first within
/// [`PROMPT_LEARNINGS_CHARS`], then where each function's are. A function's learnings apply only
/// when that function runs (spec §12), so the prompt points to them (`learnings_dir`: where the
/// expert sees its learnings directory) and an isolated run gets them in its message
/// ([`function_learnings`]). None when there are none.
pub fn prompt_section(workspace: &Path, expert: &str, learnings_dir_shown: &str) -> Option<String> {
    let dir = learnings_dir(workspace, expert);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    crate::platform::sorting::sort(&mut files);
    let mut package = String::new();
    let mut functions = Vec::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let count = entries_of(&text).len();
        if name == file_name("package") {
            package = newest_within(&text, PROMPT_LEARNINGS_CHARS);
        } else if count > 0 {
            let function = name.trim_end_matches(".md");
            functions.push(format!(
                "- {function}: {count} learning(s) in {}/{name}",
                learnings_dir_shown.trim_end_matches('/')
            ));
        }
    }
    let mut out = String::new();
    if !package.is_empty() {
        out.push_str(&format!("## Learnings: package\n\n{package}"));
    }
    if !functions.is_empty() {
        out.push_str(&format!(
            "## Learnings of functions\n\nWhen you run one of these functions, read its learnings \
             first and apply them to that function only:\n{}\n",
            functions.join("\n")
        ));
    }
    (!out.is_empty()).then(|| format!("# Approved learnings (newest first)\n\n{}", out.trim_end()))
}

/// The approved learnings of `function`, newest first within [`PROMPT_LEARNINGS_CHARS`], for the
/// message of an isolated run of it. None when it has none.
pub fn function_learnings(workspace: &Path, expert: &str, function: &str) -> Option<String> {
    let path = learnings_dir(workspace, expert).join(file_name(function));
    let text = fs::read_to_string(path).ok()?;
    let entries = newest_within(&text, PROMPT_LEARNINGS_CHARS);
    (!entries.is_empty()).then(|| entries.trim_end().to_string())
}
