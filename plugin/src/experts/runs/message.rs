//! The message a run starts with (spec §13 steps 10–14): which process, its inputs, the process's
//! `context` files preloaded, and on a later attempt the execution log that says where to resume.
//! The expert's own prompt reaches the session through `before_prompt_build`, as in any expert
//! session.

use super::Runtime;
use super::store::Invocation;
use crate::experts::package::{
    DeliveryFormat, Execution, KnowledgeKind, Package, Process, StateScope,
};
use crate::experts::state::{SESSIONS_DIR, session_dir_name};
use std::fs;
use std::path::Path;

/// Largest context file preloaded, and all of them together (characters); beyond, the run is told
/// to read the rest itself.
const MAX_CONTEXT_FILE_CHARS: usize = 16_000;
const MAX_CONTEXT_CHARS: usize = 48_000;

impl Runtime<'_> {
    /// The message `inv`'s run starts with; `dry_run` (for `experts fire`, shown to the operator)
    /// names private knowledge without its text.
    pub fn run_message(
        &self,
        inv: &Invocation,
        execution: Option<&Execution>,
        dry_run: bool,
    ) -> String {
        let mut text = String::new();
        let package = self.package(&inv.expert).ok();
        let process = package
            .zip(inv.process.as_ref())
            .and_then(|(p, name)| p.processes.iter().find(|proc| &proc.name == name));
        match (&inv.message, process) {
            (Some(message), None) if inv.process.is_none() => text.push_str(&format!(
                "{} (invocation {}, a manual run).\n\n{message}\n",
                inv.expert, inv.id
            )),
            (message, Some(process)) => {
                text.push_str(&format!(
                    "Run the process `{}` ({}) now: invocation {}, {}.\n",
                    process.name, process.path, inv.id, inv.source
                ));
                text.push_str(&inputs_section(inv));
                if let Some(message) = message {
                    text.push_str(&format!("\n## From the user\n\n{message}\n"));
                }
                if let Some(package) = package {
                    text.push_str(&self.context_section(package, process, inv, dry_run));
                }
                text.push_str(&format!("\n## The process\n\n{}\n", process.text.trim()));
            }
            (_, None) => text.push_str(&format!(
                "Run the process `{}` (invocation {}); its file is no longer in the package.\n",
                inv.process.as_deref().unwrap_or("?"),
                inv.id
            )),
        }
        text.push_str(&resume_section(inv, execution));
        if inv.dry_run {
            text.push_str(DRY_RUN_SECTION);
        }
        text.push_str(&closing_section(inv, process, execution));
        text
    }

    /// The process's `context` files. Private knowledge stays in the expert's own context (spec §9):
    /// it is preloaded only into the run's isolated session.
    fn context_section(
        &self,
        package: &Package,
        process: &Process,
        inv: &Invocation,
        dry_run: bool,
    ) -> String {
        if process.context.is_empty() {
            return String::new();
        }
        let mut out = String::from("\n## Context (preloaded)\n");
        let mut budget = MAX_CONTEXT_CHARS;
        let mut withheld = false;
        for path in &process.context {
            // Never read from the shared workspace, where any agent could plant a copy.
            let private = package
                .knowledge
                .iter()
                .find(|k| &k.path == path && k.kind == KnowledgeKind::Private)
                .map(|k| k.text.clone());
            // Not even its name: private knowledge is named only in the expert's own sessions.
            if private.is_some() && inv.main_session {
                withheld = true;
                continue;
            }
            // A session state file's runtime copy is the run's own (its invocation's session).
            let own = package
                .state
                .iter()
                .any(|f| &f.path == path && f.scope == StateScope::Session)
                .then(|| Path::new(SESSIONS_DIR).join(session_dir_name(&inv.id)));
            let runtime_copy = self.workspace.map(|w| {
                let mut dir = w.join("expert-state").join(&package.name);
                dir.extend(&own);
                dir.join(path)
            });
            let is_private = private.is_some();
            let text = private
                .or_else(|| runtime_copy.and_then(|p| fs::read_to_string(p).ok()))
                .or_else(|| fs::read_to_string(package.dir.join(path)).ok());
            match text {
                Some(text) if budget > 0 => {
                    let cap = MAX_CONTEXT_FILE_CHARS.min(budget);
                    let kept: String = text.chars().take(cap).collect();
                    budget -= kept.chars().count();
                    let cut = if kept.len() < text.len() { "\n(cut here: read the rest of the file yourself)" } else { "" };
                    if is_private && dry_run {
                        out.push_str(&format!("\n### {path}\n\n(private knowledge: preloaded into the run's own session, not shown here)\n"));
                        continue;
                    }
                    out.push_str(&format!("\n### {path}\n\n{}{cut}\n", kept.trim_end()));
                }
                Some(_) => out.push_str(&format!("\n### {path}\n\n(not preloaded: the context budget is spent; read it yourself)\n")),
                None => out.push_str(&format!("\n### {path}\n\n(cannot be read)\n")),
            }
        }
        if withheld {
            out.push_str(
                "\n(The process's private knowledge is not preloaded into the main session.)\n",
            );
        }
        out
    }
}

