//! Configuration files: what they look like, how they are read (config directory plus overlay,
//! `source`), the settings in force (`settings`), and errors that name the file, line and field.
//! Compiling the routing files into a router is `routing`'s job.

use serde::Deserialize;

pub use crate::platform::api::ConfigError;
pub use group_ids::GroupIdSettings;
pub use skip::SkipSettings;

pub mod group_ids;
mod settings;
mod skip;
mod source;

pub use crate::platform::documents::nesting::{MAX_NESTING, Refused, check_json, check_yaml};
pub use settings::{
    HOST_SETTINGS, LoadedSettings, layered_settings, load_settings, validate_plugin_settings,
};
pub use source::{ConfigRoots, ItemLines, SourceFile, locate, parse};

/// Base names of the configuration files; each may end in `.yaml`, `.yml` or `.json`.
pub const RULES_FILE: &str = "intent_rules";
pub const REGISTRY_FILE: &str = "pack_registry";
pub const COMPOSITION_FILE: &str = "pack_composition";
pub const SETTINGS_FILE: &str = "settings";

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
    pub experts: crate::experts::settings::ExpertsSettings,
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
    pub experts: crate::experts::settings::ExpertsSettings,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GraphitiSettings {
    /// The MCP endpoint (`…/mcp`) or the REST server's base URL.
    pub url: String,
    pub transport: Transport,
    pub group_id: GroupIdSettings,
    pub falkordb: FalkorSettings,
}

impl Default for GraphitiSettings {
    fn default() -> Self {
        Self {
            url: "http://localhost:8000/mcp".into(),
            transport: Default::default(),
            group_id: Default::default(),
            falkordb: Default::default(),
        }
    }
}

/// The FalkorDB behind Graphiti, reached directly where Graphiti's API misses on it (listings,
/// deletes and their checks); off while `url` is empty. Its password is the host's, never here.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FalkorSettings {
    /// `redis://host:port` (a user name may precede the host).
    pub url: String,
    /// The graph the Graphiti server writes when no group is named (its `FALKORDB_DATABASE`):
    /// never deleted; a group of that name is cleared node by node.
    pub default_graph: String,
}

impl Default for FalkorSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            default_graph: "default_db".into(),
        }
    }
}

impl FalkorSettings {
    pub fn configured(&self) -> Option<&str> {
        (!self.url.is_empty()).then_some(self.url.as_str())
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

/// Chosen on the labelled set in `tests/relevance/set.yaml` (see docs/benchmarks.md).
pub const DEFAULT_MIN_RELEVANCE: f64 = 0.9;

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
    /// How old a cached answer may be to stand in when a search misses its budget (0: no cache).
    pub cache_max_age_minutes: u64,
    /// The host's other memory tools, named by the fallback note when Graphiti cannot be searched.
    /// OpenClaw's adapter sets it from what is installed (memory-core's tools, or none).
    pub fallback_tools: Vec<String>,
    /// The relevance floor: a recalled fact or entity is shown only when it scores at least this
    /// against the prompt and recent messages (`relevance`); 0 shows everything Graphiti returned.
    pub min_relevance: f64,
}

impl Default for RecallSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            timeout_ms: 2500,
            max_facts: 10,
            max_nodes: 5,
            max_chars: 4000,
            context_messages: 2,
            query_max_chars: 1000,
            invalid_facts: InvalidFacts::Past,
            cache_max_age_minutes: 30,
            // OpenClaw's default install: memory-core's builtin memory search.
            fallback_tools: vec!["memory_search".into(), "memory_get".into()],
            min_relevance: DEFAULT_MIN_RELEVANCE,
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
    /// A send whose outcome is unknown (no answer in time, the connection broke) waits this long
    /// for Graphiti to list it as stored (then it is done); not listed by then, `when_unconfirmed`
    /// decides. Long enough for a busy Graphiti to ingest its backlog.
    pub resend_after_doubt_ms: u64,
    /// What becomes of a send in doubt Graphiti has not listed within `resend_after_doubt_ms`
    /// (over MCP on FalkorDB it never can): a possible duplicate or a wait for an operator.
    pub when_unconfirmed: WhenUnconfirmed,
    pub backoff_initial_ms: u64,
    pub backoff_max_ms: u64,
    pub source_description: String,
    /// What is replaced by a marker before a turn or a note enters the spool: Graphiti's own LLM
    /// provider reads every episode. `[]` keeps everything.
    pub redact: Vec<Redact>,
    /// Each spooled turn or note synced to the disk before the hook returns, so that it survives
    /// a power cut or a kernel crash too (off: it survives the process and the Gateway only).
    pub sync_to_disk: bool,
    /// Episodes an import (`import`) feeds into the spool per minute at most: each costs Graphiti
    /// several calls to its LLM provider.
    pub import_per_minute: u32,
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
            when_unconfirmed: WhenUnconfirmed::SendAgain,
            backoff_initial_ms: 1000,
            backoff_max_ms: 300_000,
            source_description: "OpenClaw conversation turn".into(),
            redact: Redact::DEFAULT.to_vec(),
            sync_to_disk: false,
            import_per_minute: 4,
        }
    }
}

