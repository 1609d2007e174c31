//! The index sections: functions, processes, public knowledge and state files, one line each, capped
//! at the entry limit, with the file's path when it is off the convention.

use super::document::one_line;
use super::limits::PromptLimits;
use super::section::Section;
use crate::experts::package::Package;

/// The indexes in prompt order; an empty index is left out (functions always have one entry).
pub(super) fn index_sections(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> Vec<Section> {
    let mut sections = vec![functions_index(package, limits, truncations)];
    sections.extend(processes_index(package, limits, truncations));
    sections.extend(knowledge_index(package, limits, truncations));
    sections.extend(state_index(package, limits, truncations));
    sections
}

fn functions_index(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> Section {
    let entry = |text: &str| one_line(text, limits.max_entry_chars);
    let functions: Vec<String> = package
        .functions
        .iter()
        .map(|f| {
            // spec §6: an isolated function runs in a child session and gives back its outputs only.
            let isolated = if f.isolated {
                " (isolated: run it with the `expert_function` tool, giving its inputs; you get its outputs)"
            } else {
                ""
            };
            format!(
                "- {}: {}{}{isolated}",
                entry(&f.name),
                entry(&f.description),
                path_note(&f.path, "functions", &f.name)
            )
        })
        .collect();
    Section {
        title: "Available Functions",
        body: index(functions, "functions", limits, truncations),
        reserved: false,
    }
}

/// Each process with the manifest triggers that start it (a process's own `trigger` field names one of
/// them when it resolves; when it does not, it starts nothing and is not listed).
fn processes_index(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> Option<Section> {
    if package.processes.is_empty() {
        return None;
    }
    let entry = |text: &str| one_line(text, limits.max_entry_chars);
    let processes: Vec<String> = package
        .processes
        .iter()
        .map(|p| {
            let mut triggers: Vec<&str> = package
                .triggers
                .iter()
                .filter(|t| t.process == p.name && t.inactive().is_none())
                .map(|t| t.name.as_str())
                .collect();
            crate::platform::sorting::sort(&mut triggers);
            triggers.dedup();
            let trigger = match triggers.len() {
                0 => String::new(),
                1 => format!(" (trigger: {})", entry(triggers[0])),
                _ => format!(" (triggers: {})", entry(&triggers.join(", "))),
            };
            format!(
                "- {}: {}{}{}",
                entry(&p.name),
                entry(&p.description),
                trigger,
                path_note(&p.path, "processes", &p.name)
            )
        })
        .collect();
    Some(Section {
        title: "Available Processes",
        body: index(processes, "processes", limits, truncations),
        reserved: false,
    })
}

/// Public knowledge only (spec §9: private knowledge is never listed).
fn knowledge_index(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> Option<Section> {
    let entry = |text: &str| one_line(text, limits.max_entry_chars);
    let knowledge: Vec<String> = package
        .public_knowledge()
        .map(|k| {
            let description = k
                .description
                .as_deref()
                .map(|d| format!(": {}", entry(d)))
                .unwrap_or_default();
            format!(
                "- {}{}{}",
                entry(&k.name),
                description,
                path_note(&k.path, "knowledge", &k.name)
            )
        })
        .collect();
    if knowledge.is_empty() {
        return None;
    }
    Some(Section {
        title: "Knowledge Available",
        body: index(knowledge, "knowledge files", limits, truncations),
        reserved: false,
    })
}

fn state_index(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> Option<Section> {
    if package.state.is_empty() {
        return None;
    }
    let entry = |text: &str| one_line(text, limits.max_entry_chars);
    let state: Vec<String> = package
        .state
        .iter()
        .map(|s| format!("- {} ({})", entry(&s.path), s.scope.as_str()))
        .collect();
    Some(Section {
        title: "State Files",
        body: index(state, "state files", limits, truncations),
        reserved: false,
    })
}

/// The file's path, when it is not where the instructions say files of its kind are.
pub(super) fn path_note(path: &str, dir: &str, name: &str) -> String {
    if path == format!("{dir}/{name}.md") {
        String::new()
    } else {
        format!(" (file: {path})")
    }
}

/// An index body: at most `max_index_entries` lines, the rest counted in a marker.
fn index(
    mut lines: Vec<String>,
    what: &str,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> String {
    let total = lines.len();
    let mut out = String::new();
    if total > limits.max_index_entries {
        lines.truncate(limits.max_index_entries);
        let more = total - limits.max_index_entries;
        truncations.push(format!(
            "{what} index: {more} of {total} entries not listed"
        ));
        lines.push(format!("[… {more} more {what} not listed]"));
    }
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
