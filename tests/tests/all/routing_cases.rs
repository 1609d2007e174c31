//! The routing case tables through the real `plugin.wasm` in the host shim, and byte-for-byte
//! agreement with the engine compiled natively.

use graphiti_openclaw::Engine;
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::memory::graphiti::http::NoNetwork;
use graphiti_openclaw_tests::cases::{self, Observed};
use graphiti_openclaw_tests::plugin_wasm;
use host_shim::{Limits, Shim, ShimOptions};
use std::time::Duration;

fn shim_for(config: &std::path::Path, host_settings: Option<String>) -> Shim {
    let limits = Limits {
        call_timeout: Duration::from_secs(10),
        send_timeout: Duration::from_secs(10),
        memory_bytes: 256 << 20,
    };
    let mut options = ShimOptions::new(plugin_wasm(), config, limits);
    options.cache_dir =
        Some(graphiti_openclaw_tests::workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options.host_settings = host_settings;
    Shim::new(options).expect("shim starts")
}

fn observed(i: host_shim::Injection) -> Observed {
    Observed {
        intent: i.decision.intent,
        no_pack_reason: i.decision.no_pack_reason,
        additional: i.decision.additional_packs,
        sticky: i.decision.sticky,
        trace: i.decision.trace,
        prepend_context: i.prepend_context,
    }
}

#[test]
fn every_case_holds_in_the_component_and_matches_native() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (file, case_file) in cases::load_all() {
        let config = case_file.config_dir();
        let mut shim = shim_for(&config, case_file.host_settings());
        let mut engine = Engine::new(
            ConfigRoots::new(config.clone(), None),
            None,
            Box::new(NoNetwork),
        );
        engine.set_host_settings(case_file.host_settings());
        for case in &case_file.cases {
            let request = case.request(&config);
            let wit_request = host_shim::IntentTestRequest {
                prompt: request.prompt.clone(),
                recall_json: request.recall_json.clone(),
                group_chat: request.group_chat,
                previous_pack: request.previous_pack.clone(),
                now_ms: request.now_ms,
                previous_at_ms: request.previous_at_ms,
                carried_turns: request.carried_turns,
                previous_prompt: request.previous_prompt.clone(),
            };
            let component = match shim.dry_run(&wit_request) {
                Ok(injection) => observed(injection),
                Err(e) => {
                    failures.push(format!(
                        "{file}: case {}: component dry run failed: {e}",
                        case.name
                    ));
                    continue;
                }
            };
            ran += 1;
            if let Err(e) = case.check(&component) {
                failures.push(format!("{file} (component): {e}"));
            }
            let native: Observed = engine.dry_run(&request).expect("native dry run").into();
            if native != component {
                failures.push(format!(
                    "{file}: case {}: native and component differ:\n{native:#?}\n{component:#?}",
                    case.name
                ));
            }
        }
    }
    assert!(ran > 0, "no routing cases ran");
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Generated prompts through the component and natively: mixed case, runs of white space, tabs and
/// line breaks, non-ASCII text and keywords at every offset of the component's sixteen-byte steps
/// (its vector code paths: normalizing, and searching for the bytes keywords start with). Over the
/// example configuration (many first bytes) and a generated one whose keywords all start with `q`.
#[test]
fn generated_prompts_route_alike_in_the_component_and_natively() {
    let generated = graphiti_openclaw_tests::temp_dir("q-rules");
    graphiti_openclaw_tests::bench_rows::write_rules_config(generated.path(), 12, 3, |rule, k| {
        format!("q{}{}", ["ka", "lo", "mi", "nu"][k % 4], "ab".repeat(rule + 1))
    });
    let pieces = [
        " ", "  ", "\t", "\n", "\r\n", "a", "B", "Q", "q", "é", "融资", "\u{212a}", "lunch",
        "LUNCH", "series a", "Series\nA", "term sheet", "founder", "dinner", "qkaab", "QLOABAB",
        "qmiababab", "q nu", "the quarterly plan ", "x.", "_",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let mut failures = Vec::new();
    for config in [graphiti_openclaw_tests::example_config(), generated.path().to_path_buf()] {
        let mut shim = shim_for(&config, None);
        let mut engine = Engine::new(
            ConfigRoots::new(config.clone(), None),
            None,
            Box::new(NoNetwork),
        );
        let mut routed = 0;
        for _ in 0..400 {
            let prompt: String = (0..next(40))
                .map(|_| pieces[next(pieces.len() as u64) as usize])
                .collect();
            let request = host_shim::IntentTestRequest {
                prompt: prompt.clone(),
                recall_json: None,
                group_chat: false,
                previous_pack: None,
                now_ms: Some(0),
                previous_at_ms: None,
                carried_turns: None,
                previous_prompt: None,
            };
            let component = observed(shim.dry_run(&request).expect("component dry run"));
            let native: Observed = engine
                .dry_run(&graphiti_openclaw::platform::api::IntentTestRequest {
                    prompt: prompt.clone(),
                    now_ms: Some(0),
                    ..Default::default()
                })
                .expect("native dry run")
                .into();
            routed += usize::from(component.intent.is_some());
            if native != component {
                failures.push(format!("{prompt:?}:\n{native:#?}\n{component:#?}"));
            }
        }
        assert!(routed > 40, "{}: few prompts chose a pack ({routed})", config.display());
    }
    assert!(
        failures.is_empty(),
        "{} prompt(s) routed differently:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
