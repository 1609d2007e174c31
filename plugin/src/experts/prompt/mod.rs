//! The expert sub-agent's system prompt (loader design §2): persona and orchestrator in full, indexes of
//! functions, processes, knowledge and state, the resolved approval policy, and where files live.
//!
//! Deterministic: same package, workspace and limits, same bytes. Package text reaches the model as the
//! author wrote it (`discount > 20%`, not `discount &gt; 20%`): the prompt is system context of its own,
//! inside no tag of ours, so there is no delimiter of ours to close. Its one structure is its `##`
//! sections, so the package's headings are demoted below them (a package cannot forge a
//! `## Tool Approval Policy` section) and one-line fields stay on one line.
//!
//! The way through: `document` (persona, rules, orchestrator), `indexes`, `approval_policy` and
//! `instructions` each build their sections; `section` fits them to the total and joins them.

mod approval_policy;
mod cut;
mod document;
mod indexes;
mod instructions;
mod limits;
mod section;

use crate::experts::package::Package;
use approval_policy::policy_section;
use document::document_sections;
use indexes::index_sections;
use instructions::instructions;
use section::{Section, fit_total, join};

pub(crate) use document::one_line;
pub use limits::PromptLimits;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembledPrompt {
    pub text: String,
    /// What was cut to fit the limits, one line each (also marked in the text).
    pub truncations: Vec<String>,
}

/// Assembles the system prompt. `workspace` is the runtime workspace as the agent sees it, `session`
/// the directory of the session's own state files (see [`crate::experts::state::session_dir_name`]).
pub fn assemble_prompt(
    package: &Package,
    workspace: &str,
    session: Option<&str>,
    limits: &PromptLimits,
) -> AssembledPrompt {
    let mut truncations = Vec::new();
    let ws = workspace.trim_end_matches('/');
    let mut sections = document_sections(package, limits, &mut truncations);
    sections.extend(index_sections(package, limits, &mut truncations));
    sections.push(Section {
        title: "Tool Approval Policy",
        body: policy_section(package, limits, &mut truncations),
        reserved: true,
    });
    sections.push(Section {
        title: "Instructions",
        body: instructions(package, ws, session),
        reserved: true,
    });

    fit_total(&mut sections, limits.max_total_chars, &mut truncations);
    let text = join(&sections);
    AssembledPrompt { text, truncations }
}

#[cfg(test)]
mod tests;
