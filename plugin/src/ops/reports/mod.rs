//! What operator commands print, rendered here so every host prints the same: `intent-test`,
//! `check-config`, `lint-rules`, `eval`, `status`, `flush` and `memories`.

mod config_checks;
mod eval;
mod forgets;
mod intent_test;
mod memories;
mod status;

use crate::platform::api::CommandOutput;

pub use config_checks::{check_config, lint_rules};
pub use eval::eval;
pub use forgets::{
    ForgetDone, ForgetPlan, render_forget_done, render_forget_plan, render_nothing_to_forget,
};
pub use intent_test::render_intent_test;
pub use memories::{Memories, ShownTurn, render_export, render_memories};
pub use status::{Doubts, SpoolCounts, render_flush, render_status, unlisted_text};

const NONE: &str = "none";

pub fn failure(exit_code: u8, message: impl Into<String>) -> CommandOutput {
    CommandOutput {
        exit_code,
        stdout: String::new(),
        stderr: message.into() + "\n",
    }
}

pub fn success(stdout: String) -> CommandOutput {
    CommandOutput {
        exit_code: 0,
        stdout,
        stderr: String::new(),
    }
}

/// A plain left-aligned table.
fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}