/// What a dry run is told (openexperts §7 "Dry Run Mode").
const DRY_RUN_SECTION: &str = "\n## Dry run\n\nThis is a dry run. Narrate each step you take. \
Operations at the AUTO tier execute as usual; every other call is not executed and is recorded \
(its result says so): describe what it would do (the operation, its inputs, the outcome you \
expect) and go on as if it had succeeded. Do not propose learnings and do not call isolated \
functions. End with a planned-execution report: each step, the operation it would call with its \
inputs and the outcome you expect, then the outputs the process would return.\n";

fn inputs_section(inv: &Invocation) -> String {
    if inv.inputs.is_empty() {
        return "\n## Inputs\n\nNone.\n".into();
    }
    let json = serde_json::to_string_pretty(&inv.inputs).unwrap_or_default();
    format!("\n## Inputs\n\n```json\n{json}\n```\n")
}

/// On a later attempt: what the execution log says (with `resume_from_execution_log`), or that the
/// last attempt failed and the run starts over.
fn resume_section(inv: &Invocation, execution: Option<&Execution>) -> String {
    if inv.attempts <= 1 {
        return String::new();
    }
    let failures: Vec<String> = inv
        .log
        .iter()
        .filter(|e| e.text.starts_with("attempt ") && e.text.contains(" failed: "))
        .map(|e| format!("- {}", e.text))
        .collect();
    let resume = execution.is_some_and(|e| e.resume_from_execution_log);
    let mut out = format!("\n## Attempt {}\n\n", inv.attempts);
    if resume {
        out.push_str("Resume where the previous attempt stopped: do not repeat completed steps.\n");
        if inv.steps.is_empty() {
            out.push_str("Steps completed so far: none recorded.\n");
        } else {
            out.push_str("Steps completed so far:\n");
            for step in &inv.steps {
                out.push_str(&format!("- [x] {step}\n"));
            }
        }
    } else {
        out.push_str("The previous attempt did not finish; start the process over.\n");
    }
    if let Some(approval) = approval_since_last_failure(inv) {
        out.push_str(&format!(
            "The user {approval}; make that call when you reach it, once.\n"
        ));
    }
    if !failures.is_empty() {
        out.push_str(&format!("Earlier attempts:\n{}\n", failures.join("\n")));
    }
    out
}

/// The approval this attempt resumes after: the last `approved:` entry, unless an attempt failed
/// after it (a failed attempt may have used it; the gate tells the next one the truth).
fn approval_since_last_failure(inv: &Invocation) -> Option<&str> {
    for entry in inv.log.iter().rev() {
        if entry.text.starts_with("approved:") {
            return Some(&entry.text);
        }
        if entry.text.starts_with("attempt ") && entry.text.contains(" failed: ") {
            return None;
        }
    }
    None
}

fn closing_section(
    inv: &Invocation,
    process: Option<&Process>,
    execution: Option<&Execution>,
) -> String {
    // Without `resume_from_execution_log` a retry starts over: the steps only show progress.
    let why = if execution.is_some_and(|e| e.resume_from_execution_log) {
        "so a retry can resume after it"
    } else {
        "so the run's log shows how far it got"
    };
    let mut out = format!(
        "\n## Reporting\n\nAfter each checklist step you complete, call the tool `expert_step` with \
         {{\"step\": \"<the step>\"}} {why} (invocation {}).\n",
        inv.id
    );
    let format = process.map(|p| p.delivery.format);
    if matches!(
        format,
        Some(DeliveryFormat::Structured | DeliveryFormat::Both)
    ) {
        let outputs = process.map(|p| p.outputs.join(", ")).unwrap_or_default();
        out.push_str(&format!(
            "End with a short summary for the user, then the outputs ({}) as one ```json block.\n",
            if outputs.is_empty() {
                "an object"
            } else {
                &outputs
            }
        ));
    } else {
        out.push_str("End with a short summary for the user.\n");
    }
    out
}
