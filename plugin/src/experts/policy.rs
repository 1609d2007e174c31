//! Approval tiers and their resolution (spec §3 `policy`), and the spec's human-readable durations.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An approval tier. Ordered from least to most strict, so `max` is the stricter one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Auto,
    Confirm,
    Manual,
}

impl Tier {
    pub fn parse(text: &str) -> Option<Tier> {
        match text {
            "auto" => Some(Tier::Auto),
            "confirm" => Some(Tier::Confirm),
            "manual" => Some(Tier::Manual),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Auto => "auto",
            Tier::Confirm => "confirm",
            Tier::Manual => "manual",
        }
    }
}

/// What happens when a `confirm` request waits longer than the approval timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnTimeout {
    /// The request is void; the step failed (spec default).
    #[default]
    Reject,
    /// The request stays open and is flagged for the human, who may still approve it late.
    Escalate,
}

/// The package's resolved policy block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `policy.approval.default`, or `confirm` when absent (spec: the safe default).
    pub default: Tier,
    /// `policy.approval.overrides`, keyed `tool.operation`.
    pub overrides: BTreeMap<String, Tier>,
    /// `policy.approval.timeout` in seconds; `None` = no timeout.
    pub timeout_secs: Option<u64>,
    /// The timeout as the author wrote it (`24h`), for messages.
    pub timeout_text: Option<String>,
    pub on_timeout: OnTimeout,
    /// `policy.escalation.on_low_confidence` (spec default: true).
    pub escalate_on_low_confidence: bool,
    /// `policy.escalation.on_manual_ready` (spec default: true).
    pub notify_on_manual_ready: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            default: Tier::Confirm,
            overrides: BTreeMap::new(),
            timeout_secs: None,
            timeout_text: None,
            on_timeout: OnTimeout::Reject,
            escalate_on_low_confidence: true,
            notify_on_manual_ready: true,
        }
    }
}

impl Policy {
    /// The effective tier of `tool.operation`: override, else the policy default (itself `confirm` when
    /// no policy is declared). The `approval` field of tool files plays no part.
    pub fn tier(&self, operation: &str) -> Tier {
        self.overrides
            .get(operation)
            .copied()
            .unwrap_or(self.default)
    }

    /// The tier of a call that is not a declared operation of the package: never looser than `confirm`
    /// (spec: "unknown or undeclared operations always pause for human review").
    pub fn tier_of_unknown(&self) -> Tier {
        self.default.max(Tier::Confirm)
    }

    /// The approval timeout as written, else rendered from seconds.
    pub fn timeout_display(&self) -> Option<String> {
        self.timeout_text
            .clone()
            .or_else(|| self.timeout_secs.map(format_duration))
    }
}

/// Parses a duration such as `30s`, `10m`, `24h`, `7d` or `1h30m` into seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let bad = || format!("{text:?} is not a duration such as 30s, 10m, 24h or 7d");
    if t.is_empty() {
        return Err(bad());
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
    }
    if !digits.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

/// Renders seconds the way the spec writes durations (`1d`, `90m`, `45s`).
pub fn format_duration(secs: u64) -> String {
    for (unit, size) in [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs >= size && secs.is_multiple_of(size) {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        for (text, secs) in [
            ("30s", 30),
            ("30m", 1800),
            ("24h", 86_400),
            ("7d", 604_800),
            ("1h30m", 5400),
            ("0m", 0),
        ] {
            assert_eq!(parse_duration(text), Ok(secs), "{text}");
        }
        for bad in [
            "",
            "24",
            "h",
            "1.5h",
            "10 min",
            "-1h",
            "99999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(format_duration(86_400), "1d");
        assert_eq!(format_duration(5400), "90m");
        assert_eq!(format_duration(61), "61s");
    }

    #[test]
    fn unknown_operations_are_never_looser_than_confirm() {
        let mut policy = Policy {
            default: Tier::Auto,
            ..Policy::default()
        };
        assert_eq!(policy.tier_of_unknown(), Tier::Confirm);
        policy.default = Tier::Manual;
        assert_eq!(policy.tier_of_unknown(), Tier::Manual);
    }
}