/// A kind of text capture replaces by a marker (`capture.redact`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Redact {
    /// Tokens by their issuers' prefixes (OpenAI, Anthropic, GitHub, Slack, AWS, Google, GitLab,
    /// npm, Hugging Face) and JWTs.
    ApiKeys,
    /// PEM private key blocks.
    PrivateKeys,
    /// Card numbers: an issuer's prefix and length, Luhn-valid.
    CardNumbers,
    /// The value after `password:` or `password=` (passwd, pwd, passphrase, passcode, PIN, …).
    Passwords,
    /// E-mail addresses (off by default: a user may want them remembered).
    EmailAddresses,
    /// Phone numbers (off by default, as e-mail addresses).
    PhoneNumbers,
}

impl Redact {
    /// On unless the settings say otherwise: what is a secret in every conversation.
    pub const DEFAULT: [Redact; 4] = [
        Redact::ApiKeys,
        Redact::PrivateKeys,
        Redact::CardNumbers,
        Redact::Passwords,
    ];
}

/// A send in doubt that Graphiti cannot be seen to have (its listing never shows it, as over MCP on
/// FalkorDB): neither API takes an idempotency key, so either it may arrive twice or it waits for
/// an operator.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WhenUnconfirmed {
    /// Sent again: never lost, possibly stored twice. The default: nothing lost is the promise.
    #[default]
    SendAgain,
    /// Set aside in the spool (never deleted), counted by `status`, sent again only by `spool
    /// requeue`: never stored twice, missing from Graphiti until an operator sends it.
    KeepAside,
}

impl WhenUnconfirmed {
    /// As the setting spells it.
    pub fn name(self) -> &'static str {
        match self {
            WhenUnconfirmed::SendAgain => "send-again",
            WhenUnconfirmed::KeepAside => "keep-aside",
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
    /// A pack is not carried onto a turn more than this many minutes after the turn that last
    /// injected it (a conversation resumed later has usually moved on); 0: no time limit.
    pub max_age_minutes: u64,
    /// At most this many turns in a row carry a pack without a keyword of their own; a keyword turn
    /// starts the count again. 0: no limit.
    pub max_carried_turns: u32,
    /// Opt-in: a short prompt that names an entity the pack's turns did not name is not a follow-up
    /// (docs/configuration.md, "Stickiness").
    pub strict_follow_up: bool,
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
            max_age_minutes: 30,
            max_carried_turns: 3,
            strict_follow_up: false,
        }
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

/// A file's unsupported `schema_version`.
pub fn schema_error(file: &str, version: u32) -> ConfigError {
    ConfigError {
        file: file.into(),
        line: None,
        field: Some("schema_version".into()),
        message: format!("unsupported schema_version {version} (this plugin reads 1)"),
    }
}

/// How a file read is listed: overlay files marked.
pub fn display_name(source: &SourceFile) -> String {
    if source.from_overlay {
        format!("{} (overlay)", source.display)
    } else {
        source.display.clone()
    }
}

/// How the component talks to Graphiti: its MCP server or its REST API.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Mcp,
    Rest,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Mcp => "mcp",
            Transport::Rest => "rest",
        }
    }
}
