//! Deterministic intent routing and pack composition (PRD §Intent Detection, §Cross-Pack Composition).
//!
//! Built once per configuration: one Aho-Corasick automaton over every rule's keywords, compiled boost
//! regexes, resolved packs. Per turn: one pass over the prompt, then work proportional to the rules
//! that matched, never to the number of rules.
//!
//! Scores are kept in thousandths (integers), so ties are exact and the same inputs give the same bytes.

use crate::config::{self, ConfigError, ConfigRoots, KeywordMatch, RoutingSettings, Scope};
use crate::decision::{BoostHit, Candidate, Decision, SkippedPack};
use crate::packs::{self, PackRegistry};
use crate::recall::Recall;
use crate::text::{self, escape_attr};
use aho_corasick::{AhoCorasick, MatchKind};
use regex::{Regex, RegexBuilder};
use std::collections::{HashMap, HashSet};

/// Limits for rule authors' regexes: a pattern is data from a config file.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_MAX_LEN: usize = 1_000;
/// How much of a matched recalled text the trace shows.
const TRACE_TEXT_CHARS: usize = 80;

type Milli = i64;

fn to_milli(value: f64) -> Milli {
    (value * 1000.0).round() as Milli
}

fn from_milli(value: Milli) -> f64 {
    value as f64 / 1000.0
}

fn show(value: Milli) -> String {
    format!("{:.2}", from_milli(value))
}

/// A compiled intent rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub pack_type: String,
    pub scope: Scope,
    pub keywords: Vec<String>,
    /// Keywords match anywhere, not only on word boundaries.
    substring: bool,
    keyword_weight: Milli,
    min_confidence: Milli,
    boosts: Vec<Boost>,
    /// Registry index of the primary pack (from the consumer profile).
    primary_pack: usize,
    additional: Vec<Additional>,
}

#[derive(Debug)]
struct Boost {
    summary: Option<Regex>,
    fact: Option<Regex>,
    weight: Milli,
    suppresses: Vec<String>,
}

/// A pack a composition rule adds to an intent's primary pack.
#[derive(Debug)]
struct Additional {
    /// As the composition rule names it (pack type or pack id).
    label: String,
    mode: Option<String>,
    required: bool,
    /// Registry index, or why no pack fits.
    pack: Result<usize, String>,
}

/// Who owns a keyword pattern of the automaton.
#[derive(Clone, Copy, Debug)]
struct KeywordOwner {
    rule: u32,
    keyword: u32,
    substring: bool,
}

/// Everything routing needs about one turn.
#[derive(Clone, Copy, Debug)]
pub struct RouteInput<'a> {
    pub prompt: &'a str,
    pub recall: &'a Recall,
    pub group_chat: bool,
    /// The previous turn's injected intent (or pack) in this conversation.
    pub previous: Option<&'a str>,
}

/// A routing decision and the `<pack-context>` block it injects.
#[derive(Clone, Debug, Default)]
pub struct Routed {
    pub decision: Decision,
    pub pack_context: Option<String>,
    /// Things an operator should see in the log (unavailable required packs, size cuts).
    pub notes: Vec<String>,
}

#[derive(Debug)]
pub struct Router {
    pub rules: Vec<Rule>,
    pub registry: PackRegistry,
    pub settings: RoutingSettings,
    automaton: Option<AhoCorasick>,
    owners: Vec<Vec<KeywordOwner>>,
    continuation_signals: Vec<String>,
    pub composition_rules: usize,
    /// Rule index by id.
    by_id: HashMap<String, usize>,
    /// The first rule whose primary pack is this registry index.
    by_primary_pack: HashMap<usize, usize>,
}

/// The routing configuration of a directory: rules, registry, packs, composition.
pub struct LoadedRouting {
    pub router: Router,
    pub files: Vec<String>,
    pub warnings: Vec<String>,
}

