//! Picking the exchange to capture after a turn: the last user message and the assistant's answer,
//! with exactly the plugin's own blocks removed.

use serde_json::Value;

/// Every block the plugin injects. Capture strips exactly these, so the next turn never stores its
/// own recall.
pub const OUR_BLOCKS: [&str; 3] = ["graphiti-context", "graphiti-fallback", "pack-context"];

/// Removes our blocks: `<name ...>…</name>`. An opening tag without its closing tag removes everything
/// after it (it was cut off, and what follows is ours); a stray closing tag is removed alone.
pub fn strip_our_blocks(text: &str) -> String {
    let mut out = text.to_string();
    for name in OUR_BLOCKS {
        out = strip_block(&out, name);
    }
    tidy(&out)
}

fn strip_block(text: &str, name: &str) -> String {
    let open = format!("<{name}");
    let close = format!("</{name}>");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next_open = find_tag(rest, &open);
        let next_close = rest.find(&close);
        match (next_open, next_close) {
            (Some(o), c) if c.is_none_or(|c| o < c) => {
                out.push_str(&rest[..o]);
                let after_open = &rest[o..];
                match after_open.find(&close) {
                    Some(end) => rest = &after_open[end + close.len()..],
                    None => return out,
                }
            }
            (_, Some(c)) => {
                out.push_str(&rest[..c]);
                rest = &rest[c + close.len()..];
            }
            (None, None) => {
                out.push_str(rest);
                return out;
            }
            (Some(_), None) => unreachable!("handled by the first arm"),
        }
    }
}

/// `<name` followed by `>` or white space, so `<pack-contextual>` is not ours.
fn find_tag(text: &str, open: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(open) {
        let at = from + i;
        match text[at + open.len()..].chars().next() {
            Some(c) if c == '>' || c.is_whitespace() => return Some(at),
            _ => from = at + open.len(),
        }
    }
    None
}

/// Blank lines left where blocks were removed collapse; ends are trimmed.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
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

/// The last user message and the last assistant text after it, our blocks stripped.
pub fn last_exchange(messages_json: &str) -> Result<(String, String), String> {
    let messages: Value = if messages_json.trim().is_empty() {
        Value::Array(vec![])
    } else {
        serde_json::from_str(messages_json)
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
    let user = message_text(&messages[user_at])
        .map(|t| strip_our_blocks(&t))
        .unwrap_or_default();
    let assistant = messages[user_at + 1..]
        .iter()
        .rev()
        .filter(|m| role(m) == "assistant")
        .filter_map(message_text)
        .map(|t| strip_our_blocks(&t))
        .find(|t| !t.is_empty())
        .unwrap_or_default();
    if user.is_empty() {
        return Err("the user message is empty once the plugin's blocks are removed".into());
    }
    if assistant.is_empty() {
        return Err("no assistant answer after the last user message".into());
    }
    Ok((user, assistant))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_exactly_our_blocks() {
        let text = "<graphiti-context>\nfact\n</graphiti-context>\n\n<pack-context intent=\"a\">\nx\n</pack-context>\n\nHello <b>there</b> <pack-contextual>";
        assert_eq!(
            strip_our_blocks(text),
            "Hello <b>there</b> <pack-contextual>"
        );
    }

    #[test]
    fn unterminated_and_stray_tags() {
        assert_eq!(
            strip_our_blocks("Hi\n<pack-context intent=\"a\">\ncut off"),
            "Hi"
        );
        assert_eq!(strip_our_blocks("a </graphiti-fallback> b"), "a  b");
    }

    #[test]
    fn takes_the_last_exchange() {
        let messages = r#"[{"role":"user","content":"old"},{"role":"assistant","content":"old answer"},
            {"role":"user","content":[{"type":"text","text":"<graphiti-context>f</graphiti-context>\n\nnew question"}]},
            {"role":"toolResult","content":"tool"},{"role":"assistant","content":[{"type":"text","text":"new answer"}]}]"#;
        assert_eq!(
            last_exchange(messages).unwrap(),
            ("new question".into(), "new answer".into())
        );
        assert!(last_exchange("{}").unwrap_err().contains("array"));
        assert!(
            last_exchange(r#"[{"role":"user","content":"q"}]"#)
                .unwrap_err()
                .contains("no assistant")
        );
    }
}
