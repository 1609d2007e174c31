//! The answer to a tool call's approval check, as the engine and the hosts need it.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolVerdict {
    Allow,
    /// Refused, with the message for the agent (deliver a draft, or ask for approval).
    Block(String),
}

/// The answer to a tool call check, with notes for the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCheck {
    pub verdict: ToolVerdict,
    /// Trouble with the approval store, for the log.
    pub notes: Vec<String>,
    /// A user's approval this call used, for the log.
    pub approval_used: Option<String>,
    /// A CONFIRM or MANUAL call the policy held (an expert run pauses or delivers the draft).
    pub held: Option<Held>,
    /// A dry run's call that was not executed, for its report.
    pub planned: Option<crate::experts::runs::store::PlannedCall>,
}

/// Arguments shown with a held call, at most (characters).
pub(super) const HELD_ARGUMENTS_CHARS: usize = 2_000;

/// A call the approval policy held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub expert: String,
    /// MANUAL (a draft) rather than CONFIRM.
    pub manual: bool,
    pub operation: String,
    /// The arguments on one line, bounded, for the user.
    pub arguments: String,
    /// The approval request's id (CONFIRM).
    pub request: Option<String>,
    /// `policy.approval.timeout`.
    pub timeout_secs: Option<u64>,
}

impl ToolCheck {
    pub(super) fn allow() -> ToolCheck {
        ToolCheck {
            verdict: ToolVerdict::Allow,
            notes: vec![],
            approval_used: None,
            held: None,
            planned: None,
        }
    }
    pub(super) fn block(message: String) -> ToolCheck {
        ToolCheck {
            verdict: ToolVerdict::Block(message),
            notes: vec![],
            approval_used: None,
            held: None,
            planned: None,
        }
    }
}