impl Router {
    /// Reads and compiles the routing files (rules, registry, packs, composition) with the routing
    /// settings in force; every problem found is returned, not just the first.
    pub fn load(
        roots: &ConfigRoots,
        settings: &RoutingSettings,
    ) -> Result<LoadedRouting, Vec<ConfigError>> {
        if !roots.config_dir().is_dir() {
            return Err(vec![ConfigError {
                file: roots.config_name().into(),
                line: None,
                field: None,
                message: "the configuration directory does not exist".into(),
            }]);
        }
        let mut files = Vec::new();
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        let registry = PackRegistry::load(roots, &mut files, &mut warnings, &mut errors);

        let rules_source = match roots.read_named(config::RULES_FILE) {
            Ok(Some(source)) => Some(source),
            Ok(None) => {
                errors.push(packs::missing_file(roots, config::RULES_FILE));
                None
            }
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let mut rules = Vec::new();
        // None when the rules file could not be read: then no rule id can be checked against it.
        let mut declared_rules: Option<HashSet<String>> = None;
        if let Some(source) = &rules_source {
            files.push(config::display_name(source));
            match config::parse::<config::RulesFile>(source) {
                Ok(spec) => {
                    if spec.schema_version != 1 {
                        errors.push(config::schema_error(&source.display, spec.schema_version));
                    }
                    declared_rules = Some(spec.rules.iter().map(|r| r.id.clone()).collect());
                    rules = compile_rules(spec.rules, source, &registry, &mut errors);
                }
                Err(e) => errors.push(e),
            }
        }

        let mut composition_rules = 0;
        match roots.read_named(config::COMPOSITION_FILE) {
            Ok(Some(source)) => {
                files.push(config::display_name(&source));
                match config::parse::<config::CompositionFile>(&source) {
                    Ok(spec) => {
                        if spec.schema_version != 1 {
                            errors.push(config::schema_error(&source.display, spec.schema_version));
                        }
                        composition_rules = spec.rules.len();
                        attach_compositions(
                            spec.rules,
                            &source,
                            &registry,
                            declared_rules.as_ref(),
                            &mut rules,
                            &mut warnings,
                            &mut errors,
                        );
                    }
                    Err(e) => errors.push(e),
                }
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }

        let (automaton, owners) = match build_automaton(&rules) {
            Ok(built) => built,
            Err(message) => {
                errors.push(ConfigError {
                    file: "intent_rules".into(),
                    line: None,
                    field: Some("keywords".into()),
                    message,
                });
                (None, vec![])
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let by_id = rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.clone(), i))
            .collect();
        let mut by_primary_pack = HashMap::new();
        for (i, rule) in rules.iter().enumerate() {
            by_primary_pack.entry(rule.primary_pack).or_insert(i);
        }
        let mut router = Router {
            rules,
            registry,
            settings: RoutingSettings::default(),
            automaton,
            owners,
            continuation_signals: vec![],
            composition_rules,
            by_id,
            by_primary_pack,
        };
        router.set_settings(settings.clone());
        Ok(LoadedRouting {
            router,
            files,
            warnings,
        })
    }

    /// The routing settings in force (they come with the settings, which load apart).
    pub fn set_settings(&mut self, settings: RoutingSettings) {
        self.continuation_signals = settings
            .sticky
            .continuation_signals
            .iter()
            .map(|s| text::normalize(s))
            .filter(|s| !s.is_empty())
            .collect();
        self.settings = settings;
    }

    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.by_id.get(id).map(|&i| &self.rules[i])
    }

    /// Decides which pack (if any) this turn gets, and builds its block.
    pub fn route(&self, input: &RouteInput) -> Routed {
        let mut decision = Decision::default();
        // A prompt no longer in bytes than the limit is within it in characters too: skip the walk.
        let cut = (input.prompt.len() > self.settings.max_prompt_chars)
            .then(|| {
                input
                    .prompt
                    .char_indices()
                    .nth(self.settings.max_prompt_chars)
            })
            .flatten();
        let prompt = match cut {
            Some((cut, _)) => {
                decision.trace.push(format!(
                    "prompt cut to its first {} characters for matching",
                    self.settings.max_prompt_chars
                ));
                &input.prompt[..cut]
            }
            None => input.prompt,
        };
        let normalized = text::normalize(prompt);

        // Layer 1: every keyword of every rule in one pass. A rule is a candidate only if one matched.
        let mut hits: Vec<(u32, u32)> = Vec::new();
        if let Some(automaton) = &self.automaton {
            for m in automaton.find_overlapping_iter(&normalized) {
                let owners = &self.owners[m.pattern().as_usize()];
                let bounded = text::on_word_boundaries(&normalized, m.start(), m.end());
                hits.extend(
                    owners
                        .iter()
                        .filter(|o| o.substring || bounded)
                        .map(|o| (o.rule, o.keyword)),
                );
            }
        }
        hits.sort_unstable();
        hits.dedup();

        let mut scored: Vec<Scored> = Vec::new();
        for group in hits.chunk_by(|a, b| a.0 == b.0) {
            let rule_index = group[0].0 as usize;
            let rule = &self.rules[rule_index];
            let keywords: Vec<String> = group
                .iter()
                .map(|&(_, k)| rule.keywords[k as usize].clone())
                .collect();
            let keyword_score = rule.keyword_weight * keywords.len() as Milli;
            decision.trace.push(format!(
                "{}: keywords [{}] → {} × {} = {}",
                rule.id,
                keywords.join(", "),
                keywords.len(),
                show(rule.keyword_weight),
                show(keyword_score)
            ));
            // Layer 2: entity boosts from recalled data; additive only (P4).
            let mut boosts = Vec::new();
            for boost in &rule.boosts {
                if let Some(hit) = boost.fire(input.recall) {
                    decision.trace.push(format!(
                        "{}: boost +{} ({} matched {:?})",
                        rule.id,
                        show(boost.weight),
                        hit.matched_on,
                        hit.matched_text
                    ));
                    boosts.push(hit);
                }
            }
            let score = keyword_score + boosts.iter().map(|b| to_milli(b.weight)).sum::<Milli>();
            scored.push(Scored {
                rule: rule_index,
                keywords,
                keyword_score,
                boosts,
                score,
                suppressed_by: None,
            });
        }

        // Suppression removes candidates; it never changes a score.
        let suppressions: Vec<(String, String)> = scored
            .iter()
            .flat_map(|s| {
                let by = self.rules[s.rule].id.clone();
                s.boosts
                    .iter()
                    .flat_map(|b| b.suppresses.iter())
                    .map(move |target| (target.clone(), by.clone()))
            })
            .collect();
        for s in &mut scored {
            let id = &self.rules[s.rule].id;
            if let Some((_, by)) = suppressions
                .iter()
                .find(|(target, by)| by != id && glob_matches(target, id))
            {
                decision
                    .trace
                    .push(format!("{id}: suppressed by an entity boost of {by}"));
                s.suppressed_by = Some(by.clone());
            }
        }
        decision.candidates = scored
            .iter()
            .map(|s| s.to_candidate(&self.rules[s.rule]))
            .collect();

        // Layer 3: threshold, unique highest, tie → none.
        let mut eligible: Vec<&Scored> = Vec::new();
        for s in scored.iter().filter(|s| s.suppressed_by.is_none()) {
            let rule = &self.rules[s.rule];
            if s.score >= rule.min_confidence {
                eligible.push(s);
            } else {
                decision.trace.push(format!(
                    "{}: score {} below min confidence {}",
                    rule.id,
                    show(s.score),
                    show(rule.min_confidence)
                ));
            }
        }
        let winner = if scored.is_empty() {
            match self.sticky_rule(&normalized, input.previous) {
                Some(rule) => {
                    decision.sticky = true;
                    decision.trace.push(format!(
                        "no keyword matched; follow-up to the previous turn's {}: sticky",
                        self.rules[rule].id
                    ));
                    rule
                }
                None => {
                    let reason = match input.previous {
                        Some(prev)
                            if self.settings.sticky.enabled
                                && self.resolve_previous(prev).is_some() =>
                        {
                            "no rule's keywords matched, and the prompt is not a short follow-up"
                                .to_string()
                        }
                        _ => "no rule's keywords matched".to_string(),
                    };
                    return self.no_pack(decision, reason);
                }
            }
        } else if eligible.is_empty() {
            let reason = if scored.iter().all(|s| s.suppressed_by.is_some()) {
                "every matching rule was suppressed by an entity boost".to_string()
            } else {
                "no matching rule reached its min confidence".to_string()
            };
            return self.no_pack(decision, reason);
        } else {
            let best = eligible.iter().map(|s| s.score).max().unwrap_or_default();
            let top: Vec<&str> = eligible
                .iter()
                .filter(|s| s.score == best)
                .map(|s| self.rules[s.rule].id.as_str())
                .collect();
            if top.len() > 1 {
                let reason = format!(
                    "tie at {} between {}: ambiguous, no pack",
                    show(best),
                    top.join(", ")
                );
                return self.no_pack(decision, reason);
            }
            let winner = eligible
                .iter()
                .find(|s| s.score == best)
                .map(|s| s.rule)
                .unwrap_or_default();
            let runner_up = eligible
                .iter()
                .filter(|s| s.rule != winner)
                .map(|s| s.score)
                .max();
            decision.trace.push(match runner_up {
                Some(next) => format!(
                    "winner: {} ({} over {})",
                    self.rules[winner].id,
                    show(best),
                    show(next)
                ),
                None => format!("winner: {} ({})", self.rules[winner].id, show(best)),
            });
            winner
        };
        self.compose(winner, input.group_chat, decision)
    }

    /// Layer 4: the previous turn's rule again, for a short follow-up or a continuation signal.
    fn sticky_rule(&self, normalized: &str, previous: Option<&str>) -> Option<usize> {
        let sticky = &self.settings.sticky;
        let rule = self
            .resolve_previous(previous?)
            .filter(|_| sticky.enabled)?;
        let short = text::word_count(normalized) < sticky.max_words;
        let continues = self.continuation_signals.iter().any(|signal| {
            normalized.starts_with(signal.as_str())
                && text::on_word_boundaries(normalized, 0, signal.len())
        });
        (short || continues).then_some(rule)
    }

    /// A previous turn is remembered by intent id; a pack id is accepted too (first rule using it).
    pub fn resolve_previous(&self, previous: &str) -> Option<usize> {
        self.by_id.get(previous).copied().or_else(|| {
            let pack = self.registry.index_of(previous)?;
            self.by_primary_pack.get(&pack).copied()
        })
    }

    fn no_pack(&self, mut decision: Decision, reason: String) -> Routed {
        decision.sticky = false; // nothing is carried over when nothing is injected
        decision.trace.push(format!("no pack: {reason}"));
        decision.no_pack_reason = Some(reason);
        Routed {
            decision,
            pack_context: None,
            notes: vec![],
        }
    }

    /// Scope (P5), then composition, then the block.
    fn compose(&self, winner: usize, group_chat: bool, mut decision: Decision) -> Routed {
        let rule = &self.rules[winner];
        let primary = &self.registry.packs[rule.primary_pack];
        decision.intent = Some(rule.id.clone());
        let scope = if rule.scope == Scope::Private || primary.scope == Scope::Private {
            Scope::Private
        } else {
            Scope::Public
        };
        if group_chat && scope == Scope::Private {
            decision.intent = None;
            let reason = format!("{} is private and this is a group chat", rule.id);
            return self.no_pack(decision, reason);
        }
        let primary_content = match &primary.content {
            Ok(content) => content,
            Err(why) => {
                decision.intent = None;
                let reason = format!("primary pack {} is unavailable: {why}", primary.id);
                let mut routed = self.no_pack(decision, reason.clone());
                routed.notes.push(reason);
                return routed;
            }
        };

        let budget = self.settings.max_pack_context_chars;
        let mut body = text::truncate_chars(primary_content.primary(), budget);
        let mut included: Vec<(usize, Option<&str>)> = vec![(rule.primary_pack, None)];
        let mut block_scope = scope;
        let mut notes = Vec::new();
        for extra in &rule.additional {
            let skip = |decision: &mut Decision, reason: String| {
                decision
                    .trace
                    .push(format!("compose: skipped {}: {reason}", extra.label));
                decision.skipped_packs.push(SkippedPack {
                    pack: extra.label.clone(),
                    reason,
                });
            };
            let pack_index = match &extra.pack {
                Ok(index) => *index,
                Err(why) if extra.required => {
                    return self.required_missing(decision, &extra.label, why);
                }
                Err(why) => {
                    skip(&mut decision, why.clone());
                    continue;
                }
            };
            let pack = &self.registry.packs[pack_index];
            // Scope wins over `required`: a private addition is left out of a group chat, quietly.
            if group_chat && pack.scope == Scope::Private {
                skip(&mut decision, "private pack in a group chat".into());
                continue;
            }
            let content = match &pack.content {
                Ok(content) => content,
                Err(why) if extra.required => {
                    return self.required_missing(decision, &pack.id, why);
                }
                Err(why) => {
                    skip(&mut decision, why.clone());
                    continue;
                }
            };
            if included.contains(&(pack_index, extra.mode.as_deref())) {
                decision
                    .trace
                    .push(format!("compose: {} already included", pack.id));
                continue;
            }
            let section = content.additional(extra.mode.as_deref());
            if body.chars().count() + section.chars().count() + 1 > budget {
                let why = format!("the pack context would exceed its {budget}-character budget");
                if extra.required {
                    return self.required_missing(decision, &pack.id, &why);
                }
                notes.push(format!("{}: {} left out: {why}", rule.id, pack.id));
                skip(&mut decision, why);
                continue;
            }
            body.push('\n');
            body.push_str(section);
            included.push((pack_index, extra.mode.as_deref()));
            if pack.scope == Scope::Private {
                block_scope = Scope::Private;
            }
            let label = match &extra.mode {
                Some(mode) => format!("{} ({mode})", pack.id),
                None => pack.id.clone(),
            };
            decision.trace.push(format!(
                "compose: + {label}{}",
                if extra.required { " (required)" } else { "" }
            ));
            decision.additional_packs.push(label);
        }
        decision.primary_pack = Some(primary.id.clone());
        decision
            .trace
            .push(format!("inject: {} with pack {}", rule.id, primary.id));
        let scope_name = if block_scope == Scope::Private {
            "private"
        } else {
            "public"
        };
        let sticky = if decision.sticky {
            " sticky=\"true\""
        } else {
            ""
        };
        let block = format!(
            "<pack-context intent=\"{}\" primary-pack=\"{}\" scope=\"{scope_name}\"{sticky}>\n{}</pack-context>",
            escape_attr(&rule.id),
            escape_attr(&primary.id),
            body.trim_end().to_string() + "\n",
        );
        Routed {
            decision,
            pack_context: Some(block),
            notes,
        }
    }

    fn required_missing(&self, mut decision: Decision, pack: &str, why: &str) -> Routed {
        let intent = decision.intent.take().unwrap_or_default();
        let reason = format!(
            "required pack {pack} for {intent} is unavailable ({why}): whole injection skipped"
        );
        let mut routed = self.no_pack(decision, reason.clone());
        routed.notes.push(reason);
        routed
    }
}

struct Scored {
    rule: usize,
    keywords: Vec<String>,
    keyword_score: Milli,
    boosts: Vec<BoostHit>,
    score: Milli,
    suppressed_by: Option<String>,
}

impl Scored {
    fn to_candidate(&self, rule: &Rule) -> Candidate {
        Candidate {
            intent: rule.id.clone(),
            pack_type: rule.pack_type.clone(),
            keywords: self.keywords.clone(),
            keyword_score: from_milli(self.keyword_score),
            boosts: self.boosts.clone(),
            score: from_milli(self.score),
            min_confidence: from_milli(rule.min_confidence),
            suppressed_by: self.suppressed_by.clone(),
        }
    }
}

impl Boost {
    /// The first recalled text this boost's patterns match, if any. Facts no longer true don't count.
    fn fire(&self, recall: &Recall) -> Option<BoostHit> {
        let hit = |on: &str, text: &str| BoostHit {
            matched_on: on.into(),
            matched_text: text::truncate_chars(text, TRACE_TEXT_CHARS),
            weight: from_milli(self.weight),
            suppresses: self.suppresses.clone(),
        };
        if let Some(re) = &self.summary {
            for node in &recall.nodes {
                if re.is_match(&node.summary) {
                    return Some(hit("summary", &node.summary));
                }
                if let Some(label) = node.labels.iter().find(|l| re.is_match(l)) {
                    return Some(hit("label", label));
                }
                if re.is_match(&node.name) {
                    return Some(hit("name", &node.name));
                }
            }
        }
        if let Some(re) = &self.fact {
            for fact in recall.facts.iter().filter(|f| f.is_current()) {
                if re.is_match(&fact.fact) {
                    return Some(hit("fact", &fact.fact));
                }
            }
        }
        None
    }
}

/// `vc_*` style patterns in `suppresses`.
fn glob_matches(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => pattern == id,
    }
}

