//! The Graphiti group a conversation's memories belong to: the templates over the hook context and
//! their rendering into a group id.

use crate::api::{ChatType, HookContext};
use serde::Deserialize;

/// Templates for the Graphiti `group_id` over the hook context: `{agent}`, `{sender}`, `{chat}`,
/// `{channel}`, `{session}`. Group chats use their own template, which must name `{chat}`, so a group
/// never reads a direct chat's memories.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GroupIdSettings {
    pub direct: String,
    pub group: String,
}

impl Default for GroupIdSettings {
    fn default() -> Self {
        Self {
            direct: "{agent}-dm-{sender}".into(),
            group: "{agent}-group-{chat}".into(),
        }
    }
}

/// The Graphiti `group_id` for a turn: the direct or the group template filled from the context,
/// then restricted to what Graphiti accepts (`[A-Za-z0-9_-]`).
pub fn group_id(templates: &GroupIdSettings, ctx: &HookContext) -> String {
    let template = if ctx.chat_type == ChatType::Group {
        &templates.group
    } else {
        &templates.direct
    };
    let value = |v: &Option<String>| {
        v.as_deref()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or("none")
            .to_string()
    };
    let filled = template
        .replace("{agent}", &value(&ctx.agent_id))
        .replace("{sender}", &value(&ctx.sender_id))
        .replace("{chat}", &value(&ctx.chat_id))
        .replace("{channel}", &value(&ctx.channel))
        .replace("{session}", &value(&ctx.session_key));
    sanitize_group_id(&filled)
}

pub fn sanitize_group_id(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    out.truncate(120);
    if out.is_empty() { "none".into() } else { out }
}

const PLACEHOLDERS: [&str; 5] = ["{agent}", "{sender}", "{chat}", "{channel}", "{session}"];

pub fn check_group_template(template: &str) -> Result<(), String> {
    let mut rest = template.to_string();
    for p in PLACEHOLDERS {
        rest = rest.replace(p, "");
    }
    if rest.contains('{') || rest.contains('}') {
        return Err(format!(
            "{template:?} has an unknown placeholder; known: {}",
            PLACEHOLDERS.join(" ")
        ));
    }
    if template.trim().is_empty() {
        return Err("must not be empty".into());
    }
    Ok(())
}
