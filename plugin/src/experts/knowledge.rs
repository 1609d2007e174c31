//! The `expert_knowledge` tool's answers: an expert session lists and reads its own package's
//! knowledge, `private` knowledge included. Private knowledge is never written to the agents'
//! workspace (any agent's `read` could open it there) and never appears in a prompt, index, command
//! output or log; this tool, answered only in the expert's own session (the caller checks that), is
//! how it reaches the agent that may use it (spec §9: "may still be loaded into agent context").

use super::commands::CommandText;
use super::package::{Knowledge, KnowledgeKind, Package};
use super::prompt::one_line;

/// Without a name: every knowledge file of the package (name, kind, description). With one: that
/// file's whole text. Names are the frontmatter name, the file name or the path in the package.
pub fn knowledge_answer(package: &Package, name: Option<&str>) -> CommandText {
    let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
        return CommandText {
            text: list(package),
            ok: true,
        };
    };
    match find(package, name) {
        Some(k) => CommandText {
            text: k.text.clone(),
            ok: true,
        },
        None => CommandText {
            text: format!(
                "{} has no knowledge named {:?}; call expert_knowledge without a name for the list\n",
                package.name,
                one_line(name, 100)
            ),
            ok: false,
        },
    }
}

fn list(package: &Package) -> String {
    if package.knowledge.is_empty() {
        return format!("{} has no knowledge files\n", package.name);
    }
    let mut out = format!(
        "Knowledge of {} (read one with expert_knowledge {{\"name\": \"<name>\"}}; private ones stay in this session):\n",
        package.name
    );
    for k in &package.knowledge {
        let kind = match k.kind {
            KnowledgeKind::Static => "static",
            KnowledgeKind::Dynamic => "dynamic",
            KnowledgeKind::Private => "private",
        };
        let description = k
            .description
            .as_deref()
            .map(|d| format!(": {}", one_line(d, 200)))
            .unwrap_or_default();
        out.push_str(&format!("- {} ({kind}){description}\n", k.name));
    }
    out
}

fn find<'a>(package: &'a Package, name: &str) -> Option<&'a Knowledge> {
    let file_name = |k: &Knowledge| {
        k.path
            .rsplit('/')
            .next()
            .map(|f| f.trim_end_matches(".md").to_string())
    };
    package.knowledge.iter().find(|k| {
        k.name == name
            || k.path == name
            || file_name(k).as_deref() == Some(name.trim_end_matches(".md"))
    })
}
