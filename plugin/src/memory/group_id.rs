//! The Graphiti group a conversation's memories belong to: the templates over the hook context and
//! their rendering into a group id. Hooks, tools and commands all resolve it here, so a tool or a
//! slash command reads and writes the same group as the turns of its chat.

pub use crate::config::group_ids::{GroupIdSettings, check_group_template};
use crate::platform::api::{ChatType, HookContext};
use sha2::{Digest, Sha256};

/// A value longer than this is shortened (and so gets a digest suffix).
const MAX_VALUE_CHARS: usize = 120;
/// Hex digits of SHA-256 in a digest suffix: 64 bits, so distinct values do not meet by chance.
const DIGEST_HEX_DIGITS: usize = 16;
/// Kept of a shortened value, before its digest suffix.
const SHORTENED_CHARS: usize = 64;
/// The group of a session whose sender or chat is unknown: that session's own, shared with nothing.
const SESSION_TEMPLATE: &str = "session-{session}";

/// The values a group template is filled from, each as the host gave it or as OpenClaw derives it
/// from the session key.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Conversation<'a> {
    pub agent: Option<&'a str>,
    pub sender: Option<&'a str>,
    pub chat: Option<&'a str>,
    pub channel: Option<&'a str>,
    pub session: Option<&'a str>,
}

impl<'a> Conversation<'a> {
    /// Fields first; what a surface does not carry (a tool has no chat id, a command no agent id)
    /// comes from the session key, which every surface has.
    pub fn of(ctx: &'a HookContext) -> Conversation<'a> {
        let session = present(&ctx.session_key).or(present(&ctx.session_id));
        let key = ctx
            .session_key
            .as_deref()
            .map(SessionKey::parse)
            .unwrap_or_default();
        Conversation {
            agent: present(&ctx.agent_id).or(key.agent),
            sender: present(&ctx.sender_id).or(key.direct_peer),
            chat: present(&ctx.chat_id).or(key.group_peer),
            channel: present(&ctx.channel).or(key.channel),
            session,
        }
    }

    fn value(&self, placeholder: &str) -> Option<&'a str> {
        match placeholder {
            "{agent}" => self.agent,
            "{sender}" => self.sender,
            "{chat}" => self.chat,
            "{channel}" => self.channel,
            "{session}" => self.session,
            _ => None,
        }
    }
}

fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.trim().is_empty())
}

/// What an OpenClaw session key says of its conversation: `agent:<agent>:<rest>`, where the rest's
/// canonical shapes are `direct:<peer>`, `<channel>:<kind>:<peer>` and
/// `<channel>:<account>:<kind>:<peer>` (kinds `direct`, `dm`, `group`, `channel`), as OpenClaw's
/// own session-key parser reads them. A `:thread:` or `:topic:` tail belongs to the same chat.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SessionKey<'a> {
    pub agent: Option<&'a str>,
    pub channel: Option<&'a str>,
    pub direct_peer: Option<&'a str>,
    pub group_peer: Option<&'a str>,
}

impl<'a> SessionKey<'a> {
    pub fn parse(key: &'a str) -> SessionKey<'a> {
        let mut parsed = SessionKey::default();
        let Some(rest) = strip_prefix_ignore_case(key.trim(), "agent:") else {
            return parsed;
        };
        let Some((agent, rest)) = rest.split_once(':') else {
            return parsed;
        };
        parsed.agent = Some(agent).filter(|a| !a.trim().is_empty());
        let rest = cut_at_marker(cut_at_marker(rest, ":thread:"), ":topic:");
        let parts: Vec<&str> = rest.splitn(4, ':').collect();
        let kind_at = if is_direct(parts[0]) {
            Some(0)
        } else {
            (1..=2).find(|&i| parts.get(i).is_some_and(|p| is_direct(p) || is_group(p)))
        };
        let Some(at) = kind_at else {
            return parsed;
        };
        // The peer is everything after the kind: ids such as Matrix rooms contain colons.
        let prefix: usize = parts[..=at].iter().map(|p| p.len() + 1).sum();
        let Some(peer) = rest.get(prefix..).filter(|p| !p.trim().is_empty()) else {
            return parsed;
        };
        if at > 0 {
            parsed.channel = Some(parts[0]);
        }
        if is_direct(parts[at]) {
            parsed.direct_peer = Some(peer);
        } else {
            parsed.group_peer = Some(peer);
        }
        parsed
    }
}

fn is_direct(kind: &str) -> bool {
    kind.eq_ignore_ascii_case("direct") || kind.eq_ignore_ascii_case("dm")
}

fn is_group(kind: &str) -> bool {
    kind.eq_ignore_ascii_case("group") || kind.eq_ignore_ascii_case("channel")
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn cut_at_marker<'a>(text: &'a str, marker: &str) -> &'a str {
    let lower = text.to_ascii_lowercase();
    match lower.rfind(marker) {
        Some(at) => &text[..at],
        None => text,
    }
}

