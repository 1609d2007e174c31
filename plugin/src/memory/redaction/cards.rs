//! Card numbers: 13 to 19 digits, unbroken or in groups split by one kind of separator (a space, a
//! dash or a dot), with a card network's prefix and length, that pass the Luhn check. A card may
//! stand among other numbers (`12 4111 1111 1111 1111 12/29`, `4111111111111111 123`): the groups
//! are tried in every run of them, the longest card first. A card is never a part of one unbroken
//! longer number, word or token.

use crate::platform::sensitive::{Pattern, pattern};
use std::ops::Range;
use std::sync::OnceLock;

/// 13 digits or more in groups, each separated by at most one space, dash or dot.
pub(super) const CANDIDATE_PATTERN: &str = r"\d(?:[ .-]?\d){12,}";

/// The most groups a card is written in: one digit each.
const MAX_GROUPS: usize = 19;

pub fn card_numbers(text: &str) -> Vec<Range<usize>> {
    static CANDIDATE: OnceLock<Pattern> = OnceLock::new();
    let mut cards = Vec::new();
    for run in pattern(&CANDIDATE, CANDIDATE_PATTERN).find_all(text) {
        let glued_before = glued_before(text, run.start);
        let glued_after = glued_after(text, run.end);
        let groups = groups(text, run.clone());
        let mut first = 0;
        while first < groups.len() {
            let card = (first..groups.len().min(first + MAX_GROUPS))
                .rev()
                .find(|&last| {
                    let glued =
                        first == 0 && glued_before || last == groups.len() - 1 && glued_after;
                    !glued && is_card_number(&text[groups[first].start..groups[last].end])
                });
            match card {
                Some(last) => {
                    cards.push(groups[first].start..groups[last].end);
                    first = last + 1;
                }
                None => first += 1,
            }
        }
    }
    cards
}

fn groups(text: &str, run: Range<usize>) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let mut start = run.start;
    for (at, b) in text[run.clone()].bytes().enumerate() {
        if !b.is_ascii_digit() {
            groups.push(start..run.start + at);
            start = run.start + at + 1;
        }
    }
    groups.push(start..run.end);
    groups
}

/// Joined to what comes before: a letter, digit or token character, or a decimal number's point.
fn glued_before(text: &str, at: usize) -> bool {
    let mut before = text[..at].chars().rev();
    before.next().is_some_and(|c| {
        joins(c) || matches!(c, '.' | ',') && before.next().is_some_and(|p| p.is_ascii_digit())
    })
}

/// Joined to what comes after; a sentence may end right after the number, a decimal may not go on.
fn glued_after(text: &str, at: usize) -> bool {
    let mut after = text[at..].chars();
    after.next().is_some_and(|c| {
        joins(c) || matches!(c, '.' | ',') && after.next().is_some_and(|n| n.is_ascii_digit())
    })
}

fn joins(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '/' | '-' | '+')
}

fn is_card_number(text: &str) -> bool {
    let separators: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_digit()).collect();
    if separators.windows(2).any(|pair| pair[0] != pair[1]) {
        return false;
    }
    let digits: Vec<u32> = text.chars().filter_map(|c| c.to_digit(10)).collect();
    (13..=19).contains(&digits.len()) && issuer_accepts(&digits) && luhn_valid(&digits)
}

/// The lengths card networks issue under a prefix (Visa, Mastercard, American Express, Discover,
/// JCB, Diners Club, UnionPay, Maestro).
fn issuer_accepts(digits: &[u32]) -> bool {
    let prefix = |n: usize| digits.iter().take(n).fold(0, |acc, d| acc * 10 + d);
    let len = digits.len();
    match digits.first() {
        Some(4) => matches!(len, 13 | 16 | 19),
        Some(2) => (2221..=2720).contains(&prefix(4)) && len == 16,
        Some(3) => match prefix(2) {
            34 | 37 => len == 15,
            35 => (3528..=3589).contains(&prefix(4)) && (16..=19).contains(&len),
            36 | 38 | 39 => (14..=19).contains(&len),
            30 => (300..=305).contains(&prefix(3)) && (14..=19).contains(&len),
            _ => false,
        },
        Some(5) => match prefix(2) {
            51..=55 => len == 16,
            50 | 56..=59 => (12..=19).contains(&len),
            _ => false,
        },
        Some(6) => (13..=19).contains(&len),
        _ => false,
    }
}

pub(super) fn luhn_valid(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2, d * 2) {
            (0, _) => d,
            (_, doubled) if doubled > 9 => doubled - 9,
            (_, doubled) => doubled,
        })
        .sum();
    sum.is_multiple_of(10) && digits.iter().any(|&d| d != digits[0])
}
