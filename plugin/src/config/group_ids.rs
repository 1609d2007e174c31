//! The group-id templates of the settings (`graphiti.group_id`) and their check; rendering a
//! conversation's group id from them is memory's (`memory::group_id`).

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
