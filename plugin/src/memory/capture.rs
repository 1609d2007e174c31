//! Picking the exchange to capture after a turn: the last user message and the assistant's answer,
//! with exactly the blocks the plugin itself prepended to that turn removed, and nothing else.
//!
//! How the plugin's blocks are found, deterministically (same inputs, same bytes: P2):
//! 1. `before-agent-start` records, with the session's last turn in the state directory, a digest of
//!    the prompt and exactly what it prepended ([`Injected`]). When this turn's user message is that
//!    prompt, the record decides: what was prepended is removed where it occurs byte for byte (once
//!    from the user message, where OpenClaw puts it; from the assistant's answer wherever the model
//!    echoed it, whole or one block of it); when nothing was prepended, nothing is removed.
//! 2. Without a record for this turn (the process was killed before writing it, no state directory,
//!    another turn of the session recorded since), only a run of well-formed plugin blocks at the very
//!    start of the user message is removed: a block that opens with one of our tags and whose body has
//!    no `<` (ours are always escaped). Text that merely mentions a tag name, anywhere, stays.

use serde_json::Value;

/// Every block the plugin injects.
pub const OUR_BLOCKS: [&str; 3] = ["graphiti-context", "graphiti-fallback", "pack-context"];

/// What `before-agent-start` recorded about the turn it served.
#[derive(Clone, Debug, PartialEq)]
pub struct Injected {
    /// [`prompt_digest`] of the prompt it was given.
    pub prompt_digest: u64,
    /// Exactly what it prepended, if anything.
    pub text: Option<String>,
}

/// A digest of a prompt, to tell whether a record is this turn's.
pub fn prompt_digest(prompt: &str) -> u64 {
    crate::memory::spool::stable_hash(prompt.trim())
}

/// The user's text of this turn: the record's injection removed when it is this turn's record;
/// otherwise the well-formed plugin blocks the text starts with.
pub fn strip_for_turn(text: &str, record: Option<&Injected>) -> String {
    match record {
        Some(Injected {
            text: Some(injected),
            ..
        }) => strip_injected_from_user(text, std::slice::from_ref(injected)),
        Some(Injected {
            text: None,
            prompt_digest: recorded,
        }) if prompt_digest(text) == *recorded => text.trim().to_string(),
        _ => strip_leading_blocks(text),
    }
}

/// Removes the recorded blocks (see the module doc) from the user's text; without a match, the
/// well-formed plugin blocks it starts with.
pub fn strip_injected_from_user(text: &str, injected: &[String]) -> String {
    let mut out = text.to_string();
    let mut found = false;
    for block in injected.iter().filter(|b| !b.is_empty()) {
        if let Some(at) = find_verbatim(&out, block) {
            out.replace_range(at..at + block.len(), "");
            found = true;
        }
    }
    if found {
        trim_separators(&out)
    } else {
        strip_leading_blocks(text)
    }
}

/// Removes verbatim copies of the recorded blocks from the assistant's answer, the whole injection or
/// any one block of it (a model may echo the recalled facts alone); nothing else.
pub fn strip_injected_from_assistant(text: &str, injected: &[String]) -> String {
    let mut out = text.to_string();
    for recorded in injected.iter().filter(|b| !b.is_empty()) {
        out = remove_all(out, recorded);
        for block in blocks_of(recorded) {
            out = remove_all(out, block);
        }
    }
    if out.len() == text.len() {
        out
    } else {
        trim_separators(&out)
    }
}

