//! The `skip` section: turns neither recalled for nor captured. Short prompts and triggers that are
//! not a person talking, and the channels, chat types and chats the operator keeps out of memory.

use crate::platform::api::{ChatType, HookContext};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SkipSettings {
    /// Prompts shorter than this (characters, trimmed) get no recall and are not captured.
    pub min_prompt_chars: usize,
    /// OpenClaw triggers that are not a person talking.
    pub triggers: Vec<String>,
    /// Channels kept out of memory (OpenClaw's channel ids: "telegram", "discord", …).
    pub channels: Vec<String>,
    /// Chat types kept out of memory.
    pub chat_types: Vec<SkippedChatType>,
    /// Chats kept out of memory: "<channel>:<chat id>", a chat id on any channel, or a session key.
    pub chats: Vec<String>,
}

impl Default for SkipSettings {
    fn default() -> Self {
        Self {
            min_prompt_chars: 8,
            triggers: ["heartbeat", "cron", "sub-agent", "subagent", "system"]
                .map(String::from)
                .to_vec(),
            channels: Vec::new(),
            chat_types: Vec::new(),
            chats: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SkippedChatType {
    Direct,
    Group,
}

impl SkipSettings {
    /// Why the conversation in `ctx` is kept out of memory (the setting that says so), when it is.
    pub fn kept_out(&self, ctx: &HookContext) -> Option<String> {
        let channel = named(ctx.channel.as_deref());
        if let Some(channel) = channel
            && self
                .channels
                .iter()
                .any(|c| c.trim().eq_ignore_ascii_case(channel))
        {
            return Some(format!(
                "channel {channel} is kept out of memory (skip.channels)"
            ));
        }
        let chat_type = match ctx.chat_type {
            ChatType::Direct => Some((SkippedChatType::Direct, "direct")),
            ChatType::Group => Some((SkippedChatType::Group, "group")),
            ChatType::Unknown => None,
        };
        if let Some((kind, name)) = chat_type
            && self.chat_types.contains(&kind)
        {
            return Some(format!(
                "{name} chats are kept out of memory (skip.chat_types)"
            ));
        }
        let chat = named(ctx.chat_id.as_deref());
        let session = named(ctx.session_key.as_deref());
        let listed = self.chats.iter().map(|c| c.trim()).find(|entry| {
            let on_channel = entry.split_once(':').is_some_and(|(c, id)| {
                channel.is_some_and(|channel| c.eq_ignore_ascii_case(channel)) && Some(id) == chat
            });
            on_channel || Some(*entry) == chat || Some(*entry) == session
        });
        listed.map(|entry| format!("chat {entry} is kept out of memory (skip.chats)"))
    }

    /// Every exclusion in force, for `status`; none when nothing is kept out.
    pub fn kept_out_summary(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.channels.is_empty() {
            parts.push(format!("channels {}", self.channels.join(", ")));
        }
        if !self.chat_types.is_empty() {
            let types: Vec<&str> = self
                .chat_types
                .iter()
                .map(|t| match t {
                    SkippedChatType::Direct => "direct",
                    SkippedChatType::Group => "group",
                })
                .collect();
            parts.push(format!("{} chats", types.join(" and ")));
        }
        if !self.chats.is_empty() {
            parts.push(format!("{} listed chats", self.chats.len()));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// A context value that says something: not absent, not blank.
fn named(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(channel: &str, chat_type: ChatType, chat: Option<&str>) -> HookContext {
        HookContext {
            channel: Some(channel.into()),
            chat_type,
            chat_id: chat.map(Into::into),
            session_key: Some("agent:main:telegram:group:-100".into()),
            ..HookContext::default()
        }
    }

    fn settings(yaml: &str) -> SkipSettings {
        serde_norway::from_str(yaml).unwrap()
    }

    #[test]
    fn a_channel_a_chat_type_or_a_chat_keeps_a_conversation_out_of_memory() {
        let s = settings("channels: [Discord]\nchat_types: [group]\nchats: ['telegram:42', '77']");
        let why = |c: &HookContext| s.kept_out(c);
        assert_eq!(
            why(&ctx("discord", ChatType::Direct, None)).as_deref(),
            Some("channel discord is kept out of memory (skip.channels)")
        );
        assert_eq!(
            why(&ctx("slack", ChatType::Group, Some("1"))).as_deref(),
            Some("group chats are kept out of memory (skip.chat_types)")
        );
        assert_eq!(
            why(&ctx("telegram", ChatType::Direct, Some("42"))).as_deref(),
            Some("chat telegram:42 is kept out of memory (skip.chats)")
        );
        assert_eq!(
            why(&ctx("signal", ChatType::Direct, Some("77"))).as_deref(),
            Some("chat 77 is kept out of memory (skip.chats)")
        );
        // Near misses: another channel's chat 42, a chat id that only starts the same.
        assert_eq!(why(&ctx("signal", ChatType::Direct, Some("42"))), None);
        assert_eq!(why(&ctx("telegram", ChatType::Direct, Some("421"))), None);
        assert_eq!(why(&ctx("telegram", ChatType::Unknown, None)), None);
    }

    #[test]
    fn a_session_key_names_a_chat_and_nothing_is_kept_out_by_default() {
        let s = settings("chats: ['agent:main:telegram:group:-100']");
        assert!(
            s.kept_out(&ctx("telegram", ChatType::Group, None))
                .is_some()
        );
        let defaults = SkipSettings::default();
        assert_eq!(
            defaults.kept_out(&ctx("telegram", ChatType::Group, Some("1"))),
            None
        );
        assert_eq!(defaults.kept_out_summary(), None);
    }

    #[test]
    fn an_unknown_chat_type_is_refused_naming_the_choices() {
        let error = serde_norway::from_str::<SkipSettings>("chat_types: [dm]")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("unknown variant `dm`, expected `direct` or `group`"),
            "{error}"
        );
    }
}
