//! What routing returns: the decision with its trace, and the injection built from it. These mirror
//! the WIT records of the same names (`component/` converts) and serialize for
//! `intent-test --json`.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoostHit {
    /// "summary", "label", "name" or "fact".
    pub matched_on: String,
    pub matched_text: String,
    pub weight: f64,
    pub suppresses: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub intent: String,
    pub pack_type: String,
    pub keywords: Vec<String>,
    pub keyword_score: f64,
    pub boosts: Vec<BoostHit>,
    pub score: f64,
    pub min_confidence: f64,
    pub suppressed_by: Option<String>,
}

/// A candidate rule of a turn, as routing scored it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct RuleScore {
    pub rule: String,
    pub score: f64,
    pub min_confidence: f64,
    /// The rule whose entity boost suppressed this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppressed_by: Option<String>,
}
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkippedPack {
    pub pack: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Decision {
    pub intent: Option<String>,
    pub primary_pack: Option<String>,
    pub additional_packs: Vec<String>,
    pub skipped_packs: Vec<SkippedPack>,
    pub sticky: bool,
    pub no_pack_reason: Option<String>,
    pub candidates: Vec<Candidate>,
    pub trace: Vec<String>,
}

impl Decision {
    /// No pack, for a reason that is not routing's own (no configuration, a skipped turn...).
    pub fn none(reason: impl Into<String>) -> Decision {
        let reason = reason.into();
        Decision {
            trace: vec![format!("no pack: {reason}")],
            no_pack_reason: Some(reason),
            ..Decision::default()
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Injection {
    pub prepend_context: Option<String>,
    /// An expert session's assembled prompt (OpenClaw's `prependSystemContext`).
    pub system_context: Option<String>,
    /// The registry of experts, for the main agent (OpenClaw's `appendSystemContext`).
    pub append_system_context: Option<String>,
    pub decision: Decision,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureOutcome {
    /// Nothing to capture, and why.
    Skipped(String),
    /// On disk in the spool; `tick` sends it.
    Spooled {
        user: String,
        assistant: String,
        episode: String,
        group_id: String,
    },
    /// A turn that should have been captured and was not (spool full or unwritable): said loudly.
    Dropped(String),
}
