//! Configuration parsing: arbitrary text as a configuration file, and mutations of the example's valid
//! files (a required key dropped, a value of the wrong type, a control character, deep nesting, an
//! alias bomb), in YAML or JSON, in a temp copy of the example configuration. `reload` never panics;
//! every error names a file of the configuration (and a line inside it); a broken mutation is an
//! error, and the configuration in force before it stays in force.

use super::support::{config, example_config, example_engine_in, fragment, temp_dir};
use graphiti_openclaw::Engine;
use graphiti_openclaw::config::{ConfigError, HOST_SETTINGS};
use graphiti_openclaw::memory::graphiti::http::NoNetwork;
use graphiti_openclaw::platform::api::{ConfigResult, IntentTestRequest};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Rules,
    Registry,
    Composition,
    Settings,
}

impl Target {
    fn base(self) -> &'static str {
        match self {
            Target::Rules => "intent_rules",
            Target::Registry => "pack_registry",
            Target::Composition => "pack_composition",
            Target::Settings => "settings",
        }
    }

    /// The list or section the file is mostly made of (for nesting under it).
    fn main_key(self) -> &'static str {
        match self {
            Target::Rules | Target::Composition => "rules",
            Target::Registry => "packs",
            Target::Settings => "routing",
        }
    }

    /// Whether the key at `path` may not be left out (serde has no default for it).
    fn is_required(self, path: &[Step]) -> bool {
        let keys: Vec<&str> = path
            .iter()
            .map(|s| match s {
                Step::Key(k) => k.as_str(),
                Step::Index(_) => "[]",
            })
            .collect();
        match (self, keys.as_slice()) {
            (Target::Rules, ["rules"]) | (Target::Registry, ["packs"]) => true,
            (Target::Rules, ["rules", "[]", k]) => {
                ["id", "consumer_profile", "keywords", "scope", "pack_type"].contains(k)
            }
            (Target::Rules, ["rules", "[]", "entity_boosts", "[]", "weight"]) => true,
            (Target::Registry, ["packs", "[]", k]) => {
                ["id", "file", "pack_type", "scope"].contains(k)
            }
            (Target::Registry, ["consumer_profiles", "[]", k]) => {
                ["id", "primary_pack"].contains(k)
            }
            (Target::Composition, ["rules", "[]", "primary_intent"]) => true,
            _ => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node of a value with its path, in document order.
fn nodes(value: &Value) -> Vec<Vec<Step>> {
    fn walk(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        out.push(path.clone());
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    walk(item, path, out);
                    path.pop();
                }
            }
            Value::Object(fields) => {
                for (key, field) in fields {
                    path.push(Step::Key(key.clone()));
                    walk(field, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = vec![];
    walk(value, &mut vec![], &mut out);
    out
}

fn node_mut<'a>(value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(value, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// A value of another type than `value`'s, which no field of the configuration accepts in its place.
fn other_type(value: &Value) -> Value {
    match value {
        Value::String(_) | Value::Null => json!({"zz_unexpected": 1}),
        _ => json!("zz-changed"),
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    /// The file as it is, rewritten in the chosen format: must load as before.
    Rewrite,
    /// A key left out (an error when serde has no default for it).
    DropKey(prop::sample::Index),
    ChangeType(prop::sample::Index),
    /// A C0 control character (not tab, LF or CR) inserted into the text.
    ControlChar(prop::sample::Index, char),
    /// The main key's value nested `depth` levels deep: `[[…]]`, `{a: {a: …}}` or `- - - x`.
    Nesting(usize, u8),
    /// Aliases expanding to 9^7 strings under the main key.
    AliasBomb,
    /// Arbitrary text as the whole file.
    Text(String),
}

impl Mutation {
    /// Whether this mutation must make the configuration fail to load.
    fn breaks(&self, target: Target, value: &Value) -> bool {
        match self {
            Mutation::Rewrite | Mutation::Text(_) => false,
            Mutation::DropKey(i) => {
                let paths = droppable(value);
                !paths.is_empty() && target.is_required(&paths[i.index(paths.len())])
            }
            Mutation::ChangeType(_)
            | Mutation::ControlChar(..)
            | Mutation::Nesting(..)
            | Mutation::AliasBomb => true,
        }
    }
}

/// Paths of object keys (what "drop a key" can remove).
fn droppable(value: &Value) -> Vec<Vec<Step>> {
    nodes(value)
        .into_iter()
        .filter(|p| matches!(p.last(), Some(Step::Key(_))))
        .collect()
}

fn yaml_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        3 => prop::sample::select(vec![
            "rules:", "packs:", "- ", "  ", "\n", "id: ", "keywords: ", "[", "]", "{", "}", ", ",
            ": ", "&a ", "*a", "!!str ", "!!binary ", "|\n", ">-\n", "'", "\"", "# ", "---\n",
            "...\n", "? ", "schema_version: 2", "scope: private", "1e999", "-.inf", "~", "null",
            "0x1F", "\t", "\u{feff}", "%YAML 1.2\n",
        ])
        .prop_map(str::to_string),
        2 => fragment(),
    ];
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let control = prop::sample::select(
        (0u8..0x20)
            .filter(|b| ![b'\t', b'\n', b'\r'].contains(b))
            .map(char::from)
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        1 => Just(Mutation::Rewrite),
        2 => any::<prop::sample::Index>().prop_map(Mutation::DropKey),
        2 => any::<prop::sample::Index>().prop_map(Mutation::ChangeType),
        2 => (any::<prop::sample::Index>(), control).prop_map(|(i, c)| Mutation::ControlChar(i, c)),
        1 => (prop_oneof![2usize..200, 200usize..20_000], 0u8..3)
            .prop_map(|(depth, kind)| Mutation::Nesting(depth, kind)),
        1 => Just(Mutation::AliasBomb),
        2 => yaml_text().prop_map(Mutation::Text),
    ]
}

fn target() -> impl Strategy<Value = Target> {
    prop::sample::select(vec![
        Target::Rules,
        Target::Registry,
        Target::Composition,
        Target::Settings,
    ])
}

/// A copy of what the router reads from the example configuration.
fn copy_example(to: &Path) {
    let from = example_config();
    for base in [
        "intent_rules",
        "pack_registry",
        "pack_composition",
        "settings",
    ] {
        std::fs::copy(
            from.join(format!("{base}.yaml")),
            to.join(format!("{base}.yaml")),
        )
        .unwrap();
    }
    std::fs::create_dir_all(to.join("packs")).unwrap();
    for pack in std::fs::read_dir(from.join("packs")).unwrap() {
        let pack = pack.unwrap().path();
        std::fs::copy(&pack, to.join("packs").join(pack.file_name().unwrap())).unwrap();
    }
}

/// The mutated file's text, in YAML or JSON.
fn mutated_text(target: Target, value: &Value, mutation: &Mutation, json: bool) -> String {
    let write = |v: &Value| {
        if json {
            serde_json::to_string_pretty(v).unwrap()
        } else {
            serde_norway::to_string(v).unwrap()
        }
    };
    let key = target.main_key();
    match mutation {
        Mutation::Rewrite => write(value),
        Mutation::DropKey(i) => {
            let mut value = value.clone();
            let paths = droppable(&value);
            if let Some(path) = (!paths.is_empty()).then(|| &paths[i.index(paths.len())]) {
                let (Step::Key(last), parent) = path.split_last().unwrap() else {
                    unreachable!()
                };
                node_mut(&mut value, parent)
                    .as_object_mut()
                    .unwrap()
                    .remove(last);
            }
            write(&value)
        }
        Mutation::ChangeType(i) => {
            let mut value = value.clone();
            let paths = nodes(&value);
            let node = node_mut(&mut value, &paths[i.index(paths.len())]);
            *node = other_type(node);
            write(&value)
        }
        Mutation::ControlChar(i, c) => {
            let text = write(value);
            let boundaries: Vec<usize> = text
                .char_indices()
                .map(|(at, _)| at)
                .chain([text.len()])
                .collect();
            let at = boundaries[i.index(boundaries.len())];
            format!("{}{c}{}", &text[..at], &text[at..])
        }
        Mutation::Nesting(depth, kind) => {
            let nested = match (kind, json) {
                (0, _) => format!("{}{}", "[".repeat(*depth), "]".repeat(*depth)),
                (1, false) => format!("{}1{}", "{a: ".repeat(*depth), "}".repeat(*depth)),
                (1, true) => format!("{}1{}", "{\"a\": ".repeat(*depth), "}".repeat(*depth)),
                (_, false) => format!("\n  {}x", "- ".repeat(*depth)),
                (_, true) => format!("{}\"x\"{}", "[".repeat(*depth), "]".repeat(*depth)),
            };
            if json {
                format!("{{\"{key}\": {nested}}}")
            } else {
                format!("{key}: {nested}\n")
            }
        }
        Mutation::AliasBomb => {
            let mut text =
                format!("{key}:\n  - &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
            for (name, previous) in ["b", "c", "d", "e", "f", "g"]
                .iter()
                .zip(["a", "b", "c", "d", "e", "f"])
            {
                let items = vec![format!("*{previous}"); 9].join(", ");
                text.push_str(&format!("  - &{name} [{items}]\n"));
            }
            text
        }
        Mutation::Text(text) => text.clone(),
    }
}

/// Every error names a file of this configuration (or the host's settings) and a line inside it.
fn check_errors_name_files(errors: &[ConfigError], dir: &Path) -> Result<(), TestCaseError> {
    prop_assert!(!errors.is_empty(), "an error result without errors");
    let dir = dir.display().to_string();
    for e in errors {
        prop_assert!(!e.message.trim().is_empty(), "{:?}", e);
        let in_config = e.file.starts_with(&dir);
        prop_assert!(
            in_config || e.file == HOST_SETTINGS || e.file == "intent_rules",
            "names no file of the configuration: {:?}",
            e
        );
        prop_assert!(e.to_string().starts_with(&e.file), "{}", e);
        if let (true, Some(line)) = (in_config, e.line) {
            let lines = std::fs::read_to_string(&e.file).map_or(0, |t| t.lines().count());
            prop_assert!(
                line >= 1 && line as usize <= lines + 1,
                "line {} of a {}-line file: {}",
                line,
                lines,
                e
            );
        }
    }
    Ok(())
}

fn demo(engine: &mut Engine) -> String {
    let request = IntentTestRequest {
        prompt: "I had dinner with the Series A founder".into(),
        ..IntentTestRequest::default()
    };
    format!("{:?}", engine.dry_run(&request))
}

fn load(dir: &Path, host_settings: bool) -> (Engine, ConfigResult) {
    let mut engine = example_engine_in(dir, None, Box::new(NoNetwork));
    if host_settings {
        engine.set_host_settings(Some(json!({"recall": {"max_facts": 3}}).to_string()));
    }
    let result = engine.reload();
    (engine, result)
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn reload_never_panics_and_errors_name_their_file(
        target in target(),
        mutation in mutation(),
        json in any::<bool>(),
        host_settings in any::<bool>(),
    ) {
        let dir = temp_dir("config");
        copy_example(dir.path());
        let (mut engine, first) = load(dir.path(), host_settings);
        let before = first.expect("the example configuration loads");
        let routed_before = demo(&mut engine);

        let original: PathBuf = dir.path().join(format!("{}.yaml", target.base()));
        let value: Value = serde_norway::from_str(&std::fs::read_to_string(&original).unwrap()).unwrap();
        let text = mutated_text(target, &value, &mutation, json);
        std::fs::remove_file(&original).unwrap();
        let file = dir.path().join(format!("{}.{}", target.base(), if json { "json" } else { "yaml" }));
        std::fs::write(&file, &text).unwrap();

        match engine.reload() {
            Ok(summary) => {
                prop_assert!(!mutation.breaks(target, &value), "loaded: {:?}", text);
                if matches!(mutation, Mutation::Rewrite) {
                    prop_assert_eq!(
                        (summary.rules, summary.packs, summary.composition_rules),
                        (before.rules, before.packs, before.composition_rules)
                    );
                    prop_assert_eq!(demo(&mut engine), routed_before);
                }
            }
            Err(errors) => {
                prop_assert!(!matches!(mutation, Mutation::Rewrite), "{:?}", errors);
                check_errors_name_files(&errors.errors, dir.path())?;
                let file = file.display().to_string();
                if mutation.breaks(target, &value) {
                    prop_assert!(
                        errors.errors.iter().any(|e| e.file == file || e.file == HOST_SETTINGS),
                        "no error names {}: {:?}", file, errors
                    );
                }
                // The configuration in force before the failed reload still routes.
                prop_assert_eq!(demo(&mut engine), routed_before);
            }
        }
        // A fresh engine (a restart) on the same files says the same.
        let (_, fresh) = load(dir.path(), host_settings);
        if let Err(errors) = fresh {
            check_errors_name_files(&errors.errors, dir.path())?;
        }
    }
}

/// A value that is wrong for one rule field (by type or by meaning), and what the error says.
const BAD_FIELDS: [(&str, &str); 5] = [
    ("min_confidence", "-1"),
    ("keyword_weight", "0"),
    ("pack_type", "\"\""),
    ("consumer_profile", "nobody_has_this_profile"),
    ("scope", "secret"),
];

/// The example's rules file with `field: value` as the first line of rule `rule`'s item (replacing
/// the field's own line, if it has one), and that line's number.
fn with_bad_field(text: &str, rule: usize, field: &str, value: &str) -> (String, u32) {
    let lines: Vec<&str> = text.lines().collect();
    let items: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("  - id: "))
        .collect();
    let start = items[rule % items.len()];
    let end = items
        .iter()
        .find(|&&i| i > start)
        .copied()
        .unwrap_or(lines.len());
    let mut out: Vec<String> = vec![];
    for (i, line) in lines.iter().enumerate() {
        let own_line = i > start && i < end && line.trim_start().starts_with(&format!("{field}:"));
        if !own_line {
            out.push(line.to_string());
        }
        if i == start {
            out.push(format!("    {field}: {value}"));
        }
    }
    (out.join("\n") + "\n", start as u32 + 2)
}

proptest! {
    #![proptest_config(config(48))]

    /// An error in one rule's field names the rules file, the field, and the line it is on.
    #[test]
    fn a_rule_field_error_points_at_its_line(rule in 0usize..64, bad in prop::sample::select(BAD_FIELDS.to_vec())) {
        let (field, value) = bad;
        let dir = temp_dir("field");
        copy_example(dir.path());
        let file = dir.path().join("intent_rules.yaml");
        let (text, line) = with_bad_field(&std::fs::read_to_string(&file).unwrap(), rule, field, value);
        std::fs::write(&file, &text).unwrap();
        let (_, result) = load(dir.path(), false);
        let errors = result.expect_err("a bad field is an error");
        check_errors_name_files(&errors.errors, dir.path())?;
        let file = file.display().to_string();
        prop_assert!(
            errors.errors.iter().any(|e| e.file == file
                && e.line == Some(line)
                && e.field.as_deref().is_some_and(|f| f.ends_with(field))),
            "no error for {} at line {}: {:?}\n{}", field, line, errors, text
        );
    }
}
