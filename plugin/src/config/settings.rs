//! The settings in force: the settings file (optional) with the host's settings laid over it, checked
//! beyond what types can say. Settings are one concern: a bad one keeps the last good settings (or the
//! defaults), whatever the state of routing.

use super::{
    ConfigError, ConfigRoots, PluginSettings, RoutingSettings, SETTINGS_FILE, SettingsFile,
    SourceFile, parse, schema_error,
};

/// Settings that loaded, and the files they came from (messages' names).
#[derive(Clone, Debug, Default)]
pub struct LoadedSettings {
    pub plugin: PluginSettings,
    pub routing: RoutingSettings,
    pub files: Vec<String>,
}

/// Reads the settings file (if any) and lays the host's settings (a JSON object) over it. Every
/// problem is returned, not just the first.
pub fn load_settings(
    roots: &ConfigRoots,
    host_settings: Option<&str>,
) -> Result<LoadedSettings, Vec<ConfigError>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let file = match roots.read_named(SETTINGS_FILE) {
        Ok(file) => file,
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let mut from_file = None;
    if let Some(source) = &file {
        files.push(super::display_name(source));
        match parse::<SettingsFile>(source) {
            Ok(s) => {
                if s.schema_version != 1 {
                    errors.push(schema_error(&source.display, s.schema_version));
                }
                errors.extend(validate_plugin_settings(&s.plugin(), source));
                from_file = Some(s);
            }
            Err(e) => errors.push(e),
        }
    }
    let settings = match host_settings {
        // A broken settings file is reported as such, not again as the host's fault.
        Some(host) if file.is_none() || from_file.is_some() => {
            files.push(HOST_SETTINGS.into());
            match layered_settings(file.as_ref(), host) {
                Ok(layered) => {
                    let host_source = SourceFile {
                        display: HOST_SETTINGS.into(),
                        text: host.into(),
                        from_overlay: false,
                    };
                    // Fields the settings file is already reported for.
                    let fields_in_error: Vec<Option<String>> =
                        errors.iter().map(|e| e.field.clone()).collect();
                    for e in validate_plugin_settings(&layered.plugin(), &host_source) {
                        if !fields_in_error.contains(&e.field) {
                            errors.push(e);
                        }
                    }
                    Some(layered)
                }
                Err(e) => {
                    errors.push(e);
                    None
                }
            }
        }
        _ => from_file,
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let (plugin, routing) = settings
        .map(|s| (s.plugin(), s.routing))
        .unwrap_or_default();
    Ok(LoadedSettings {
        plugin,
        routing,
        files,
    })
}

/// Checks of the settings that types alone cannot make.
pub fn validate_plugin_settings(
    settings: &PluginSettings,
    source: &SourceFile,
) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    let mut error = |section: &str, field: &str, message: String| {
        let line = source
            .text
            .lines()
            .position(|l| l.trim_start().starts_with(&format!("{field}:")))
            .map(|i| i as u32 + 1);
        errors.push(ConfigError {
            file: source.display.clone(),
            line,
            field: Some(format!("{section}.{field}")),
            message,
        });
    };
    let url = &settings.graphiti.url;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        error(
            "graphiti",
            "url",
            format!("{url:?} must be an http:// or https:// URL"),
        );
    }
    if let Err(why) = check_falkordb_url(&settings.graphiti.falkordb.url) {
        error("graphiti.falkordb", "url", why);
    }
    if settings.graphiti.falkordb.default_graph.is_empty() {
        error(
            "graphiti.falkordb",
            "default_graph",
            "must name the graph the Graphiti server writes by default (default_db)".into(),
        );
    }
    for (field, template) in [
        ("direct", &settings.graphiti.group_id.direct),
        ("group", &settings.graphiti.group_id.group),
    ] {
        if let Err(why) = super::group_ids::check_group_template(template) {
            error("graphiti.group_id", field, why);
        }
    }
    if !settings.graphiti.group_id.group.contains("{chat}") {
        error("graphiti.group_id", "group", "the group-chat template must contain {chat}, so a group never reads another chat's memories".into());
    }
    if settings.recall.timeout_ms == 0 {
        error("recall", "timeout_ms", "must be above 0".into());
    }
    if let Err(why) = check_tool_names(&settings.recall.fallback_tools) {
        error("recall", "fallback_tools", why);
    }
    let floor = settings.recall.min_relevance;
    if !(floor.is_finite() && floor >= 0.0) {
        error(
            "recall",
            "min_relevance",
            format!("{floor} must be a number of at least 0 (0 turns the relevance floor off)"),
        );
    }
    for (field, why) in capture_errors(&settings.capture, settings.recall.timeout_ms) {
        error("capture", field, why);
    }
    errors
}

