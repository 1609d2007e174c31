//! The rows of the issue-14 limits table, as the benchmarks measure them: each benchmark prints its
//! rows and, when `BENCH_ROWS` names a file, appends them there as JSON lines, so `scripts/bench.sh`
//! can print one table of every row (medians over its runs) from a Rust and a Node benchmark.

use std::io::Write as _;

/// One measured row: ours against its baseline, measured in the same run, and the goal.
pub struct Row<'a> {
    /// The table's row, e.g. "configuration load at 10,000 rules".
    pub what: &'a str,
    /// Our figure, in `unit`.
    pub value: f64,
    pub unit: &'a str,
    /// At most this meets the goal.
    pub goal: f64,
    /// What the figure is compared with, and its figure in the same run (same unit).
    pub baseline: &'a str,
    pub baseline_value: f64,
}

impl Row<'_> {
    /// Prints the row and appends it to `$BENCH_ROWS` when that is set.
    pub fn record(&self) {
        let met = if self.value <= self.goal { "met" } else { "NOT met" };
        println!(
            "  {}: {:.3} {} (goal ≤ {} {}: {met}); {}: {:.3} {}",
            self.what, self.value, self.unit, self.goal, self.unit, self.baseline, self.baseline_value, self.unit
        );
        let Some(path) = std::env::var_os("BENCH_ROWS") else {
            return;
        };
        let line = serde_json::json!({
            "what": self.what, "value": self.value, "unit": self.unit, "goal": self.goal,
            "baseline": self.baseline, "baseline_value": self.baseline_value,
        });
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("BENCH_ROWS {}: {e}", path.to_string_lossy()));
        writeln!(file, "{line}").expect("append a row");
    }
}