/// Rule ids as declared, for `suppresses` targets: exact ids, and `prefix*` patterns by binary search.
struct RuleIds {
    sorted: Vec<String>,
}

impl RuleIds {
    fn new(specs: &[config::RuleSpec]) -> RuleIds {
        let mut sorted: Vec<String> = specs.iter().map(|s| s.id.clone()).collect();
        sorted.sort_unstable();
        RuleIds { sorted }
    }

    fn any_matches(&self, pattern: &str) -> bool {
        let prefix = pattern.strip_suffix('*').unwrap_or(pattern);
        let first = self.sorted.partition_point(|id| id.as_str() < prefix);
        self.sorted
            .get(first)
            .is_some_and(|id| glob_matches(pattern, id))
    }
}

fn compile_rules(
    specs: Vec<config::RuleSpec>,
    source: &config::SourceFile,
    registry: &PackRegistry,
    errors: &mut Vec<ConfigError>,
) -> Vec<Rule> {
    let ids = RuleIds::new(&specs);
    let lines = config::ItemLines::new(&source.text, "id");
    let mut seen = HashSet::new();
    let mut rules = Vec::new();
    for spec in specs {
        let start = errors.len();
        let mut error = |field: &str, message: String| {
            errors.push(ConfigError {
                file: source.display.clone(),
                line: lines.locate(&spec.id, Some(field)),
                field: Some(format!("{}.{field}", spec.id)),
                message,
            })
        };
        if !packs::valid_id(&spec.id) {
            error(
                "id",
                format!(
                    "rule id {:?} must be letters, digits, '_', '-', '.' or ':'",
                    spec.id
                ),
            );
        }
        if !seen.insert(spec.id.clone()) {
            error("id", format!("rule {:?} is defined twice", spec.id));
        }
        let keywords = compile_keywords(&spec.keywords, &mut error);
        if !(spec.keyword_weight.is_finite() && spec.keyword_weight > 0.0) {
            error(
                "keyword_weight",
                format!("must be a number above 0, not {}", spec.keyword_weight),
            );
        }
        if !(spec.min_confidence.is_finite() && spec.min_confidence >= 0.0) {
            error(
                "min_confidence",
                format!("must be a number ≥ 0, not {}", spec.min_confidence),
            );
        }
        if spec.pack_type.trim().is_empty() {
            error("pack_type", "must not be empty".into());
        }
        // A broken profile is reported with the profile itself.
        let broken_profile = registry.is_broken_profile(&spec.consumer_profile);
        let primary_pack = match registry.profile_pack(&spec.consumer_profile) {
            Some(pack) => registry.index_of(pack),
            None if broken_profile => None,
            None => {
                error(
                    "consumer_profile",
                    format!(
                        "consumer profile {:?} is not in the pack registry's consumer_profiles",
                        spec.consumer_profile
                    ),
                );
                None
            }
        };
        let boosts: Vec<Boost> = spec
            .entity_boosts
            .iter()
            .enumerate()
            .map(|(i, b)| compile_boost(i, b, &ids, &mut error))
            .collect();
        if broken_profile || errors.len() > start {
            continue;
        }
        rules.push(Rule {
            id: spec.id,
            pack_type: spec.pack_type,
            scope: spec.scope,
            keywords,
            substring: spec.keyword_match == KeywordMatch::Substring,
            keyword_weight: to_milli(spec.keyword_weight),
            min_confidence: to_milli(spec.min_confidence),
            boosts,
            primary_pack: primary_pack.unwrap_or_default(),
            additional: vec![],
        });
    }
    rules
}