/// The Graphiti `group_id` for a conversation: the direct or the group template filled from it.
/// When a value the template names is unknown, the session's own group, never one shared with
/// other conversations; an error when the session is unknown too.
pub fn group_id(templates: &GroupIdSettings, ctx: &HookContext) -> Result<String, String> {
    with_literals(templates, |literals| {
        rendered(templates, ctx, &|value| clean_value_among(value, literals))
    })
}

/// The group id of a conversation whose every templated value is known, or why not: an import
/// gives a message to no session's own group, since under OpenClaw's default `session.dmScope:
/// main` one session holds every direct chat.
pub fn group_id_of_known(templates: &GroupIdSettings, ctx: &HookContext) -> Result<String, String> {
    let conversation = Conversation::of(ctx);
    let template = if ctx.chat_type == ChatType::Group {
        &templates.group
    } else {
        &templates.direct
    };
    with_literals(templates, |literals| {
        fill(template, &conversation, &|value| {
            clean_value_among(value, literals)
        })
    })
    .map_err(|missing| {
        format!(
            "OpenClaw recorded no {} for it: its group is unknown, so it is given to nobody",
            missing.join(" and ")
        )
    })
}

/// Runs `f` with the templates' literals, worked out once for as long as the templates stay the
/// same (every turn asks).
fn with_literals<T>(templates: &GroupIdSettings, f: impl FnOnce(&[String]) -> T) -> T {
    thread_local! {
        static KNOWN: std::cell::RefCell<Option<(String, String, Vec<String>)>> =
            const { std::cell::RefCell::new(None) };
    }
    KNOWN.with_borrow_mut(|known| {
        let current = known.as_ref().is_some_and(|(direct, group, _)| {
            *direct == templates.direct && *group == templates.group
        });
        if !current {
            *known = Some((
                templates.direct.clone(),
                templates.group.clone(),
                literals(templates),
            ));
        }
        f(&known.as_ref().expect("just set").2)
    })
}

/// The group id as the rule before separator-aware values computed it (a value holding a
/// template's own separator, such as `-dm-`, was kept as it was): what `group-ids` and a whole
/// chat's forget compare against.
pub fn previous_group_id(templates: &GroupIdSettings, ctx: &HookContext) -> Result<String, String> {
    rendered(templates, ctx, &clean_value)
}

fn rendered(
    templates: &GroupIdSettings,
    ctx: &HookContext,
    clean: &dyn Fn(&str) -> String,
) -> Result<String, String> {
    let conversation = Conversation::of(ctx);
    let template = if ctx.chat_type == ChatType::Group {
        &templates.group
    } else {
        &templates.direct
    };
    let missing = match fill(template, &conversation, clean) {
        Ok(group) => return Ok(group),
        Err(missing) => missing,
    };
    fill(SESSION_TEMPLATE, &conversation, clean).map_err(|_| {
        format!(
            "this conversation's {} unknown, and so is its session: \
             its memories have no group of their own",
            match missing.as_slice() {
                [one] => format!("{one} is"),
                many => format!("{} are", many.join(" and ")),
            }
        )
    })
}

/// The template with each placeholder's value cleaned on its own, or the values that are missing.
fn fill(
    template: &str,
    conversation: &Conversation,
    clean: &dyn Fn(&str) -> String,
) -> Result<String, Vec<String>> {
    let mut out = String::new();
    let mut missing = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&clean_literal(&rest[..open]));
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        let placeholder = &rest[open..close];
        match conversation.value(placeholder) {
            Some(value) => out.push_str(&clean(value)),
            None => missing.push(format!("{} id", placeholder.trim_matches(['{', '}']))),
        }
        rest = &rest[close..];
    }
    out.push_str(&clean_literal(rest));
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// The literal text of every template (before, between and after its placeholders), cleaned:
/// the separators a value must not be mistaken for.
fn literals(templates: &GroupIdSettings) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for template in [
        templates.direct.as_str(),
        templates.group.as_str(),
        SESSION_TEMPLATE,
    ] {
        let mut rest = template;
        loop {
            let (literal, after) = match rest.find('{') {
                Some(open) => {
                    let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
                    (&rest[..open], Some(&rest[close..]))
                }
                None => (rest, None),
            };
            let literal = clean_literal(literal);
            if !literal.is_empty() && !out.contains(&literal) {
                out.push(literal);
            }
            match after {
                Some(after) => rest = after,
                None => break,
            }
        }
    }
    out
}

/// Whether `value`, set beside the templates' literals, could be read another way: it holds one
/// of them, or one of its ends and a literal beside it together spell one.
fn ambiguous(value: &str, literals: &[String]) -> bool {
    literals.iter().any(|m| {
        value.contains(m.as_str())
            || literals
                .iter()
                .any(|beside| straddles(value.as_bytes(), beside.as_bytes(), m.as_bytes()))
    })
}

