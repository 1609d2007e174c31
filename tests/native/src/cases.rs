//! The routing case tables: one YAML file per property, one row per case (see `tests/cases/README.md`).

use graphiti_openclaw::platform::api::IntentTestRequest;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub property: String,
    /// A config directory relative to the workspace; the example config when absent.
    #[serde(default)]
    pub config: Option<String>,
    /// Settings laid over the config's settings file, as a host (OpenClaw's plugin config) does.
    #[serde(default)]
    pub settings: Option<serde_norway::Value>,
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub prompt: String,
    #[serde(default)]
    pub recall: Option<serde_norway::Value>,
    #[serde(default)]
    pub group_chat: bool,
    #[serde(default)]
    pub previous: Option<String>,
    /// The moment routed at (RFC 3339); when absent, and with it `previous_at`, no time passed.
    #[serde(default)]
    pub now: Option<String>,
    /// When the previous pack was injected (RFC 3339) [default: `now`].
    #[serde(default)]
    pub previous_at: Option<String>,
    /// Turns in a row that had carried the previous pack, its own turn included.
    #[serde(default)]
    pub carried_turns: Option<u32>,
    /// The previous turn's prompt (the names it mentioned, for the strict follow-up test).
    #[serde(default)]
    pub previous_prompt: Option<String>,
    /// The winning intent, or "none".
    pub expect: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub additional: Option<Vec<String>>,
    #[serde(default)]
    pub sticky: Option<bool>,
}

/// What a case can observe, from the native engine or the component alike.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub intent: Option<String>,
    pub no_pack_reason: Option<String>,
    pub additional: Vec<String>,
    pub sticky: bool,
    pub trace: Vec<String>,
    pub prepend_context: Option<String>,
}

impl From<graphiti_openclaw::routing::decision::Injection> for Observed {
    fn from(i: graphiti_openclaw::routing::decision::Injection) -> Observed {
        Observed {
            intent: i.decision.intent,
            no_pack_reason: i.decision.no_pack_reason,
            additional: i.decision.additional_packs,
            sticky: i.decision.sticky,
            trace: i.decision.trace,
            prepend_context: i.prepend_context,
        }
    }
}

pub fn cases_dir() -> PathBuf {
    crate::workspace().join("tests/cases")
}

/// Every case file, in name order.
pub fn load_all() -> Vec<(String, CaseFile)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read case file");
            let file: CaseFile =
                serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                file,
            )
        })
        .collect()
}

impl CaseFile {
    pub fn config_dir(&self) -> PathBuf {
        match &self.config {
            Some(dir) => crate::workspace().join(dir),
            None => crate::example_config(),
        }
    }

    /// `settings`, as the JSON a host passes.
    pub fn host_settings(&self) -> Option<String> {
        self.settings
            .as_ref()
            .map(|s| serde_json::to_string(s).expect("settings as JSON"))
    }
}

/// A case's moment (RFC 3339) in Unix milliseconds.
fn moment(case: &str, field: &str, text: &str) -> u64 {
    let at: jiff::Timestamp = text
        .parse()
        .unwrap_or_else(|e| panic!("case {case}: {field} {text:?} is not RFC 3339: {e}"));
    u64::try_from(at.as_millisecond())
        .unwrap_or_else(|_| panic!("case {case}: {field} before 1970"))
}

impl Case {
    pub fn request(&self, config_dir: &Path) -> IntentTestRequest {
        let recall_json = self.recall.as_ref().map(|recall| match recall {
            serde_norway::Value::String(file) => std::fs::read_to_string(config_dir.join(file))
                .unwrap_or_else(|e| panic!("case {}: recall file {file}: {e}", self.name)),
            inline => serde_json::to_string(inline).expect("inline recall as JSON"),
        });
        IntentTestRequest {
            prompt: self.prompt.clone(),
            recall_json,
            group_chat: self.group_chat,
            previous_pack: self.previous.clone(),
            now_ms: self.now.as_deref().map(|t| moment(&self.name, "now", t)),
            previous_at_ms: (self.previous_at.as_deref())
                .map(|t| moment(&self.name, "previous_at", t)),
            carried_turns: self.carried_turns,
            previous_prompt: self.previous_prompt.clone(),
        }
    }

    /// Whether what routing did matches the row; the error says what differed.
    pub fn check(&self, seen: &Observed) -> Result<(), String> {
        let got = seen
            .intent
            .as_deref()
            .filter(|_| seen.prepend_context.is_some())
            .unwrap_or("none");
        let mut problems = Vec::new();
        if got != self.expect {
            problems.push(format!("expected {}, got {got}", self.expect));
        }
        if self.expect == "none" && seen.prepend_context.is_some() {
            problems.push("a pack context was injected".into());
        }
        if self.expect != "none"
            && seen
                .prepend_context
                .as_deref()
                .is_none_or(|b| !b.starts_with("<pack-context "))
        {
            problems.push("no <pack-context> block".into());
        }
        if let Some(reason) = &self.reason
            && !seen
                .no_pack_reason
                .as_deref()
                .unwrap_or("")
                .contains(reason.as_str())
        {
            problems.push(format!(
                "reason {:?} does not contain {reason:?}",
                seen.no_pack_reason
            ));
        }
        if let Some(additional) = &self.additional
            && &seen.additional != additional
        {
            problems.push(format!(
                "additional packs {:?}, expected {additional:?}",
                seen.additional
            ));
        }
        if let Some(sticky) = self.sticky
            && seen.sticky != sticky
        {
            problems.push(format!("sticky is {}, expected {sticky}", seen.sticky));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "case {} ({:?}): {}\n  trace: {:#?}",
                self.name,
                self.prompt,
                problems.join("; "),
                seen.trace
            ))
        }
    }
}