/// A rule's keywords, normalized, without duplicates (in linear time: a rule may have 100,000).
fn compile_keywords(keywords: &[String], error: &mut impl FnMut(&str, String)) -> Vec<String> {
    let mut seen = HashSet::with_capacity(keywords.len());
    let mut compiled = Vec::with_capacity(keywords.len());
    let mut empty = 0;
    for keyword in keywords {
        let normalized = text::normalize(keyword);
        if normalized.is_empty() {
            empty += 1;
        } else if seen.insert(normalized.clone()) {
            compiled.push(normalized);
        }
    }
    match empty {
        0 => {}
        1 => error("keywords", "a keyword is empty".into()),
        n => error("keywords", format!("{n} keywords are empty")),
    }
    if keywords.is_empty() {
        error(
            "keywords",
            "a rule needs at least one keyword (a rule is a candidate only when one matches)"
                .into(),
        );
    }
    compiled
}

fn compile_boost(
    i: usize,
    spec: &config::BoostSpec,
    ids: &RuleIds,
    error: &mut impl FnMut(&str, String),
) -> Boost {
    let mut compile = |field: &str, pattern: &Option<String>| -> Option<Regex> {
        let pattern = pattern.as_ref()?;
        if pattern.len() > REGEX_MAX_LEN {
            error(
                field,
                format!("entity_boosts[{i}]: pattern longer than {REGEX_MAX_LEN} characters"),
            );
            return None;
        }
        match RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
        {
            Ok(re) => Some(re),
            Err(e) => {
                error(
                    field,
                    format!("entity_boosts[{i}]: invalid pattern {pattern:?}: {e}"),
                );
                None
            }
        }
    };
    let summary = compile("summary_pattern", &spec.summary_pattern);
    let fact = compile("fact_pattern", &spec.fact_pattern);
    if spec.summary_pattern.is_none() && spec.fact_pattern.is_none() {
        error(
            "entity_boosts",
            format!("entity_boosts[{i}] needs a summary_pattern or a fact_pattern"),
        );
    }
    if !(spec.weight.is_finite() && spec.weight >= 0.0) {
        error(
            "weight",
            format!(
                "entity_boosts[{i}]: weight must be ≥ 0 (boosts only add), not {}",
                spec.weight
            ),
        );
    }
    for target in &spec.suppresses {
        if !ids.any_matches(target) {
            error(
                "suppresses",
                format!("entity_boosts[{i}]: suppresses {target:?}, which names no rule"),
            );
        }
    }
    Boost {
        summary,
        fact,
        weight: to_milli(spec.weight),
        suppresses: spec.suppresses.clone(),
    }
}

