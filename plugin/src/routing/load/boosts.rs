//! Compiling a rule's entity boosts: size-limited, case-insensitive regexes, a weight that only adds,
//! and `suppresses` targets checked against the declared rule ids.
//!
//! Boosts only ask whether a pattern matches a recalled summary or fact, a few hundred bytes, so
//! they are built without the literal prefilters the `regex` crate always builds: for patterns like
//! `\b(restaurant|bistro|wine bar)\b`, case-insensitive, extracting the literals and building their
//! Aho-Corasick automaton was four fifths of loading the example configuration.

use crate::config;
use crate::routing::model::{Boost, BoostRegex, glob_matches, to_milli};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_syntax::hir;

/// Limits for rule authors' regexes: a pattern is data from a config file.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_MAX_LEN: usize = 1_000;

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

/// Compiles the boosts of one rules file. One Thompson compiler serves every pattern: each
/// compiler allocates and zeroes a 10,000-entry UTF-8 state map on its first Unicode class, and
/// case-insensitive patterns all have one.
pub(super) struct BoostCompiler {
    ids: RuleIds,
    nfa: thompson::Compiler,
    /// Builds each pattern's reverse NFA only to hold it to the size limit, as `meta` did: it is
    /// often twice the forward one (natively, `\w{30}` passes the forward limit but not this one).
    reverse: thompson::Compiler,
}

impl BoostCompiler {
    pub(super) fn new(specs: &[config::RuleSpec]) -> BoostCompiler {
        // What `meta` gives its forward and reverse NFAs.
        let config = thompson::Config::new()
            .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
            .which_captures(WhichCaptures::None);
        let mut nfa = thompson::Compiler::new();
        nfa.configure(config.clone());
        let mut reverse = thompson::Compiler::new();
        reverse.configure(config.reverse(true));
        BoostCompiler {
            ids: RuleIds::new(specs),
            nfa,
            reverse,
        }
    }

    pub(super) fn compile(
        &self,
        i: usize,
        spec: &config::BoostSpec,
        error: &mut impl FnMut(&str, String),
    ) -> Boost {
        let mut compile = |field: &str, pattern: &Option<String>| -> Option<BoostRegex> {
            let pattern = pattern.as_ref()?;
            if pattern.len() > REGEX_MAX_LEN {
                error(
                    field,
                    format!("entity_boosts[{i}]: pattern longer than {REGEX_MAX_LEN} characters"),
                );
                return None;
            }
            match self.pattern(pattern) {
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
            if !self.ids.any_matches(target) {
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

    /// A boost pattern, case-insensitive, unanchored, Unicode. Errors read as the `regex` crate's.
    fn pattern(&self, pattern: &str) -> Result<BoostRegex, String> {
        let hir = translate(pattern, true)?;
        let nfa_error = |e: thompson::BuildError| match e.size_limit() {
            Some(limit) => format!("Compiled regex exceeds size limit of {limit} bytes."),
            None => e.to_string(),
        };
        let nfa = self.nfa.build_from_hir(&hir).map_err(nfa_error)?;
        self.reverse.build_from_hir(&hir).map_err(nfa_error)?;
        BoostRegex::new(pattern, nfa, REGEX_SIZE_LIMIT)
    }
}

/// `pattern` parsed and translated by regex-syntax, with its Unicode tables: property classes and
/// simple case folding.
fn translate(pattern: &str, case_insensitive: bool) -> Result<hir::Hir, String> {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::{BoostCompiler, REGEX_SIZE_LIMIT};
    use crate::routing::model::BoostRegex;
    use proptest::prelude::*;
    use regex_automata::meta;
    use regex_automata::nfa::thompson::WhichCaptures;
    use regex_automata::util::syntax;

    fn compile_pattern(pattern: &str) -> Result<BoostRegex, String> {
        BoostCompiler::new(&[]).pattern(pattern)
    }

    #[test]
    fn patterns_match_case_insensitively_with_unicode_classes() {
        let re = compile_pattern(r"\b(café|\p{Greek}+)\b").unwrap();
        assert!(re.is_match("Dinner at CAFÉ Central"));
        assert!(re.is_match("a note in ΑΘΗΝΑ"));
        assert!(!re.is_match("cafeteria"));
        assert!(compile_pattern(r"\w+\s\d").unwrap().is_match("zoë 7"));
    }

    #[test]
    fn a_pattern_the_component_cannot_build_gets_an_error_that_says_why() {
        let unclosed = compile_pattern(r"(chef").unwrap_err();
        assert!(unclosed.contains("unclosed group"), "{unclosed}");
        let huge = compile_pattern(r"\w{1000}\w{1000}\w{1000}").unwrap_err();
        assert!(huge.contains("exceeds size limit"), "{huge}");
    }

    #[test]
    fn one_compiler_builds_many_patterns_each_its_own() {
        let compiler = BoostCompiler::new(&[]);
        let chef = compiler.pattern(r"\b(chef|sommelier)\b").unwrap();
        assert!(compiler.pattern(r"(chef").is_err());
        let greek = compiler.pattern(r"\p{Greek}+ café").unwrap();
        let word = compiler.pattern(r"\bstartup\b").unwrap();
        assert!(chef.is_match("the CHEF at Noma") && !chef.is_match("café ΑΘΗΝΑ"));
        assert!(greek.is_match("ΑΘΗΝΑ CAFÉ") && !greek.is_match("the chef"));
        assert!(word.is_match("a Startup") && !word.is_match("startups"));
    }

    #[test]
    fn the_size_limit_is_the_meta_regexs() {
        let compiler = BoostCompiler::new(&[]);
        for n in [15, 20, 21, 25, 30, 50, 60] {
            for class in [r"\w", r"\d", "é"] {
                let pattern = format!("{class}{{{n}}}");
                let meta = meta_builder().build(&pattern).is_ok();
                assert_eq!(compiler.pattern(&pattern).is_ok(), meta, "{pattern}");
            }
        }
        assert!(compiler.pattern(r"\w{30}").is_err());
    }

    /// The `meta` regex the component used before: boosts must answer and fail as it did.
    fn meta_builder() -> meta::Builder {
        let mut builder = meta::Builder::new();
        builder
            .syntax(syntax::Config::new().case_insensitive(true))
            .configure(
                meta::Config::new()
                    .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                    .hybrid_cache_capacity(REGEX_SIZE_LIMIT)
                    .which_captures(WhichCaptures::None)
                    .auto_prefilter(false),
            );
        builder
    }

    const PATTERNS: &[&str] = &[
        r"\b(restaurant|bistro|wine bar|chef)\b",
        r"\b(chef|sommelier) at\b",
        r"café|straße",
        r"\bk\w*s\b",
        r"^ab|yz$",
        r"\B(ss)\B",
        r"(?-u:\b)é",
        r"x*",
        r"\p{Greek}{2}\s\d",
    ];

    proptest! {
        #[test]
        fn boosts_match_as_the_meta_regex_did(
            text in "[a-zA-Z0-9 éÉßſK\u{212A}ΑΘ@]{0,300}",
            suffix in "(chef at|STRASSE|café|ks|yz|αθ 7)?",
        ) {
            let compiler = BoostCompiler::new(&[]);
            let text = format!("{text}{suffix}");
            for pattern in PATTERNS {
                let ours = compiler.pattern(pattern).unwrap().is_match(&text);
                prop_assert_eq!(ours, meta_builder().build(pattern).unwrap().is_match(&text), "{:?} on {:?}", pattern, text);
            }
        }
    }
}
