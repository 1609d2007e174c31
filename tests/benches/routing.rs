//! Routing time per turn for 10, 100, 1,000 and 10,000 rules × 10 keywords on a 2 KB prompt:
//! natively, through the component in the host shim, and a naive per-rule substring scan, side by
//! side in one run. Every method's answer is checked (the planted rule must win), so a fast wrong
//! router fails the benchmark. Then the configuration load per rule count: natively
//! (`Router::load`), the component's `reload-config`, and a whole `Shim::new` from the
//! compiled-component cache; each load must give every rule. Then one load each of 50,000 to
//! 200,000 keywords, which must still route to the last rule.
//!
//! Run: `cargo bench -p graphiti-openclaw-tests --bench routing` (after scripts/build.sh). Set
//! `ROUTING_BENCH_QUICK=1` for a short run.

use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::memory::recall::Recall;
use graphiti_openclaw::routing::{PreviousTurn, RouteInput, Router};
use graphiti_openclaw_tests::bench_rows::{Row, write_rules_config};
use graphiti_openclaw_tests::{plugin_wasm, temp_dir};
use host_shim::{IntentTestRequest, Limits, Shim, ShimOptions};
use std::path::Path;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const KEYWORDS_PER_RULE: usize = 10;
const PROMPT_BYTES: usize = 2048;

/// A pronounceable, unique keyword for (rule, k): distinct words, none a substring of filler text.
fn keyword(rule: usize, k: usize) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "nu", "pe", "ri", "so", "ta", "vu", "we", "xi", "yo", "za", "be", "cu",
        "da",
    ];
    let mut n = rule * KEYWORDS_PER_RULE + k;
    let mut word = String::from("q");
    for _ in 0..5 {
        word.push_str(SYLLABLES[n % 16]);
        n /= 16;
    }
    word
}

fn write_config(dir: &Path, rules: usize) {
    write_rules_config(dir, rules, KEYWORDS_PER_RULE, keyword);
}

/// ~2 KB of ordinary words with two keywords of the target rule and one of another rule planted.
fn prompt(target: usize, other: usize) -> String {
    let filler = "the quarterly plan needs a careful review of hiring budget travel and vendor contracts before friday ";
    let mut text = String::new();
    while text.len() < PROMPT_BYTES - 64 {
        text.push_str(filler);
    }
    let third = text.len() / 3;
    let cut = |at: usize| text[..at].rfind(' ').unwrap_or(at);
    let (a, b) = (cut(third), cut(2 * third));
    format!(
        "{} {} {} {} {} {}",
        &text[..a],
        keyword(target, 3).to_uppercase(),
        &text[a..b],
        keyword(other, 7),
        &text[b..],
        keyword(target, 8)
    )
}

/// Every rule's keywords checked with `contains`, as a simple plugin would.
fn naive_route(rules: &[(String, Vec<String>)], prompt: &str) -> Option<String> {
    let lower = prompt.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    let mut tie = false;
    for (id, keywords) in rules {
        let hits = keywords
            .iter()
            .filter(|k| lower.contains(k.as_str()))
            .count();
        if hits == 0 {
            continue;
        }
        match best {
            Some((score, _)) if hits < score => {}
            Some((score, _)) if hits == score => tie = true,
            _ => {
                best = Some((hits, id));
                tie = false;
            }
        }
    }
    best.filter(|_| !tie).map(|(_, id)| id.to_string())
}

struct Timing {
    median: Duration,
    p99: Duration,
}