fn attach_compositions(
    specs: Vec<config::CompositionSpec>,
    source: &config::SourceFile,
    registry: &PackRegistry,
    declared_rules: Option<&HashSet<String>>,
    rules: &mut [Rule],
    warnings: &mut Vec<String>,
    errors: &mut Vec<ConfigError>,
) {
    let lines = config::ItemLines::new(&source.text, "primary_intent");
    let rule_index: HashMap<String, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    let mut seen = HashSet::new();
    for spec in specs {
        let mut error = |field: &str, message: String| {
            errors.push(ConfigError {
                file: source.display.clone(),
                line: lines.locate(&spec.primary_intent, Some(field)),
                field: Some(format!("{}.{field}", spec.primary_intent)),
                message,
            })
        };
        if !seen.insert(spec.primary_intent.clone()) {
            error(
                "primary_intent",
                format!("two composition rules for {:?}", spec.primary_intent),
            );
            continue;
        }
        let Some(&index) = rule_index.get(&spec.primary_intent) else {
            // Unknown only when the rules file was read: else its own error says why.
            if declared_rules.is_some_and(|declared| !declared.contains(&spec.primary_intent)) {
                error(
                    "primary_intent",
                    format!("{:?} is not an intent rule id", spec.primary_intent),
                );
            }
            continue;
        };
        let rule = &mut rules[index];
        for (i, extra) in spec.inject_additional.iter().enumerate() {
            let (label, pack) = match resolve_additional(i, extra, registry) {
                Ok(resolved) => resolved,
                Err((field, message)) => {
                    error(field, message);
                    continue;
                }
            };
            if let Err(why) = &pack {
                warnings.push(format!(
                    "composition for {}: {label} unavailable ({why})",
                    rule.id
                ));
            }
            rule.additional.push(Additional {
                label,
                mode: extra.mode.clone(),
                required: extra.required,
                pack,
            });
        }
    }
}

