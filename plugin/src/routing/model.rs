//! The compiled rules every routing step reads (rules, boosts, composition additions), scores in
//! thousandths, and what a turn's routing returns. Depends on no other part of routing.

use crate::config::Scope;
use crate::routing::decision::Decision;
use regex_automata::Input;
use regex_automata::hybrid;
use regex_automata::nfa::thompson::{NFA, backtrack, pikevm};
use regex_automata::util::pool::Pool;
use std::fmt::Write as _;

pub(super) type Milli = i64;

pub(super) fn to_milli(value: f64) -> Milli {
    (value * 1000.0).round() as Milli
}

pub(super) fn from_milli(value: Milli) -> f64 {
    value as f64 / 1000.0
}

/// A score as traces show it: `{:.2}` of the value. Formatting a float to a precision takes a slow
/// exact path; when the thousandths digit is not 5 the rounding cannot depend on the float's
/// error, so integers give the same text (within 10^12, where that error stays far below 0.001).
pub(super) fn show(value: Milli) -> String {
    let mut out = String::new();
    push_shown(&mut out, value);
    out
}

/// [`show`] appended to `out`, digit by digit in the common case.
fn push_shown(out: &mut String, value: Milli) {
    if (0..1_000_000_000_000_000).contains(&value) && value % 10 != 5 {
        let hundredths = (value + 5) as u64 / 10;
        push_decimal(out, hundredths / 100);
        let cents = (hundredths % 100) as u8;
        out.extend([
            '.',
            char::from(b'0' + cents / 10),
            char::from(b'0' + cents % 10),
        ]);
        return;
    }
    let _ = write!(out, "{:.2}", from_milli(value)); // writing to a String cannot fail
}

fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// A trace line built by appending, for the lines every routed turn writes: `format!` and its
/// machinery were a fifth of a routing call in the component.
pub(super) struct Line(String);

impl Line {
    pub(super) fn new() -> Line {
        Line(String::with_capacity(64))
    }

    pub(super) fn text(mut self, text: &str) -> Line {
        self.0.push_str(text);
        self
    }

    pub(super) fn count(mut self, n: usize) -> Line {
        push_decimal(&mut self.0, n as u64);
        self
    }

    /// A score, as [`show`] writes it.
    pub(super) fn score(mut self, value: Milli) -> Line {
        push_shown(&mut self.0, value);
        self
    }

    /// Items joined with ", ".
    pub(super) fn list(mut self, items: &[String]) -> Line {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.0.push_str(", ");
            }
            self.0.push_str(item);
        }
        self
    }

    pub(super) fn done(self) -> String {
        self.0
    }
}

/// A compiled intent rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub pack_type: String,
    pub scope: Scope,
    pub keywords: Vec<String>,
    /// Keywords match anywhere, not only on word boundaries.
    pub(super) substring: bool,
    pub(super) keyword_weight: Milli,
    pub(super) min_confidence: Milli,
    pub(super) boosts: Vec<Boost>,
    /// Registry index of the primary pack (from the consumer profile).
    pub(super) primary_pack: usize,
    pub(super) additional: Vec<Additional>,
}

#[derive(Debug)]
pub(super) struct Boost {
    pub(super) summary: Option<BoostRegex>,
    pub(super) fact: Option<BoostRegex>,
    pub(super) weight: Milli,
    pub(super) suppresses: Vec<String>,
}

/// A pack a composition rule adds to an intent's primary pack.
#[derive(Debug)]
pub(super) struct Additional {
    /// As the composition rule names it (pack type or pack id).
    pub(super) label: String,
    pub(super) mode: Option<String>,
    pub(super) required: bool,
    /// Registry index, or why no pack fits.
    pub(super) pack: Result<usize, String>,
}

/// What stickiness needs of the previous turn that injected a pack (the session state keeps it).
#[derive(Clone, Copy, Debug, Default)]
pub struct PreviousTurn<'a> {
    /// Its intent id (a pack id is accepted too: the first rule using it).
    pub intent: &'a str,
    /// When it injected the pack, Unix milliseconds; None: unknown (state from an older version).
    pub injected_at_ms: Option<u64>,
    /// Turns in a row that had carried the pack without a keyword, it included; None: unknown,
    /// counted from here.
    pub carried_turns: Option<u32>,
    /// The entity names (lower case) of the turns that injected the pack; None: unknown, none.
    pub named: Option<&'a [String]>,
}

