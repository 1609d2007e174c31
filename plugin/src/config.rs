//! Configuration files: what they look like, how they are read (config directory plus overlay), and
//! errors that name the file, line and field. Compiling them into a router is `routing`'s job.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::fs;
use std::path::{Path, PathBuf};

/// Base names of the configuration files; each may end in `.yaml`, `.yml` or `.json`.
pub const RULES_FILE: &str = "intent_rules";
pub const REGISTRY_FILE: &str = "pack_registry";
pub const COMPOSITION_FILE: &str = "pack_composition";
pub const SETTINGS_FILE: &str = "settings";
const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// A configuration problem, located as precisely as known.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConfigError {
    pub file: String,
    pub line: Option<u32>,
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    #[default]
    Public,
    Private,
}

/// How a rule's keywords match: on word boundaries (default) or anywhere.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KeywordMatch {
    #[default]
    Word,
    Substring,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    #[serde(default = "schema_v1")]
    pub schema_version: u32,
    pub rules: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    #[serde(alias = "consumerProfile")]
    pub consumer_profile: String,
    pub keywords: Vec<String>,
    #[serde(default = "one", alias = "keywordWeight")]
    pub keyword_weight: f64,
    #[serde(default, alias = "keywordMatch")]
    pub keyword_match: KeywordMatch,
    #[serde(default, alias = "entityBoosts")]
    pub entity_boosts: Vec<BoostSpec>,
    #[serde(default = "default_min_confidence", alias = "minConfidence")]
    pub min_confidence: f64,
    pub scope: Scope,
    #[serde(alias = "packType")]
    pub pack_type: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoostSpec {
    /// Regex against recalled node summaries, labels and names.
    #[serde(default, alias = "summaryPattern")]
    pub summary_pattern: Option<String>,
    /// Regex against recalled fact texts.
    #[serde(default, alias = "factPattern")]
    pub fact_pattern: Option<String>,
    pub weight: f64,
    #[serde(default)]
    pub suppresses: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryFile {
    #[serde(default = "schema_v1")]
    pub schema_version: u32,
    pub packs: Vec<PackEntry>,
    #[serde(default, alias = "consumerProfiles")]
    pub consumer_profiles: Vec<ProfileEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackEntry {
    pub id: String,
    /// Relative to the config directory (or the overlay, which wins).
    pub file: String,
    #[serde(alias = "packType")]
    pub pack_type: String,
    pub scope: Scope,
    #[serde(default)]
    pub modes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileEntry {
    pub id: String,
    #[serde(alias = "primaryPack")]
    pub primary_pack: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompositionFile {
    #[serde(default = "schema_v1")]
    pub schema_version: u32,
    #[serde(default)]
    pub rules: Vec<CompositionSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompositionSpec {
    #[serde(alias = "primaryIntent")]
    pub primary_intent: String,
    #[serde(default, alias = "injectAdditional")]
    pub inject_additional: Vec<AdditionalSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdditionalSpec {
    /// A pack type from the registry (or `pack`: a pack id).
    #[serde(default, alias = "packType")]
    pub pack_type: Option<String>,
    #[serde(default)]
    pub pack: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub required: bool,
    #[serde(default = "always")]
    pub condition: String,
}

/// A workflow pack file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    pub name: String,
    #[serde(default)]
    pub workflow_id: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub domain_context: Option<String>,
    #[serde(default)]
    pub compliance_rules: Option<String>,
    #[serde(default)]
    pub steps: Vec<PackStep>,
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Per-mode variants (e.g. `formal`, `casual`) overriding the texts above.
    #[serde(default)]
    pub modes: std::collections::BTreeMap<String, PackMode>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum PackStep {
    Id(String),
    Detailed {
        id: String,
        #[serde(default)]
        description: Option<String>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackMode {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub domain_context: Option<String>,
    #[serde(default)]
    pub compliance_rules: Option<String>,
}

/// Optional `settings` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    #[serde(default = "schema_v1")]
    pub schema_version: u32,
    #[serde(default)]
    pub routing: RoutingSettings,
    #[serde(default)]
    pub graphiti: GraphitiSettings,
    #[serde(default)]
    pub recall: RecallSettings,
    #[serde(default)]
    pub capture: CaptureSettings,
    #[serde(default)]
    pub skip: SkipSettings,
    #[serde(default)]
    pub experts: crate::expert_sessions::ExpertsSettings,
}

impl SettingsFile {
    pub fn plugin(&self) -> PluginSettings {
        PluginSettings {
            graphiti: self.graphiti.clone(),
            recall: self.recall.clone(),
            capture: self.capture.clone(),
            skip: self.skip.clone(),
            experts: self.experts.clone(),
        }
    }
}

/// Everything but routing: where Graphiti is and how recall and capture behave.
#[derive(Clone, Debug, Default)]
pub struct PluginSettings {
    pub graphiti: GraphitiSettings,
    pub recall: RecallSettings,
    pub capture: CaptureSettings,
    pub skip: SkipSettings,
    pub experts: crate::expert_sessions::ExpertsSettings,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GraphitiSettings {
    /// The MCP endpoint (`…/mcp`) or the REST server's base URL.
    pub url: String,
    pub transport: crate::graphiti::Transport,
    pub group_id: GroupIdSettings,
}

impl Default for GraphitiSettings {
    fn default() -> Self {
        Self {
            url: "http://localhost:8000/mcp".into(),
            transport: Default::default(),
            group_id: Default::default(),
        }
    }
}

/// Templates for the Graphiti `group_id` over the hook context: `{agent}`, `{sender}`, `{chat}`,
/// `{channel}`, `{session}`. Group chats use their own template, which must name `{chat}`, so a group
/// never reads a direct chat's memories.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GroupIdSettings {
    pub direct: String,
    pub group: String,
}

impl Default for GroupIdSettings {
    fn default() -> Self {
        Self {
            direct: "{agent}-dm-{sender}".into(),
            group: "{agent}-group-{chat}".into(),
        }
    }
}

/// What recall shows about a fact that is no longer true.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InvalidFacts {
    /// Listed apart as past, with their dates.
    #[default]
    Past,
    Drop,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecallSettings {
    pub enabled: bool,
    /// Budget for the whole recall (every request of it), in milliseconds.
    pub timeout_ms: u64,
    pub max_facts: usize,
    pub max_nodes: usize,
    /// Upper bound on the `<graphiti-context>` block, in characters.
    pub max_chars: usize,
    /// Earlier user messages added to the search query.
    pub context_messages: usize,
    pub query_max_chars: usize,
    pub invalid_facts: InvalidFacts,
}

impl Default for RecallSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            timeout_ms: 1500,
            max_facts: 10,
            max_nodes: 5,
            max_chars: 4000,
            context_messages: 2,
            query_max_chars: 1000,
            invalid_facts: InvalidFacts::Past,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CaptureSettings {
    pub enabled: bool,
    /// Episodes waiting for Graphiti at most; past that a turn is not captured, loudly.
    pub spool_max_episodes: usize,
    /// Episodes sent per `tick` at most.
    pub flush_batch: usize,
    /// Time budget of one `tick`, in milliseconds: no send starts after it (one already started may
    /// take its `send_timeout_ms`).
    pub flush_budget_ms: u64,
    /// How long one send may wait for Graphiti's answer. Longer than recall's budget: right after an
    /// outage Graphiti accepts slowly while it ingests the backlog, and a send given up too early may
    /// still have been stored. A send that goes again after an unknown outcome gets twice this.
    pub send_timeout_ms: u64,
    /// A send whose outcome is unknown (no answer in time, the connection broke) is not sent again
    /// until Graphiti is seen to lack it after this long (or at once, when Graphiti lists it as
    /// stored, it is done). Long enough for a busy Graphiti to ingest its backlog.
    pub resend_after_doubt_ms: u64,
    pub backoff_initial_ms: u64,
    pub backoff_max_ms: u64,
    pub source_description: String,
}

impl Default for CaptureSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            spool_max_episodes: 10_000,
            flush_batch: 50,
            flush_budget_ms: 3000,
            send_timeout_ms: 30_000,
            resend_after_doubt_ms: 600_000,
            backoff_initial_ms: 1000,
            backoff_max_ms: 300_000,
            source_description: "OpenClaw conversation turn".into(),
        }
    }
}

/// Turns neither recalled for nor captured.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SkipSettings {
    /// Prompts shorter than this (characters, trimmed) get no recall and are not captured.
    pub min_prompt_chars: usize,
    /// OpenClaw triggers that are not a person talking.
    pub triggers: Vec<String>,
}

impl Default for SkipSettings {
    fn default() -> Self {
        Self {
            min_prompt_chars: 8,
            triggers: ["heartbeat", "cron", "sub-agent", "subagent", "system"]
                .map(String::from)
                .to_vec(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingSettings {
    pub sticky: StickySettings,
    /// Upper bound on the whole `<pack-context>` block, in characters.
    pub max_pack_context_chars: usize,
    /// Longest prompt routed, in characters; the rest is ignored for matching.
    pub max_prompt_chars: usize,
}

impl Default for RoutingSettings {
    fn default() -> Self {
        Self {
            sticky: StickySettings::default(),
            max_pack_context_chars: 16_000,
            max_prompt_chars: 32_000,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StickySettings {
    pub enabled: bool,
    /// A prompt with fewer words than this is a follow-up.
    pub max_words: usize,
    /// A prompt that starts with one of these is a follow-up, whatever its length.
    pub continuation_signals: Vec<String>,
}

impl Default for StickySettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_words: 20,
            continuation_signals: [
                "also",
                "and what about",
                "what about",
                "continue",
                "and also",
                "same for",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
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
    for (field, template) in [
        ("direct", &settings.graphiti.group_id.direct),
        ("group", &settings.graphiti.group_id.group),
    ] {
        if let Err(why) = crate::recall::check_group_template(template) {
            error("graphiti.group_id", field, why);
        }
    }
    if !settings.graphiti.group_id.group.contains("{chat}") {
        error("graphiti.group_id", "group", "the group-chat template must contain {chat}, so a group never reads another chat's memories".into());
    }
    if settings.recall.timeout_ms == 0 {
        error("recall", "timeout_ms", "must be above 0".into());
    }
    if settings.capture.spool_max_episodes == 0 {
        error("capture", "spool_max_episodes", "must be above 0".into());
    }
    if settings.capture.send_timeout_ms < settings.recall.timeout_ms {
        error(
            "capture",
            "send_timeout_ms",
            format!(
                "must be at least recall.timeout_ms ({} ms): Graphiti accepts slowly after an outage, and a send given up too early may still be stored",
                settings.recall.timeout_ms
            ),
        );
    }
    if settings.capture.backoff_initial_ms == 0
        || settings.capture.backoff_max_ms < settings.capture.backoff_initial_ms
    {
        error(
            "capture",
            "backoff_max_ms",
            "backoff needs 0 < backoff_initial_ms ≤ backoff_max_ms".into(),
        );
    }
    errors
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
    let host: serde_json::Value = serde_json::from_str(host_json)
        .map_err(|e| host_error(None, format!("not valid JSON: {e}")))?;
    if !host.is_object() {
        return Err(host_error(None, "must be a JSON object".into()));
    }
    let mut merged = match file {
        Some(file) if file.display.ends_with(".json") => {
            serde_json::from_str(&file.text).map_err(|e| host_error(None, e.to_string()))?
        }
        Some(file) => serde_norway::from_str::<serde_json::Value>(&file.text)
            .map_err(|e| host_error(None, e.to_string()))?,
        None => serde_json::Value::Object(Default::default()),
    };
    if merged.is_null() {
        merged = serde_json::Value::Object(Default::default());
    }
    merge_json(&mut merged, host);
    serde_path_to_error::deserialize::<_, SettingsFile>(merged).map_err(|e| {
        let path = e.path().to_string();
        let field = (path != ".").then_some(path);
        host_error(field, e.into_inner().to_string())
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

fn schema_v1() -> u32 {
    1
}
fn one() -> f64 {
    1.0
}
fn default_min_confidence() -> f64 {
    0.3
}
fn always() -> String {
    "always".into()
}

/// A file read from the configuration, with the name used in messages.
pub struct SourceFile {
    pub display: String,
    pub text: String,
    pub from_overlay: bool,
}

/// Where configuration files come from: the overlay (if any) wins over the config directory, file by
/// file.
#[derive(Clone, Debug)]
pub struct ConfigRoots {
    pub config: PathBuf,
    pub overlay: Option<PathBuf>,
}

impl ConfigRoots {
    /// Reads `relative` from the overlay if it has it, else from the config directory.
    pub fn read(&self, relative: &str) -> Result<Option<SourceFile>, ConfigError> {
        if relative.starts_with('/') || relative.split(['/', '\\']).any(|part| part == "..") {
            return Err(ConfigError {
                file: relative.into(),
                line: None,
                field: None,
                message: "paths must be relative and stay inside the config directory".into(),
            });
        }
        let candidates = self
            .overlay
            .iter()
            .map(|dir| (dir, true))
            .chain([(&self.config, false)]);
        for (dir, from_overlay) in candidates {
            let path = dir.join(relative);
            match fs::read_to_string(&path) {
                Ok(text) => {
                    return Ok(Some(SourceFile {
                        display: path.display().to_string(),
                        text,
                        from_overlay,
                    }));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(ConfigError {
                        file: path.display().to_string(),
                        line: None,
                        field: None,
                        message: format!("cannot read: {e}"),
                    });
                }
            }
        }
        Ok(None)
    }

    /// Reads `<base>.yaml|yml|json`, whichever exists first.
    pub fn read_named(&self, base: &str) -> Result<Option<SourceFile>, ConfigError> {
        for ext in EXTENSIONS {
            if let Some(file) = self.read(&format!("{base}.{ext}"))? {
                return Ok(Some(file));
            }
        }
        Ok(None)
    }

    pub fn config_dir(&self) -> &Path {
        &self.config
    }
}

/// Parses a YAML or JSON file (by extension) into `T`, turning parser errors into located errors.
pub fn parse<T: DeserializeOwned>(file: &SourceFile) -> Result<T, ConfigError> {
    if file.display.ends_with(".json") {
        serde_json::from_str(&file.text).map_err(|e| {
            let (field, message) = split_path(&e.to_string());
            ConfigError {
                file: file.display.clone(),
                line: Some(e.line() as u32),
                field,
                message,
            }
        })
    } else {
        serde_norway::from_str(&file.text).map_err(|e| {
            let (field, message) = split_path(&e.to_string());
            ConfigError {
                file: file.display.clone(),
                line: e.location().map(|l| l.line() as u32),
                field,
                message: strip_location(&message),
            }
        })
    }
}

/// serde_norway prefixes errors with the path of the field (`rules[0].keywords: ...`).
pub(crate) fn split_path(message: &str) -> (Option<String>, String) {
    if let Some((path, rest)) = message.split_once(": ") {
        let looks_like_path = !path.is_empty()
            && !path.contains(' ')
            && path
                .chars()
                .all(|c| c.is_alphanumeric() || "_.[]-".contains(c));
        if looks_like_path {
            return (Some(path.to_string()), rest.to_string());
        }
    }
    let field = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"))
        .map(str::to_string);
    (field, message.to_string())
}

pub(crate) fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Finds the line (1-based) of `field` inside the list item whose `id`-like key equals `item`,
/// for errors found after parsing. Falls back to the item's line, then to none.
pub fn locate(text: &str, key: &str, item: &str, field: Option<&str>) -> Option<u32> {
    let lines: Vec<&str> = text.lines().collect();
    let is_item_line = |line: &str| {
        let t = line.trim_start().trim_start_matches(['-', ' ', '{']);
        let rest = t
            .strip_prefix(&format!("{key}:"))
            .or_else(|| t.strip_prefix(&format!("\"{key}\":")));
        // The value ends at the end of line, or at a comma in one-line JSON.
        rest.is_some_and(|rest| {
            rest.split(',')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\'', '}', ' '])
                == item
        })
    };
    let start = lines.iter().position(|l| is_item_line(l))?;
    let Some(field) = field else {
        return Some(start as u32 + 1);
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    // JSON written one item per line: the field sits on the item's own line.
    if lines[start].contains(&format!("\"{field}\"")) {
        return Some(start as u32 + 1);
    }
    for (i, line) in lines.iter().enumerate().skip(start) {
        let t = line.trim_start();
        if i > start && t.starts_with("- ") && indent(line) <= indent(lines[start]) {
            break; // the next item
        }
        let t = t.trim_start_matches("- ");
        if t.starts_with(&format!("{field}:")) || t.starts_with(&format!("\"{field}\"")) {
            return Some(i as u32 + 1);
        }
    }
    Some(start as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> SourceFile {
        SourceFile {
            display: "intent_rules.yaml".into(),
            text: text.into(),
            from_overlay: false,
        }
    }

    #[test]
    fn unknown_field_names_file_line_and_field() {
        let err = parse::<RulesFile>(&yaml(
            "rules:\n  - id: a\n    consumer_profile: p\n    keywrods: [x]\n    scope: public\n    pack_type: t\n",
        ))
        .unwrap_err();
        assert_eq!(err.file, "intent_rules.yaml");
        assert_eq!(err.line, Some(4), "{err}");
        assert!(err.to_string().contains("keywrods"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_field() {
        let err = parse::<RulesFile>(&yaml(
            "rules:\n  - id: a\n    consumer_profile: p\n    keywords: [x]\n    keyword_weight: heavy\n    scope: public\n    pack_type: t\n",
        ))
        .unwrap_err();
        assert_eq!(err.line, Some(5), "{err}");
        assert_eq!(
            err.field.as_deref(),
            Some("rules[0].keyword_weight"),
            "{err}"
        );
    }

    #[test]
    fn json_errors_have_lines() {
        let file = SourceFile {
            display: "r.json".into(),
            text: "{\n \"rules\": [\n  {\"id\": 3}\n ]\n}".into(),
            from_overlay: false,
        };
        let err = parse::<RulesFile>(&file).unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
    }

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
    fn locates_fields_inside_items() {
        let text = "rules:\n  - id: a\n    keywords: [x]\n  - id: b\n    keywords: [y]\n    min_confidence: -1\n";
        assert_eq!(locate(text, "id", "b", Some("min_confidence")), Some(6));
        assert_eq!(locate(text, "id", "b", Some("keywords")), Some(5));
        assert_eq!(locate(text, "id", "a", None), Some(2));
        assert_eq!(locate(text, "id", "zzz", None), None);
    }
}