/// The pack an `inject_additional` entry names: its label, and its registry index or why no pack
/// fits (a warning: the pack is unavailable). Err is a configuration error: field and message.
fn resolve_additional(
    i: usize,
    extra: &config::AdditionalSpec,
    registry: &PackRegistry,
) -> Result<(String, Result<usize, String>), (&'static str, String)> {
    if extra.condition != "always" {
        return Err((
            "condition",
            format!(
                "inject_additional[{i}]: condition {:?} is not supported (v1 supports \"always\")",
                extra.condition
            ),
        ));
    }
    match (&extra.pack, &extra.pack_type) {
        (Some(id), None) => {
            let pack = match (registry.index_of(id), &extra.mode) {
                (None, _) => Err(format!("pack {id} is not in the registry")),
                (Some(p), Some(mode)) if !registry.packs[p].modes.contains(mode) => {
                    Err(format!("pack {id} has no mode {mode}"))
                }
                (Some(p), _) => Ok(p),
            };
            Ok((id.clone(), pack))
        }
        (None, Some(pack_type)) => {
            let fits: Vec<usize> = registry
                .of_type(pack_type)
                .filter(|&p| {
                    extra
                        .mode
                        .as_ref()
                        .is_none_or(|m| registry.packs[p].modes.contains(m))
                })
                .collect();
            let pack = match fits.as_slice() {
                [one] => Ok(*one),
                [] => Err(match &extra.mode {
                    Some(mode) => format!("no registered pack of type {pack_type} has mode {mode}"),
                    None => format!("no pack of type {pack_type} is registered"),
                }),
                many => {
                    let ids: Vec<&str> = many
                        .iter()
                        .map(|&p| registry.packs[p].id.as_str())
                        .collect();
                    return Err((
                        "pack_type",
                        format!(
                            "inject_additional[{i}]: {} packs have type {pack_type} ({}); name one with `pack`",
                            many.len(),
                            ids.join(", ")
                        ),
                    ));
                }
            };
            Ok((pack_type.clone(), pack))
        }
        _ => Err((
            "inject_additional",
            format!("inject_additional[{i}] needs exactly one of pack_type and pack"),
        )),
    }
}

/// One automaton over the distinct keywords of all rules; each pattern knows the rules that own it.
fn build_automaton(
    rules: &[Rule],
) -> Result<(Option<AhoCorasick>, Vec<Vec<KeywordOwner>>), String> {
    let mut patterns: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut owners: Vec<Vec<KeywordOwner>> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        for (k, keyword) in rule.keywords.iter().enumerate() {
            let p = *index.entry(keyword.as_str()).or_insert_with(|| {
                patterns.push(keyword);
                owners.push(Vec::new());
                patterns.len() - 1
            });
            owners[p].push(KeywordOwner {
                rule: r as u32,
                keyword: k as u32,
                substring: rule.substring,
            });
        }
    }
    if patterns.is_empty() {
        return Ok((None, owners));
    }
    let automaton = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&patterns)
        .map_err(|e| format!("cannot build the keyword automaton: {e}"))?;
    Ok((Some(automaton), owners))
}
