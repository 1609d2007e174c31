//! Why a memory-control operation did not happen, by kind: the exit code and what a caller does next
//! follow from the kind, never from the words; the words are what the person reads.

use crate::memory::graphiti::GraphitiError;
use crate::platform::api::CommandOutput;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum ControlError {
    /// The settings keep the chat out of memory: which setting.
    KeptOut(String),
    /// The chat's ids give it no Graphiti group: why.
    NoGroup(String),
    /// The host mounted no state directory: what that leaves undone.
    NoStateDir(&'static str),
    /// Not for whoever asked, or not here: a group chat, an operator's command, a cap reached.
    Refused(String),
    /// The request cannot be carried out as given (a usage error).
    Unusable(String),
    /// What was named is not there: no such forget waiting (or expired), no such item or id.
    NotFound(String),
    /// The forget was proposed in another chat, or to someone else.
    NotYours(String),
    /// Another process is changing what this would change.
    Busy(String),
    /// A file of the state directory cannot be read, written or locked: which, and why.
    State(String),
    /// Graphiti failed at a step (what was asked).
    Graphiti(&'static str, GraphitiError),
}

impl ControlError {
    /// The command's exit code: 2 for a request that cannot be carried out as given, else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            ControlError::Unusable(_) => 2,
            _ => 1,
        }
    }

    /// The command's failure, saying why.
    pub fn output(&self) -> CommandOutput {
        CommandOutput::failure(self.exit_code(), self.to_string())
    }

    /// The command's failure, saying what was not done (`nothing deleted`) before why.
    pub fn output_for(&self, undone: &str) -> CommandOutput {
        CommandOutput::failure(self.exit_code(), format!("{undone}: {self}"))
    }
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::KeptOut(why)
            | ControlError::NoGroup(why)
            | ControlError::Refused(why)
            | ControlError::Unusable(why)
            | ControlError::NotFound(why)
            | ControlError::NotYours(why)
            | ControlError::Busy(why)
            | ControlError::State(why) => f.write_str(why),
            ControlError::NoStateDir(undone) => write!(f, "no state directory: {undone}"),
            ControlError::Graphiti(step, e) => write!(f, "{step} failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usage_error_exits_2_and_every_other_failure_1() {
        let unusable = ControlError::Unusable("name the numbers".into());
        assert_eq!(unusable.output().exit_code, 2);
        assert_eq!(unusable.output().stderr, "name the numbers\n");
        let gone = ControlError::NotFound("no forget 0123456789abcdef is waiting".into());
        let out = gone.output_for("nothing deleted");
        assert_eq!(out.exit_code, 1);
        assert_eq!(
            out.stderr,
            "nothing deleted: no forget 0123456789abcdef is waiting\n"
        );
        let none = ControlError::NoStateDir("no forget can be waiting");
        assert_eq!(
            none.to_string(),
            "no state directory: no forget can be waiting"
        );
        let failed = ControlError::Graphiti(
            "the search",
            crate::memory::graphiti::error("search_memory_facts: HTTP 500: boom"),
        );
        assert_eq!(
            failed.to_string(),
            "the search failed: search_memory_facts: HTTP 500: boom"
        );
    }
}