/// The `capture` fields out of their range, with why.
fn capture_errors(
    capture: &super::CaptureSettings,
    recall_timeout_ms: u64,
) -> Vec<(&'static str, String)> {
    let mut errors = Vec::new();
    let pace = capture.import_per_minute;
    if !(1..=600).contains(&pace) {
        errors.push(("import_per_minute", format!("{pace} must be from 1 to 600")));
    }
    if capture.spool_max_episodes == 0 {
        errors.push(("spool_max_episodes", "must be above 0".into()));
    }
    if capture.send_timeout_ms < recall_timeout_ms {
        errors.push((
            "send_timeout_ms",
            format!(
                "must be at least recall.timeout_ms ({recall_timeout_ms} ms): Graphiti accepts slowly after an outage, and a send given up too early may still be stored"
            ),
        ));
    }
    if capture.backoff_initial_ms == 0 || capture.backoff_max_ms < capture.backoff_initial_ms {
        errors.push((
            "backoff_max_ms",
            "backoff needs 0 < backoff_initial_ms ≤ backoff_max_ms".into(),
        ));
    }
    errors
}

/// Tool names go into the fallback note verbatim: only names a tool can have, each once.
/// Empty (off) or `redis://[user@]host[:port]`, without a password: it would be shown wherever the
/// URL is (status, the Control UI, logs).
fn check_falkordb_url(url: &str) -> Result<(), String> {
    if url.is_empty() {
        return Ok(());
    }
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme.split('/').next().unwrap_or_default();
    if let Some((user, _)) = authority.rsplit_once('@')
        && user.contains(':')
    {
        return Err(
            "holds a password: give it to the host as the database password \
                    (docs/memory-control.md), never in the URL"
                .into(),
        );
    }
    if !url.starts_with("redis://") {
        return Err(format!(
            "{url:?} must be a redis:// URL (TLS to FalkorDB is not carried yet)"
        ));
    }
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') {
        return Err(format!("{url:?} names no host"));
    }
    Ok(())
}

fn check_tool_names(names: &[String]) -> Result<(), String> {
    for (i, name) in names.iter().enumerate() {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
        if !valid {
            return Err(format!(
                "{name:?} is not a tool name (1 to 64 of A-Z a-z 0-9 _ - .)"
            ));
        }
        if names[..i].contains(name) {
            return Err(format!("{name:?} is listed twice"));
        }
    }
    Ok(())
}

/// How errors name the settings a host passes with `reload-config` (OpenClaw's plugin config).
pub const HOST_SETTINGS: &str =
    "host settings (OpenClaw: plugins.entries.graphiti-openclaw.config)";

/// The settings file (if any) with the host's settings (a JSON object with the same keys) laid over
/// it key by key: objects merge, anything else replaces, `null` restores the default. Errors in the
/// host's part name it and the field's full path.
pub fn layered_settings(
    file: Option<&SourceFile>,
    host_json: &str,
) -> Result<SettingsFile, ConfigError> {
    let host_error = |field: Option<String>, message: String| ConfigError {
        file: HOST_SETTINGS.into(),
        line: None,
        field,
        message,
    };
    let host: serde_json::Value = serde_json::from_slice(host_json.as_bytes())
        .map_err(|e| host_error(None, format!("not valid JSON: {e}")))?;
    if !host.is_object() {
        return Err(host_error(None, "must be a JSON object".into()));
    }
    let mut merged = match file {
        Some(file) if file.display.ends_with(".json") => {
            serde_json::from_slice(file.text.as_bytes())
                .map_err(|e| host_error(None, e.to_string()))?
        }
        Some(file) => crate::platform::documents::yaml::from_str::<serde_json::Value>(&file.text)
            .map_err(|e| host_error(None, e.to_string()))?,
        None => serde_json::Value::Object(Default::default()),
    };
    if merged.is_null() {
        merged = serde_json::Value::Object(Default::default());
    }
    merge_json(&mut merged, host);
    serde_path_to_error::deserialize::<_, SettingsFile>(merged).map_err(|e| {
        // The top of the document is `.`: that names no field.
        let path = e.path().to_string();
        host_error((path != ".").then_some(path), e.into_inner().to_string())
    })
}

