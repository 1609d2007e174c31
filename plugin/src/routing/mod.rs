//! Deterministic intent routing and pack composition (PRD §Intent Detection, §Cross-Pack Composition).
//!
//! Built once per configuration: one Aho-Corasick automaton over every rule's keywords, compiled boost
//! regexes, resolved packs. Per turn: one pass over the prompt, then work proportional to the rules
//! that matched, never to the number of rules.
//!
//! Scores are kept in thousandths (integers), so ties are exact and the same inputs give the same bytes.

use crate::config::{RoutingSettings, Scope};
use crate::decision::{BoostHit, Candidate, Decision, SkippedPack};
use crate::packs::PackRegistry;
use crate::recall::Recall;
use crate::text::{self, escape_attr};
use keywords::Automaton;
use regex::Regex;
use std::collections::HashMap;

/// Limits for rule authors' regexes: a pattern is data from a config file.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_MAX_LEN: usize = 1_000;
/// How much of a matched recalled text the trace shows.
const TRACE_TEXT_CHARS: usize = 80;

mod keywords;
mod load;

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
    automaton: Option<Automaton>,
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
            automaton.for_each_match(normalized.as_bytes(), |pattern, start, end| {
                let owners = &self.owners[pattern];
                let bounded = text::on_word_boundaries(&normalized, start, end);
                hits.extend(
                    owners
                        .iter()
                        .filter(|o| o.substring || bounded)
                        .map(|o| (o.rule, o.keyword)),
                );
            });
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