/// Whether literal `m` occurs across the edge of `value` and a literal `beside` it: starting in
/// `value` when `beside` follows it, or ending in `value` when `beside` comes before it. An
/// occurrence that would run past the two (into whatever comes next) counts too.
fn straddles(value: &[u8], beside: &[u8], m: &[u8]) -> bool {
    let starts_in_value = (0..value.len()).any(|at| agrees(&value[at..], beside, m));
    let ends_in_value =
        (1..beside.len()).any(|at| at + m.len() > beside.len() && agrees(&beside[at..], value, m));
    starts_in_value || ends_in_value
}

/// Whether `first` then `second` and `m` agree for as long as both go on.
fn agrees(first: &[u8], second: &[u8], m: &[u8]) -> bool {
    let head = first.len().min(m.len());
    if first[..head] != m[..head] {
        return false;
    }
    let rest = &m[head..];
    let tail = second.len().min(rest.len());
    second[..tail] == rest[..tail]
}

/// A value as Graphiti accepts it and one-to-one among the templates' literals: kept as it is when
/// [`clean_value`] would keep it and no literal can be read into it; otherwise the first of
/// [`clean_value`]'s form, the same with `-` written `_`, or a bare digest that cannot be.
fn clean_value_among(raw: &str, literals: &[String]) -> String {
    let cleaned = clean_value(raw);
    if !ambiguous(&cleaned, literals) {
        return cleaned;
    }
    let digest = digest_hex(raw);
    let underscored = format!("{}-{digest}", kept_of(raw, |c| c.is_ascii_alphanumeric()));
    if !ambiguous(&underscored, literals) {
        return underscored;
    }
    format!("x{digest}")
}

fn clean_literal(text: &str) -> String {
    text.chars()
        .map(|c| if is_group_char(c) { c } else { '_' })
        .collect()
}

fn is_group_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// A value as Graphiti accepts it (`[A-Za-z0-9_-]`), and one-to-one: a value cleaning leaves alone
/// is kept as it is; one it changes or shortens, or that already ends like a digest suffix, gets
/// `-` and 16 hex digits of SHA-256 over the raw value, so two raw values never share a group.
pub fn clean_value(raw: &str) -> String {
    let chars = raw.chars().count();
    if chars <= MAX_VALUE_CHARS && raw.chars().all(is_group_char) && !ends_like_digest(raw) {
        return raw.to_string();
    }
    let kept = kept_of(raw, is_group_char);
    format!("{kept}-{}", digest_hex(raw))
}

/// What a digest suffix follows: the value (its first 64 characters when it is too long), each
/// character `keep` refuses written `_`.
fn kept_of(raw: &str, keep: impl Fn(char) -> bool) -> String {
    let chars = raw.chars().count();
    raw.chars()
        .take(if chars > MAX_VALUE_CHARS {
            SHORTENED_CHARS
        } else {
            chars
        })
        .map(|c| if keep(c) { c } else { '_' })
        .collect()
}

fn digest_hex(raw: &str) -> String {
    Sha256::digest(raw.as_bytes())
        .iter()
        .take(DIGEST_HEX_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn ends_like_digest(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() > DIGEST_HEX_DIGITS
        && bytes[bytes.len() - DIGEST_HEX_DIGITS - 1] == b'-'
        && bytes[bytes.len() - DIGEST_HEX_DIGITS..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// The group id as releases before one-to-one values computed it (every value's unknown as
/// `none`, the whole cleaned and cut to 120 characters): what `group-ids` compares against.
pub fn legacy_group_id(templates: &GroupIdSettings, ctx: &HookContext) -> String {
    let template = if ctx.chat_type == ChatType::Group {
        &templates.group
    } else {
        &templates.direct
    };
    let value = |v: &Option<String>| present(v).unwrap_or("none").to_string();
    let filled = template
        .replace("{agent}", &value(&ctx.agent_id))
        .replace("{sender}", &value(&ctx.sender_id))
        .replace("{chat}", &value(&ctx.chat_id))
        .replace("{channel}", &value(&ctx.channel))
        .replace("{session}", &value(&ctx.session_key));
    let mut out = clean_literal(&filled);
    out.truncate(120);
    if out.is_empty() { "none".into() } else { out }
}

/// A group id the user typed (`recall --group-id`), as Graphiti accepts it, or why not.
pub fn check_group_id(group: &str) -> Result<&str, String> {
    if group.is_empty() {
        return Err("the group id is empty".into());
    }
    match group.chars().find(|&c| !is_group_char(c)) {
        Some(c) => Err(format!(
            "group id {group:?} has {c:?}: Graphiti group ids hold only letters, digits, _ and -"
        )),
        None => Ok(group),
    }
}

/// A text made safe to stand inside a group or episode name (`[A-Za-z0-9_-]`, at most 120
/// characters); not one-to-one, so never a group of its own.
pub fn name_part(raw: &str) -> String {
    let mut out = clean_literal(raw);
    out.truncate(120);
    if out.is_empty() { "none".into() } else { out }
}

#[cfg(test)]
mod tests;
