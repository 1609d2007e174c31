//! The rows of the issue-14 limits table, as the benchmarks measure them: each benchmark prints its
//! rows and, when `BENCH_ROWS` names a file, appends them there as JSON lines, so `scripts/bench.sh`
//! can print one table of every row (medians over its runs) from a Rust and a Node benchmark; and
//! the rule configurations the routing and limits benchmarks load.

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
        let met = if self.value <= self.goal {
            "met"
        } else {
            "NOT met"
        };
        println!(
            "  {}: {:.3} {} (goal ≤ {} {}: {met}); {}: {:.3} {}",
            self.what,
            self.value,
            self.unit,
            self.goal,
            self.unit,
            self.baseline,
            self.baseline_value,
            self.unit
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

/// A routing configuration for the benchmarks: `rules` rules (`rule_N`, pack type `type_N`), the
/// keywords `keyword(rule, k)` for k in 0..`keywords_per_rule`, all pointing at one pack.
pub fn write_rules_config(
    dir: &std::path::Path,
    rules: usize,
    keywords_per_rule: usize,
    keyword: impl Fn(usize, usize) -> String,
) {
    use std::fmt::Write as _;
    let mut yaml = String::from("schema_version: 1\nrules:\n");
    for r in 0..rules {
        let keywords: Vec<String> = (0..keywords_per_rule).map(|k| keyword(r, k)).collect();
        let _ = writeln!(
            yaml,
            "  - {{ id: rule_{r}, consumer_profile: bench, pack_type: type_{r}, scope: public, keywords: [{}] }}",
            keywords.join(", ")
        );
    }
    std::fs::create_dir_all(dir.join("packs")).unwrap();
    std::fs::write(dir.join("intent_rules.yaml"), yaml).unwrap();
    std::fs::write(
        dir.join("pack_registry.yaml"),
        "packs:\n  - { id: bench_pack, file: packs/bench.pack.yaml, pack_type: bench, scope: public }\nconsumer_profiles:\n  - { id: bench, primary_pack: bench_pack }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("packs/bench.pack.yaml"),
        "name: Bench\ndomain_context: Benchmark pack.\n",
    )
    .unwrap();
}
