//! What every property shares: the run's configuration (cases, seed), the example configuration, temp
//! directories and generators of hostile text.

use graphiti_openclaw::Engine;
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::memory::graphiti::http::{Http, NoNetwork};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::{Map, Number, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A property's configuration: `cases` unless `PROPTEST_CASES` says otherwise, a fresh seed unless
/// `PROPTEST_RNG_SEED` fixes one (printed either way, so a failure can be replayed), no files written.
/// `cases` per property, or fewer when `PROPTEST_CASES` asks for fewer (the fast tier).
pub fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
        .map_or(cases, |cap| cases.min(cap.max(1)));
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(fresh_seed);
    println!("property seed {seed} (PROPTEST_RNG_SEED={seed} replays these cases)");
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_time: 30_000,
        ..Config::default()
    }
}

fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Tests start in the same nanosecond often enough: mix in a counter and the process id.
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    (nanos ^ (u64::from(std::process::id()) << 32))
        .wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The shipped example configuration directory.
pub fn example_config() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config")
}

/// An engine over the example configuration, without state or network unless given.
pub fn example_engine(state: Option<&Path>, http: Box<dyn Http>) -> Engine {
    example_engine_in(&example_config(), state, http)
}

pub fn example_engine_in(config: &Path, state: Option<&Path>, http: Box<dyn Http>) -> Engine {
    Engine::new(
        ConfigRoots::new(config.to_path_buf(), None),
        state.map(Path::to_path_buf),
        http,
    )
}

pub fn offline_example_engine() -> Engine {
    let mut engine = example_engine(None, Box::new(NoNetwork));
    engine
        .reload()
        .unwrap_or_else(|e| panic!("the example config loads: {e:?}"));
    engine
}

/// A fresh, empty directory for one case, named after `label`; removed when dropped.
pub fn temp_dir(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("props-{label}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// Pieces of text that stress our blocks' parsing: our tag names, half tags, escapes, line breaks of
/// every kind, scripts without spaces, right-to-left and control characters, and anything at all.
pub fn fragment() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "<graphiti-context>",
        "</graphiti-context>",
        "<graphiti-context group=\"g\">",
        "<graphiti-fallback>",
        "</graphiti-fallback>",
        "<pack-context intent=\"dining\" primary-pack=\"dining_recs\" scope=\"public\">",
        "<pack-context>",
        "</pack-context>",
        "<pack-contextual>",
        "<b>",
        "<",
        ">",
        "/",
        "\"",
        "&lt;",
        "&amp;",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        "\u{a0}",
        "\u{2028}",
        "\u{85}",
        "\u{0}",
        "\u{1b}[31m",
        "\u{202e}",
        "dinner",
        "Series A",
        "founder",
        "remember",
        "café",
        "你好",
        "餐厅",
        "مرحبا",
        "🙂",
        "x",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        6 => fixed,
        2 => "[a-zA-Z0-9 .,!?'-]{1,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

/// Text a person (or a model) might write, made of [`fragment`]s.
pub fn text(max_fragments: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..=max_fragments).prop_map(|parts| parts.concat())
}

/// Whether a string contains nothing that could start a line or drive a terminal.
pub fn is_one_printable_line(text: &str) -> bool {
    !text.chars().any(|c| c.is_control())
        && !text.contains(['\u{2028}', '\u{2029}', '\u{202e}', '\u{200f}'])
}

/// Any JSON value, with the keys Graphiti's answers use among others.
pub fn json_value() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        text(4).prop_map(Value::String),
        prop::sample::select(vec![
            "facts", "nodes", "episodes", "error", "result", "name"
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            3 => prop::sample::select(vec![
                "facts", "nodes", "episodes", "error", "result", "name", "fact", "message",
                "status", "content", "structuredContent", "isError", "text",
            ])
            .prop_map(str::to_string),
            1 => text(2),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// JSON text of a value, compact, pretty or with odd white space between tokens.
pub fn json_text() -> impl Strategy<Value = String> {
    (json_value(), 0u8..3).prop_map(|(value, style)| match style {
        0 => value.to_string(),
        1 => serde_json::to_string_pretty(&value).unwrap(),
        _ => serde_json::to_string_pretty(&value)
            .unwrap()
            .replace('\n', "\r\n\t "),
    })
}

/// Bytes near JSON: valid text cut short, with a byte changed or inserted, or anything at all.
pub fn answer_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        json_text().prop_map(String::into_bytes),
        (json_text(), any::<prop::sample::Index>()).prop_map(|(t, i)| {
            let bytes = t.into_bytes();
            let cut = i.index(bytes.len() + 1);
            bytes[..cut].to_vec()
        }),
        (json_text(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(t, i, b)| {
            let mut bytes = t.into_bytes();
            let at = i.index(bytes.len() + 1);
            bytes.insert(at, b);
            bytes
        }),
        prop::collection::vec(any::<u8>(), 0..64),
    ]
}

/// An OpenClaw message list: messages of any role with text or parts (of any type), or any JSON.
pub fn messages_json() -> impl Strategy<Value = String> {
    let role = prop::sample::select(vec!["user", "assistant", "toolResult", "system", ""]);
    let part = (
        prop::sample::select(vec!["text", "image", "thinking"]),
        text(4),
    )
        .prop_map(|(kind, text)| serde_json::json!({"type": kind, "text": text}));
    let content = prop_oneof![
        text(8).prop_map(Value::String),
        prop::collection::vec(part, 0..3).prop_map(Value::Array),
        json_value(),
    ];
    let message = (role, content)
        .prop_map(|(role, content)| serde_json::json!({"role": role, "content": content}));
    prop_oneof![
        4 => prop::collection::vec(message, 0..6).prop_map(|m| Value::Array(m).to_string()),
        1 => json_text(),
        1 => text(4),
    ]
}