fn merge_json(base: &mut serde_json::Value, over: serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(base), serde_json::Value::Object(over)) => {
            for (key, value) in over {
                if value.is_null() {
                    base.remove(&key);
                } else {
                    merge_json(base.entry(key).or_insert(serde_json::Value::Null), value);
                }
            }
        }
        (base, over) => *base = over,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GraphitiSettings;
    use proptest::prelude::*;

    #[test]
    fn host_settings_lay_over_the_file_key_by_key() {
        let file = SourceFile {
            display: "settings.yaml".into(),
            text:
                "recall:\n  max_facts: 3\n  timeout_ms: 900\ngraphiti:\n  url: http://file:1/mcp\n"
                    .into(),
            from_overlay: false,
        };
        let s = layered_settings(
            Some(&file),
            r#"{"recall": {"timeout_ms": 250}, "graphiti": {"url": null}}"#,
        )
        .unwrap();
        assert_eq!((s.recall.max_facts, s.recall.timeout_ms), (3, 250));
        assert_eq!(
            s.graphiti.url,
            GraphitiSettings::default().url,
            "null restores the default"
        );
        let err = layered_settings(Some(&file), r#"{"recall": {"timeout": 250}}"#).unwrap_err();
        assert_eq!(err.file, HOST_SETTINGS);
        assert_eq!(err.field.as_deref(), Some("recall.timeout"), "{err}");
        assert!(err.message.contains("unknown field"), "{err}");
        let err = layered_settings(None, r#"{"capture": {"flush_batch": "many"}}"#).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("capture.flush_batch"), "{err}");
        assert!(
            layered_settings(None, "[1]")
                .unwrap_err()
                .message
                .contains("JSON object")
        );
    }

    #[test]
    fn a_falkordb_url_is_redis_and_never_holds_a_password() {
        let host = SourceFile {
            display: HOST_SETTINGS.into(),
            text: String::new(),
            from_overlay: false,
        };
        let errors = |url: &str| {
            let json = serde_json::json!({"graphiti": {"falkordb": {"url": url}}}).to_string();
            let s = layered_settings(None, &json).unwrap();
            validate_plugin_settings(&s.plugin(), &host)
        };
        assert!(errors("").is_empty(), "off");
        assert!(
            errors("redis://graphiti@db:6379").is_empty(),
            "a user name may stay"
        );
        for (url, said) in [
            ("redis://graphiti:hunter2@db:6379", "holds a password"),
            ("rediss://:hunter2@db:6379", "holds a password"),
            ("http://db:6379", "must be a redis:// URL"),
            ("redis://:6379", "names no host"),
        ] {
            let found = errors(url);
            assert_eq!(found.len(), 1, "{url}: {found:?}");
            assert_eq!(found[0].field.as_deref(), Some("graphiti.falkordb.url"));
            assert!(found[0].message.contains(said), "{url}: {found:?}");
            assert!(!found[0].message.contains("hunter2"), "{url}: {found:?}");
        }
    }

    #[test]
    fn fallback_tools_must_be_tool_names_each_once() {
        let host = SourceFile {
            display: HOST_SETTINGS.into(),
            text: String::new(),
            from_overlay: false,
        };
        let with_tools = |json: &str| {
            let s = layered_settings(None, json).unwrap();
            validate_plugin_settings(&s.plugin(), &host)
        };
        assert!(with_tools(r#"{"recall": {"fallback_tools": []}}"#).is_empty());
        assert!(with_tools(r#"{"recall": {"fallback_tools": ["memory_recall"]}}"#).is_empty());
        for (json, said) in [
            (
                r#"{"recall": {"fallback_tools": ["memory search"]}}"#,
                "not a tool name",
            ),
            (r#"{"recall": {"fallback_tools": [""]}}"#, "not a tool name"),
            (
                r#"{"recall": {"fallback_tools": ["a", "a"]}}"#,
                "listed twice",
            ),
        ] {
            let errors = with_tools(json);
            assert_eq!(errors.len(), 1, "{json}: {errors:?}");
            assert_eq!(errors[0].field.as_deref(), Some("recall.fallback_tools"));
            assert!(errors[0].message.contains(said), "{json}: {errors:?}");
        }
    }

    #[test]
    fn when_unconfirmed_is_send_again_or_keep_aside_and_a_bad_value_names_both() {
        use crate::config::WhenUnconfirmed;
        let yaml = |value: &str| SourceFile {
            display: "settings.yaml".into(),
            text: format!("schema_version: 1\ncapture:\n  when_unconfirmed: {value}\n"),
            from_overlay: false,
        };
        assert_eq!(
            crate::config::CaptureSettings::default().when_unconfirmed,
            WhenUnconfirmed::SendAgain,
            "never lost by default"
        );
        for (value, expected) in [
            ("send-again", WhenUnconfirmed::SendAgain),
            ("keep-aside", WhenUnconfirmed::KeepAside),
        ] {
            let s = super::super::parse::<SettingsFile>(&yaml(value)).unwrap();
            assert_eq!(s.capture.when_unconfirmed, expected);
            assert_eq!(expected.name(), value);
        }
        for value in ["twice", "keep_aside", "1"] {
            let err = super::super::parse::<SettingsFile>(&yaml(value)).unwrap_err();
            assert_eq!(
                err.field.as_deref(),
                Some("capture.when_unconfirmed"),
                "{err}"
            );
            assert_eq!(err.line, Some(3), "{err}");
            assert!(
                err.message.contains("send-again") && err.message.contains("keep-aside"),
                "{err}"
            );
        }
        let err =
            layered_settings(None, r#"{"capture": {"when_unconfirmed": "never"}}"#).unwrap_err();
        assert_eq!(
            err.field.as_deref(),
            Some("capture.when_unconfirmed"),
            "{err}"
        );
        assert!(err.message.contains("keep-aside"), "{err}");
        assert_eq!(
            named_field(r#"{"capture": {"when_unconfirmed": 3}}"#).as_deref(),
            Some("capture.when_unconfirmed")
        );
    }

    #[test]
    fn every_redaction_kind_the_docs_name_is_read_and_a_misspelt_one_is_refused() {
        let yaml = |kinds: &str| SourceFile {
            display: "settings.yaml".into(),
            text: format!("schema_version: 1\ncapture:\n  redact: [{kinds}]\n"),
            from_overlay: false,
        };
        let all = "api-keys, private-keys, card-numbers, passwords, email-addresses, phone-numbers";
        let s = super::super::parse::<SettingsFile>(&yaml(all)).unwrap();
        assert_eq!(s.capture.redact.len(), 6);
        let err = super::super::parse::<SettingsFile>(&yaml("e-mail-addresses")).unwrap_err();
        assert!(err.message.contains("email-addresses"), "{err}");
    }

    /// The field a host settings error names, or `None` for one about the whole object.
    fn named_field(host_json: &str) -> Option<String> {
        layered_settings(None, host_json)
            .expect_err(host_json)
            .field
    }

    #[test]
    fn a_host_settings_error_names_the_full_path_of_its_field() {
        for (json, field) in [
            (r#"{"recall": {"timeout": 250}}"#, Some("recall.timeout")),
            (
                r#"{"recall": {"timeout_ms": "soon"}}"#,
                Some("recall.timeout_ms"),
            ),
            (
                r#"{"recall": {"timeout_ms": -1}}"#,
                Some("recall.timeout_ms"),
            ),
            (
                r#"{"recall": {"fallback_tools": ["a", 7, "b"]}}"#,
                Some("recall.fallback_tools[1]"),
            ),
            (
                r#"{"recall": {"invalid_facts": "burn"}}"#,
                Some("recall.invalid_facts"),
            ),
            (r#"{"recall": 5}"#, Some("recall")),
            (
                r#"{"graphiti": {"transport": "carrier pigeon"}}"#,
                Some("graphiti.transport"),
            ),
            (
                r#"{"capture": {"flush_batch": 1e40}}"#,
                Some("capture.flush_batch"),
            ),
            (r#"{"routing": {"nope": true}}"#, Some("routing.nope")),
            (
                r#"{"experts": {"sessions": {"agent:main:x": 5}}}"#,
                Some("experts.sessions.agent:main:x"),
            ),
            (
                r#"{"experts": {"channels": {"e/t": ["a", ["b"]]}}}"#,
                Some("experts.channels.e/t[1]"),
            ),
            (
                r#"{"experts": {"known_servers": [null]}}"#,
                Some("experts.known_servers[0]"),
            ),
            (r#"{"zzz": {"a": [1, {"b": 2}]}}"#, Some("zzz")),
            (r#"[1]"#, None),
        ] {
            assert_eq!(named_field(json).as_deref(), field, "{json}");
        }
    }

    /// A JSON value of any shape, small.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e6..1e6f64).prop_map(Value::from),
            "[a-z:.\"\\\\é ,\\[\\]{}]{0,8}".prop_map(Value::from),
            prop::sample::select(vec!["mcp", "rest", "drop", "mark", "a", "memory_search"])
                .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map(any_key(), inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Settings' own keys mostly, and any other.
    fn any_key() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::sample::select(vec![
                "recall", "capture", "graphiti", "routing", "skip", "experts", "schema_version",
                "timeout_ms", "max_facts", "fallback_tools", "invalid_facts", "enabled", "url",
                "transport", "flush_batch", "sessions", "channels", "known_servers", "webhook_token",
                "min_relevance", "max_running", "mcp", "rest", "past", "drop", "word",
                "keyword_match",
            ])
            .prop_map(String::from),
            1 => "[a-z:.\"\\\\é ,\\[\\]{}]{0,6}",
        ]
    }

    proptest::proptest! {
        #[test]
        fn any_host_settings_load_or_name_a_field_they_hold(
            sections in proptest::collection::btree_map(any_key(), any_json(), 0..4),
        ) {
            let json = serde_json::Value::Object(sections.clone().into_iter().collect()).to_string();
            if let Err(e) = layered_settings(None, &json) {
                prop_assert_eq!(&e.file, HOST_SETTINGS);
                if let Some(field) = &e.field {
                    prop_assert!(
                        sections.keys().any(|key| field.starts_with(key.as_str())),
                        "{} names {:?}", json, field
                    );
                }
            }
        }
    }
}