/// Where `needle` (not empty) first occurs in `haystack`. Not `str::find`: its searcher is built
/// from the whole needle, and an injection is kilobytes, looked for in every answer (a fifth of
/// `agent-end`'s own work in the component). Candidates are where its first byte is (memchr), each
/// compared whole: blocks start with `<`, which plain text has few of.
fn find_verbatim(haystack: &str, needle: &str) -> Option<usize> {
    let (hay, whole) = (haystack.as_bytes(), needle.as_bytes());
    let first = *whole.first()?;
    let last_start = hay.len().checked_sub(whole.len())?;
    let mut from = 0;
    while let Some(found) = memchr::memchr(first, &hay[from..=last_start]) {
        let at = from + found;
        if hay[at..].starts_with(whole) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// `text` with every occurrence of `needle` (not empty) removed, left to right, as
/// `text.replace(needle, "")`; `text` itself when there is none.
fn remove_all(text: String, needle: &str) -> String {
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = find_verbatim(rest, needle) {
        out.push_str(&rest[..at]);
        rest = &rest[at + needle.len()..];
    }
    if rest.len() == text.len() {
        return text;
    }
    out.push_str(rest);
    out
}

/// Removes the well-formed plugin blocks a text starts with (and the white space after them).
pub fn strip_leading_blocks(text: &str) -> String {
    let mut rest = text;
    while let Some(after) = leading_block_end(rest.trim_start()) {
        rest = &rest.trim_start()[after..];
    }
    if rest.len() == text.len() {
        text.to_string()
    } else {
        rest.trim_start().to_string()
    }
}

/// The blocks a recorded injection is made of: it is a run of well-formed blocks.
fn blocks_of(recorded: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = recorded.trim_start();
    while let Some(end) = leading_block_end(rest) {
        blocks.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    blocks
}

/// The end of a well-formed plugin block at the start of `text`: `<name …>` with no `<` in its
/// attributes, a body without `<`, then `</name>`.
fn leading_block_end(text: &str) -> Option<usize> {
    let name = OUR_BLOCKS.into_iter().find(|name| {
        text.strip_prefix('<')
            .and_then(|t| t.strip_prefix(name))
            .and_then(|t| t.chars().next())
            .is_some_and(|c| c == '>' || c.is_whitespace())
    })?;
    let open_end = text.find('>')?;
    if text[1..open_end].contains('<') {
        return None;
    }
    let close = format!("</{name}>");
    let body_end = open_end + 1 + text[open_end + 1..].find('<')?;
    text[body_end..]
        .starts_with(&close)
        .then_some(body_end + close.len())
}

/// The separators a removed block leaves: white space at either end.
fn trim_separators(text: &str) -> String {
    text.trim().to_string()
}

/// The text of one OpenClaw message: `content` as a string or a list of `{type: "text", text}` parts.
pub fn message_text(message: &Value) -> Option<String> {
    match message.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_none_or(|t| t == "text")
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// The line OpenClaw (2026.9, `mergeOrphanedTrailingUserPrompt`) puts before a user message that
/// arrived while another run of the session waited to start: that run takes the message into its own
/// prompt as `{line}\n{message}\n\n{its prompt}`, and the message leaves the transcript.
pub const OPENCLAW_QUEUED_MESSAGE_LINE: &str = "[Queued user message from a previous active turn; preserved as context only. Continue with the active prompt below.]";

/// A user message OpenClaw merged into this turn's: the queued message and the turn's own prompt,
/// split at the first blank line after which `is_prompt` accepts the rest.
fn split_queued<'a>(text: &'a str, is_prompt: &dyn Fn(&str) -> bool) -> Option<(&'a str, &'a str)> {
    let rest = text
        .trim_start()
        .strip_prefix(OPENCLAW_QUEUED_MESSAGE_LINE)?
        .strip_prefix('\n')?;
    rest.match_indices("\n\n")
        .map(|(at, _)| (rest[..at].trim(), &rest[at + 2..]))
        .find(|(queued, prompt)| !queued.is_empty() && is_prompt(prompt))
}

/// The last user message and the last assistant text after it, without the plugin's blocks
/// (`record`: what `before-agent-start` recorded for this session, if anything). A user message
/// OpenClaw merged into the turn's own is the user's too: only OpenClaw's line before it goes.
pub fn last_exchange(
    messages_json: &str,
    record: Option<&Injected>,
) -> Result<(String, String), String> {
    let injected: &[String] = match record {
        Some(Injected {
            text: Some(text), ..
        }) => std::slice::from_ref(text),
        _ => &[],
    };
    let (user, assistant) = last_texts(messages_json, injected)?;
    let user = match split_queued(&user, &|_| true) {
        Some((queued, prompt)) => format!("{queued}\n\n{}", strip_for_turn(prompt, record)),
        None => strip_for_turn(&user, record),
    };
    if user.trim().is_empty() {
        return Err("the user message is empty once the plugin's blocks are removed".into());
    }
    if assistant.trim().is_empty() {
        return Err("no assistant answer after the last user message".into());
    }
    Ok((user, assistant))
}

/// The user's message OpenClaw merged into a delivery turn of this plugin (see
/// [`OPENCLAW_QUEUED_MESSAGE_LINE`]) and the turn's answer (kept without one: the words are the
/// user's); `None` when it carries none.
/// `is_delivery_text` tells the delivery's own text, which follows the user's message.
pub fn queued_in_delivery(
    messages_json: &str,
    is_delivery_text: &dyn Fn(&str) -> bool,
) -> Result<Option<(String, String)>, String> {
    if !messages_json.contains(OPENCLAW_QUEUED_MESSAGE_LINE) {
        return Ok(None);
    }
    let (user, assistant) = last_texts(messages_json, &[])?;
    if !user.trim_start().starts_with(OPENCLAW_QUEUED_MESSAGE_LINE) {
        return Ok(None);
    }
    match split_queued(&user, is_delivery_text) {
        Some((queued, _)) => Ok(Some((queued.to_string(), assistant))),
        None => Err("a user message OpenClaw merged into this delivery turn could not be told apart from the delivery's text: it was NOT captured".into()),
    }
}

/// The last user message as it is, and the last assistant text after it without `injected` (empty
/// when there is none).
fn last_texts(messages_json: &str, injected: &[String]) -> Result<(String, String), String> {
    let messages: Value = if messages_json.trim().is_empty() {
        Value::Array(vec![])
    } else {
        serde_json::from_slice(messages_json.as_bytes())
            .map_err(|e| format!("the message list is not JSON: {e}"))?
    };
    let Some(messages) = messages.as_array() else {
        return Err("the message list must be a JSON array".into());
    };
    let role = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let Some(user_at) = messages.iter().rposition(|m| role(m) == "user") else {
        return Err("no user message in this turn".into());
    };
    let user = message_text(&messages[user_at]).unwrap_or_default();
    let assistant = messages[user_at + 1..]
        .iter()
        .rev()
        .filter(|m| role(m) == "assistant")
        .filter_map(message_text)
        .map(|t| strip_injected_from_assistant(&t, injected))
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default();
    Ok((user, assistant))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCKS: &str = "<graphiti-context group=\"g\">\nfact &lt;b&gt;\n</graphiti-context>\n\n<pack-context intent=\"a\">\nx\n</pack-context>";

    #[test]
    fn the_recorded_blocks_go_and_everything_else_stays() {
        let injected = vec![BLOCKS.to_string()];
        let user = format!(
            "{BLOCKS}\n\nExplain what the `<pack-context>` tag does.\n\n\nAlso remember: my dentist appointment is on Friday at 9"
        );
        assert_eq!(
            strip_injected_from_user(&user, &injected),
            "Explain what the `<pack-context>` tag does.\n\n\nAlso remember: my dentist appointment is on Friday at 9"
        );
        let reply = "Booked. The <graphiti-context> tag wraps recalled facts. Your table is at 8.";
        assert_eq!(strip_injected_from_assistant(reply, &injected), reply);
        let echoed = format!("{BLOCKS}\nBooked for 8.");
        assert_eq!(
            strip_injected_from_assistant(&echoed, &injected),
            "Booked for 8."
        );
    }

    #[test]
    fn without_a_record_only_leading_well_formed_blocks_go() {
        assert_eq!(
            strip_leading_blocks(&format!("{BLOCKS}\n\nHello <b>")),
            "Hello <b>"
        );
        for text in [
            "Explain what the <pack-context> tag does. Also: dentist on Friday at 9",
            "<pack-context intent=\"a\">\ncut off, no closing tag",
            "<pack-context>my own <b>bold</b> text</pack-context> and more",
            "a </graphiti-fallback> b",
            "<pack-contextual>",
        ] {
            assert_eq!(strip_leading_blocks(text), text);
        }
    }

    #[test]
    fn takes_the_last_exchange() {
        let messages = r#"[{"role":"user","content":"old"},{"role":"assistant","content":"old answer"},
            {"role":"user","content":[{"type":"text","text":"<graphiti-context>f</graphiti-context>\n\nnew question"}]},
            {"role":"toolResult","content":"tool"},{"role":"assistant","content":[{"type":"text","text":"new answer"}]}]"#;
        assert_eq!(
            last_exchange(messages, None).unwrap(),
            ("new question".into(), "new answer".into())
        );
        assert!(last_exchange("{}", None).unwrap_err().contains("array"));
        assert!(
            last_exchange(r#"[{"role":"user","content":"q"}]"#, None)
                .unwrap_err()
                .contains("no assistant")
        );
    }

    #[test]
    fn a_message_openclaw_merged_into_the_users_turn_keeps_both_without_its_line() {
        let injected = Injected {
            prompt_digest: 0,
            text: Some(BLOCKS.to_string()),
        };
        let merged = format!(
            "{OPENCLAW_QUEUED_MESSAGE_LINE}\nFirst thing I said.\n\n{BLOCKS}\n\nSecond thing I said."
        );
        let messages = serde_json::json!([
            { "role": "user", "content": merged },
            { "role": "assistant", "content": "Both noted." },
        ]);
        assert_eq!(
            last_exchange(&messages.to_string(), Some(&injected)).unwrap(),
            (
                "First thing I said.\n\nSecond thing I said.".into(),
                "Both noted.".into()
            )
        );
        // Without the line, a text that merely quotes it stays as it is.
        let quoted = format!("Why does OpenClaw write {OPENCLAW_QUEUED_MESSAGE_LINE}?");
        let messages = serde_json::json!([
            { "role": "user", "content": quoted },
            { "role": "assistant", "content": "It merges." },
        ]);
        assert_eq!(
            last_exchange(&messages.to_string(), None).unwrap().0,
            quoted
        );
    }

    #[test]
    fn a_delivery_turn_gives_up_only_the_user_message_before_its_own_text() {
        let delivery = "Result of inv-1.\n\nOutputs: none.";
        let is_delivery = |text: &str| text == delivery;
        let turn = |user: &str| {
            serde_json::json!([
                { "role": "user", "content": user },
                { "role": "assistant", "content": "Relayed." },
            ])
            .to_string()
        };
        let merged = format!("{OPENCLAW_QUEUED_MESSAGE_LINE}\nMine.\n\nAlso mine.\n\n{delivery}");
        assert_eq!(
            queued_in_delivery(&turn(&merged), &is_delivery).unwrap(),
            Some(("Mine.\n\nAlso mine.".into(), "Relayed.".into()))
        );
        assert_eq!(
            queued_in_delivery(&turn(delivery), &is_delivery).unwrap(),
            None
        );
        let quoted = format!("{delivery} {OPENCLAW_QUEUED_MESSAGE_LINE}");
        assert_eq!(
            queued_in_delivery(&turn(&quoted), &is_delivery).unwrap(),
            None
        );
        let unknown = format!("{OPENCLAW_QUEUED_MESSAGE_LINE}\nMine.\n\nSomething else.");
        assert!(queued_in_delivery(&turn(&unknown), &is_delivery).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The memchr-probed search finds what `str::find` finds, and removes what `str::replace`
        /// removes: needles repeated and overlapping, with a shared prefix that fails late, longer
        /// than the text, and multi-byte characters.
        #[test]
        fn verbatim_search_is_str_find_and_replace(
            parts in proptest::collection::vec(0usize..6, 0..24),
            needle_parts in proptest::collection::vec(0usize..6, 1..8),
        ) {
            const PIECES: [&str; 6] = [
                "<graphiti-context group=\"g\">",
                "<graphiti-context group=\"h\">",
                "ab",
                "a",
                "é€",
                "\n",
            ];
            let haystack: String = parts.iter().map(|&i| PIECES[i]).collect();
            let needle: String = needle_parts.iter().map(|&i| PIECES[i]).collect();
            proptest::prop_assert_eq!(find_verbatim(&haystack, &needle), haystack.find(needle.as_str()));
            proptest::prop_assert_eq!(
                remove_all(haystack.clone(), &needle),
                haystack.replace(needle.as_str(), "")
            );
        }
    }
}
