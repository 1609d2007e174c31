//! What operator commands print, rendered here so every host prints the same: `intent-test`,
//! `check-config`, `lint-rules`, `eval`, `status` and `flush`. Memory control renders its own
//! (`memory::control`).

mod config_checks;
mod eval;
mod intent_test;
mod status;

use crate::platform::api::CommandOutput;

pub use config_checks::{check_config, lint_rules};
pub use eval::eval;
pub use intent_test::render_intent_test;
pub use status::{Guarantees, SpoolCounts, render_flush, render_status, unlisted_text};

const NONE: &str = "none";

pub fn failure(exit_code: u8, message: impl Into<String>) -> CommandOutput {
    CommandOutput::failure(exit_code, message)
}

pub fn success(stdout: String) -> CommandOutput {
    CommandOutput::success(stdout)
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