/// A routing decision and the `<pack-context>` block it injects.
#[derive(Clone, Debug, Default)]
pub struct Routed {
    pub decision: Decision,
    pub pack_context: Option<String>,
    /// Things an operator should see in the log (unavailable required packs, size cuts).
    pub notes: Vec<String>,
    /// Turns in a row that carried the pack without a keyword, this one included (0: chosen by
    /// keywords): what the session state keeps for the next turn's stickiness.
    pub carried_turns: u32,
    /// The entity names (lower case) of the turns that injected this pack, this one included: what
    /// the strict follow-up test compares the next prompt with (empty when it is off).
    pub named: Vec<String>,
}

pub(super) fn no_pack(mut decision: Decision, reason: String) -> Routed {
    decision.sticky = false; // nothing is carried over when nothing is injected
    decision.trace.push(format!("no pack: {reason}"));
    decision.no_pack_reason = Some(reason);
    Routed {
        decision,
        ..Routed::default()
    }
}

/// `vc_*` style patterns in `suppresses`.
pub(super) fn glob_matches(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => pattern == id,
    }
}

/// A boost pattern's matcher, for `is_match` only: the engines `regex_automata::meta` would pick
/// for an unanchored `is_match`, minus the reverse NFA and lazy DFA it also builds (they serve
/// match spans, which boosts never ask for).
pub(super) struct BoostRegex {
    pattern: String,
    /// None if it could not be built within the capacity: then the NFA engines answer.
    dfa: Option<hybrid::dfa::DFA>,
    backtrack: backtrack::BoundedBacktracker,
    pikevm: pikevm::PikeVM,
    /// Made on first use: a configuration load builds many, a turn with recall uses few.
    caches: Pool<BoostCaches, Box<dyn Fn() -> BoostCaches + Send + Sync>>,
}

struct BoostCaches {
    dfa: Option<hybrid::dfa::Cache>,
    backtrack: backtrack::Cache,
    pikevm: pikevm::Cache,
}

impl BoostRegex {
    /// `nfa` is forward, without captures; `cache_capacity` bounds the lazy DFA's memory.
    pub(super) fn new(
        pattern: &str,
        nfa: NFA,
        cache_capacity: usize,
    ) -> Result<BoostRegex, String> {
        // As `meta` configures its lazy DFA: it quits on non-ASCII bytes when the pattern has a
        // Unicode word boundary, and gives up when it thrashes; the NFA engines then answer.
        let dfa = hybrid::dfa::Builder::new()
            .configure(
                hybrid::dfa::Config::new()
                    .unicode_word_boundary(true)
                    .cache_capacity(cache_capacity)
                    .minimum_cache_clear_count(Some(3))
                    .minimum_bytes_per_state(Some(10)),
            )
            .build_from_nfa(nfa.clone())
            .ok();
        let backtrack =
            backtrack::BoundedBacktracker::new_from_nfa(nfa.clone()).map_err(|e| e.to_string())?;
        let pikevm = pikevm::PikeVM::new_from_nfa(nfa).map_err(|e| e.to_string())?;
        let (d, b, p) = (dfa.clone(), backtrack.clone(), pikevm.clone());
        let caches = Pool::new(Box::new(move || BoostCaches {
            dfa: d.as_ref().map(|d| d.create_cache()),
            backtrack: b.create_cache(),
            pikevm: p.create_cache(),
        }) as Box<dyn Fn() -> BoostCaches + Send + Sync>);
        Ok(BoostRegex {
            pattern: pattern.into(),
            dfa,
            backtrack,
            pikevm,
            caches,
        })
    }

    pub(super) fn is_match(&self, text: &str) -> bool {
        let input = Input::new(text).earliest(true);
        let mut caches = self.caches.get();
        let caches = &mut *caches;
        if let (Some(dfa), Some(cache)) = (&self.dfa, &mut caches.dfa)
            && let Ok(found) = dfa.try_search_fwd(cache, &input)
        {
            return found.is_some();
        }
        // `meta` lets the backtracker (which does not stop early) answer only for short texts.
        if text.len() <= 128
            && let Ok(found) = self
                .backtrack
                .try_is_match(&mut caches.backtrack, input.clone())
        {
            return found;
        }
        self.pikevm.is_match(&mut caches.pikevm, input)
    }
}

impl std::fmt::Debug for BoostRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoostRegex").field(&self.pattern).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_agrees_with_float_formatting() {
        let mut seed = 0x2545_f491_u64;
        let mut values: Vec<Milli> = (-2000..20_000).collect();
        values.extend([
            999_999_999_999_994,
            999_999_999_999_996,
            10i64.pow(15),
            i64::MAX,
        ]);
        values.extend((0..20_000).map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 10u64.pow(15)) as Milli
        }));
        for value in values {
            assert_eq!(show(value), format!("{:.2}", from_milli(value)), "{value}");
        }
    }
}
