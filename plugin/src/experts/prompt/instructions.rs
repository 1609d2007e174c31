//! The `Instructions` section: where the agent reads functions, processes, knowledge and state, and
//! where scratch files go.

use crate::experts::gate::KNOWLEDGE_TOOL;
use crate::experts::package::{KnowledgeKind, Package, StateScope};
use crate::experts::state::SESSIONS_DIR;

/// The section's text; `ws` is the workspace path as the agent sees it, `session` the directory of
/// this session's own state files (a placeholder when the prompt is for no session).
pub(super) fn instructions(package: &Package, ws: &str, session: Option<&str>) -> String {
    let mut out = String::new();
    component_locations(&mut out, package, ws);
    if package
        .knowledge
        .iter()
        .any(|k| k.kind == KnowledgeKind::Private)
    {
        // Not in the workspace, and not named here: the tool lists it in this session only.
        out.push_str(&format!(
            "Some knowledge is private to this session and is not in the workspace: list and read it with the {KNOWLEDGE_TOOL} tool, and never repeat it outside this session.\n"
        ));
    }
    let own = format!("{ws}/{SESSIONS_DIR}/{}", session.unwrap_or("<session>"));
    let has = |scope| package.state.iter().any(|s| s.scope == scope);
    if has(StateScope::Persistent) {
        let what = if has(StateScope::Session) {
            "Persistent state files are at:"
        } else {
            "State files are at:"
        };
        location_line(
            &mut out,
            ws,
            what,
            format!("{ws}/{{path}} (as listed under State Files)"),
            false,
        );
    }
    if has(StateScope::Session) {
        location_line(
            &mut out,
            ws,
            "Session state files are this session's own, at:",
            format!("{own}/{{path}} (as listed under State Files)"),
            false,
        );
        out.push_str("  Session files start from their template in every session; persistent files carry over.\n");
    }
    location_line(
        &mut out,
        ws,
        "Scratch files go in:",
        format!("{ws}/scratch/"),
        false,
    );
    out.push_str("Read and write them as instructed by functions and processes; paths such as ./state/… and ./scratch/… are relative to ");
    out.push_str(ws);
    if has(StateScope::Session) {
        out.push_str(&format!("/, a session state file's ./state/… to {own}/.\n"));
    } else {
        out.push_str("/.\n");
    }
    out
}

/// Where functions, processes and public knowledge are read from.
fn component_locations(out: &mut String, package: &Package, ws: &str) {
    let f = nonstandard(
        package
            .functions
            .iter()
            .map(|f| (f.path.as_str(), f.name.as_str()))
            .collect(),
        "functions",
    );
    location_line(
        out,
        ws,
        "When you need a function, read it from:",
        format!("{ws}/functions/{{name}}.md"),
        f,
    );
    if !package.processes.is_empty() {
        let p = nonstandard(
            package
                .processes
                .iter()
                .map(|p| (p.path.as_str(), p.name.as_str()))
                .collect(),
            "processes",
        );
        location_line(
            out,
            ws,
            "When you need a process, read it from:",
            format!("{ws}/processes/{{name}}.md"),
            p,
        );
    }
    if package.public_knowledge().next().is_some() {
        let k = nonstandard(
            package
                .public_knowledge()
                .map(|k| (k.path.as_str(), k.name.as_str()))
                .collect(),
            "knowledge",
        );
        location_line(
            out,
            ws,
            "When you need knowledge, read it from:",
            format!("{ws}/knowledge/{{name}}.md"),
            k,
        );
    }
}

/// Whether any of these files is off the `dir/name.md` convention.
fn nonstandard(pairs: Vec<(&str, &str)>, dir: &str) -> bool {
    pairs
        .iter()
        .any(|(path, name)| *path != format!("{dir}/{name}.md"))
}

/// One location: what, then where; and a pointer to the index when some files are elsewhere.
fn location_line(out: &mut String, ws: &str, what: &str, at: String, other_paths: bool) {
    out.push_str(&format!("{what}\n  {at}\n"));
    if other_paths {
        out.push_str(&format!(
            "  (or {ws}/ followed by the file shown in the index)\n"
        ));
    }
}