fn time(iterations: usize, mut f: impl FnMut()) -> Timing {
    for _ in 0..iterations / 10 + 1 {
        f(); // warm-up
    }
    let mut samples: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    samples.sort();
    Timing {
        median: samples[samples.len() / 2],
        p99: samples[samples.len() * 99 / 100],
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Configuration loads timed per rule count: fewer for the large configurations.
fn load_iterations(quick: bool, rules: usize) -> usize {
    let base = if quick { 5 } else { 20 };
    if rules >= 10_000 { base } else { base * 2 }
}

fn shim_options(config: &Path, cache_dir: &Path, limits: Limits) -> ShimOptions {
    let mut options = ShimOptions::new(plugin_wasm(), config, limits);
    options.cache_dir = Some(cache_dir.to_path_buf());
    options.echo_logs = false;
    options
}

/// Compiles the component into `cache_dir` (a shim over a one-rule configuration); how long it took.
fn compile_once(cache_dir: &Path, limits: Limits) -> Duration {
    let dir = temp_dir("bench-compile");
    write_config(dir.path(), 1);
    let start = Instant::now();
    let shim = Shim::new(shim_options(dir.path(), cache_dir, limits)).expect("shim");
    let took = start.elapsed();
    assert!(
        shim.cache_file().is_some(),
        "the compiled component is cached"
    );
    took
}

/// The keyword automaton at 50,000 to 200,000 keywords, built by one native `Router::load` each
/// (most of that load): the last rule's keywords must still route to it.
fn many_keywords() {
    println!("many keywords: one native Router::load each, {KEYWORDS_PER_RULE} keywords per rule");
    for keywords in [50_000, 100_000, 200_000] {
        let rules = keywords / KEYWORDS_PER_RULE;
        let dir = temp_dir(&format!("bench-keywords-{keywords}"));
        write_config(dir.path(), rules);
        let start = Instant::now();
        let router = Router::load(
            &ConfigRoots::new(dir.path().to_path_buf(), None),
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{e:?}"))
        .router;
        let took = start.elapsed();
        let last = rules - 1;
        let text = prompt(last, 0);
        let input = RouteInput {
            prompt: &text,
            recall: &Recall::default(),
            group_chat: false,
            previous: None,
            now_ms: 0,
        };
        assert_eq!(
            router.route(&input).decision.intent,
            Some(format!("rule_{last}")),
            "the last rule among {keywords} keywords"
        );
        println!("{keywords:>7} keywords  {:>8.1} ms", ms(took));
    }
}

/// What every rule count is measured with.
struct Run<'a> {
    quick: bool,
    iterations: usize,
    limits: Limits,
    /// The compiled component, cached once for every shim.
    cache_dir: &'a Path,
}

/// One rule count: its configuration, and a turn that must route to `expected`.
struct Case {
    rules: usize,
    dir: TempDir,
    text: String,
    expected: String,
}

/// One rule count's figures.
struct Figures {
    load_native: Timing,
    sticky: Timing,
    naive: Timing,
    shim_new: Duration,
    reload: Timing,
    component: Timing,
}

/// Natively: `Router::load`, a turn, and a short follow-up to the last rule's turn (no keyword:
/// the previous turn's pack again); each answer checked.
fn native_figures(run: &Run, case: &Case) -> (Timing, Timing, Timing) {
    let roots = ConfigRoots::new(case.dir.path().to_path_buf(), None);
    let load_native = time(load_iterations(run.quick, case.rules), || {
        let loaded = Router::load(&roots, &Default::default());
        assert_eq!(loaded.map(|l| l.router.rules.len()).ok(), Some(case.rules));
    });
    let router = Router::load(&roots, &Default::default())
        .unwrap_or_else(|e| panic!("{e:?}"))
        .router;
    let recall = Recall::default();
    let input = RouteInput {
        prompt: &case.text,
        recall: &recall,
        group_chat: false,
        previous: None,
        now_ms: 0,
    };
    assert_eq!(
        router.route(&input).decision.intent.as_deref(),
        Some(case.expected.as_str()),
        "native answer"
    );
    let native = time(run.iterations, || {
        std::hint::black_box(router.route(std::hint::black_box(&input)));
    });
    let last_rule = format!("rule_{}", case.rules - 1);
    let follow_up = RouteInput {
        prompt: "and what about friday?",
        previous: Some(PreviousTurn {
            intent: &last_rule,
            injected_at_ms: Some(0),
            carried_turns: Some(0),
            named: None,
        }),
        ..input
    };
    assert!(router.route(&follow_up).decision.sticky, "sticky answer");
    let sticky = time(run.iterations, || {
        std::hint::black_box(router.route(std::hint::black_box(&follow_up)));
    });
    (load_native, native, sticky)
}

/// The naive scan of every rule's keywords; its answer checked.
fn naive_figure(run: &Run, case: &Case) -> Timing {
    let naive_rules: Vec<(String, Vec<String>)> = (0..case.rules)
        .map(|r| {
            (
                format!("rule_{r}"),
                (0..KEYWORDS_PER_RULE).map(|k| keyword(r, k)).collect(),
            )
        })
        .collect();
    assert_eq!(
        naive_route(&naive_rules, &case.text).as_deref(),
        Some(case.expected.as_str()),
        "naive answer"
    );
    time(run.iterations, || {
        std::hint::black_box(naive_route(&naive_rules, std::hint::black_box(&case.text)));
    })
}

/// The component in the shim: `Shim::new` from the cache, `reload-config` and a dry run of the
/// turn; each answer checked.
fn component_figures(run: &Run, case: &Case) -> (Duration, Timing, Timing) {
    let load_start = Instant::now();
    let mut shim =
        Shim::new(shim_options(case.dir.path(), run.cache_dir, run.limits)).expect("shim");
    let shim_new = load_start.elapsed();
    let reload = time(load_iterations(run.quick, case.rules), || {
        let summary = shim.reload_config().expect("component reload");
        assert_eq!(summary.rules as usize, case.rules, "component reload");
    });
    let request = IntentTestRequest {
        prompt: case.text.clone(),
        recall_json: None,
        group_chat: false,
        previous_pack: None,
        now_ms: None,
        previous_at_ms: None,
        carried_turns: None,
        previous_prompt: None,
    };
    let answer = shim.dry_run(&request).expect("component dry run");
    assert_eq!(
        answer.decision.intent.as_deref(),
        Some(case.expected.as_str()),
        "component answer"
    );
    let component = time(run.iterations, || {
        std::hint::black_box(shim.dry_run(std::hint::black_box(&request)).ok());
    });
    (shim_new, reload, component)
}

/// Every figure at `rules` rules, its table row printed.
fn measure(run: &Run, rules: usize) -> Figures {
    let dir = temp_dir(&format!("bench-{rules}"));
    write_config(dir.path(), rules);
    let (target, other) = (rules / 2, rules / 3);
    let case = Case {
        rules,
        dir,
        text: prompt(target, other),
        expected: format!("rule_{target}"),
    };
    let (load_native, native, sticky) = native_figures(run, &case);
    let naive = naive_figure(run, &case);
    let (shim_new, reload, component) = component_figures(run, &case);
    println!(
        "{rules:>6}  {:>7.1} / {:>6.1}  {:>8.1} / {:>7.1}  {:>7.1} / {:>6.1}  {:>11.1}×  {:>10.1}×",
        us(native.median),
        us(native.p99),
        us(component.median),
        us(component.p99),
        us(naive.median),
        us(naive.p99),
        us(naive.median) / us(native.median),
        us(component.median) / us(native.median),
    );
    Figures {
        load_native,
        sticky,
        naive,
        shim_new,
        reload,
        component,
    }
}

/// The configuration loads and sticky follow-ups per rule count, the component's flatness and the
/// limits table's row.
fn summary(rule_counts: &[usize], figures: &[Figures], compiled: Duration) {
    println!(
        "configuration load (median): native Router::load, the component's reload-config, and Shim::new from the compiled-component cache (instantiate + load); compiling the component took {:.0} ms",
        ms(compiled)
    );
    println!(
        "{:>6}  {:>14}  {:>14}  {:>14}",
        "rules", "native load", "component", "Shim::new"
    );
    for (rules, f) in rule_counts.iter().zip(figures) {
        println!(
            "{rules:>6}  {:>11.1} ms  {:>11.1} ms  {:>11.1} ms",
            ms(f.load_native.median),
            ms(f.reload.median),
            ms(f.shim_new)
        );
    }
    println!("sticky follow-up per turn, native (median / p99, µs):");
    for (rules, f) in rule_counts.iter().zip(figures) {
        println!(
            "{rules:>6}  {:>7.2} / {:>6.2}",
            us(f.sticky.median),
            us(f.sticky.p99)
        );
    }
    many_keywords();
    let component = |i: usize| us(figures[i].component.median);
    let flatness = component(3) / component(0);
    println!("component median at 10,000 rules / at 10 rules: {flatness:.2}× (flat = close to 1)");
    println!(
        "target: < 50 µs per turn in the component at 1,000 rules: {:.1} µs",
        component(2)
    );
    Row {
        what: "fixed cost of one routing call in the component (10 rules), median",
        value: component(0),
        unit: "µs",
        goal: 10.0,
        baseline: "the naive scan at 10 rules, median",
        baseline_value: us(figures[0].naive.median),
    }
    .record();
}

fn main() {
    let quick = std::env::var_os("ROUTING_BENCH_QUICK").is_some();
    let iterations = if quick { 200 } else { 2000 };
    let limits = Limits {
        call_timeout: Duration::from_secs(60),
        send_timeout: Duration::from_secs(60),
        memory_bytes: 1 << 30,
    };
    println!(
        "routing per turn, {KEYWORDS_PER_RULE} keywords per rule, {PROMPT_BYTES}-byte prompt, {iterations} turns each (median / p99, µs)"
    );
    println!(
        "{:>6}  {:>16}  {:>18}  {:>16}  {:>12}  {:>11}",
        "rules", "native", "component", "naive scan", "naive/native", "wasm/native"
    );
    // One cache directory for every shim: the component is compiled once, here, and each shim
    // below loads it from the cache (compile time is not configuration load time).
    let cache_dir = temp_dir("bench-cache");
    let compiled = compile_once(cache_dir.path(), limits);
    let run = Run {
        quick,
        iterations,
        limits,
        cache_dir: cache_dir.path(),
    };
    let rule_counts = [10usize, 100, 1_000, 10_000];
    let figures: Vec<Figures> = rule_counts
        .iter()
        .map(|&rules| measure(&run, rules))
        .collect();
    summary(&rule_counts, &figures, compiled);
}
