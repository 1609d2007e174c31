//! Frontmatter of markdown components: parsed into a format, and the `name`/`description` rules
//! shared by functions and processes.

use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::yaml::{self, FieldPath, Lines};

/// Frontmatter of a markdown component, parsed into `T`, with its lines; findings under `rule`.
pub(crate) fn frontmatter<T: serde::de::DeserializeOwned + Default>(
    path: &str,
    text: &str,
    rule: Rule,
    required: bool,
    findings: &mut Vec<Finding>,
) -> Option<(T, Lines)> {
    let fm = match yaml::split_frontmatter(text) {
        Ok(fm) => fm,
        Err(why) => {
            findings.push(finding(path, Some(1), rule, None, why));
            return None;
        }
    };
    let Some(yaml_text) = fm.yaml else {
        if required {
            findings.push(finding(
                path,
                Some(1),
                rule,
                None,
                "has no YAML frontmatter (a `---` block with name and description)",
            ));
            return None;
        }
        return Some((T::default(), Lines::new("", 1)));
    };
    match yaml::parse::<T>(yaml_text) {
        Ok(value) => Some((value, Lines::new(yaml_text, fm.first_line))),
        Err(e) => {
            findings.push(finding(
                path,
                e.line.map(|l| l + fm.first_line - 1),
                rule,
                e.field,
                e.message,
            ));
            None
        }
    }
}

/// A function or process file as checked: its frontmatter, lines, name and description.
pub(super) struct NamedDocument<T> {
    pub front: T,
    pub lines: Lines,
    pub name: String,
    pub description: String,
}

/// A function or process file: frontmatter required, `name` and `description` required, the name
/// declared by no earlier file of its `kind` (`earlier` gives such a file's path by name).
pub(super) fn named_document<'e, T: serde::de::DeserializeOwned + Default>(
    path: &str,
    text: &str,
    rule: Rule,
    kind: &str,
    fields: fn(&T) -> (&Option<String>, &Option<String>),
    earlier: impl FnOnce(&str) -> Option<&'e str>,
    findings: &mut Vec<Finding>,
) -> Option<NamedDocument<T>> {
    let (front, lines) = frontmatter::<T>(path, text, rule, true, findings)?;
    let (name, description) = fields(&front);
    let (name, description) =
        name_and_description(path, &lines, rule, name, description, findings)?;
    if declared_twice(kind, &name, earlier(&name), path, &lines, findings) {
        return None;
    }
    Some(NamedDocument {
        front,
        lines,
        name,
        description,
    })
}

/// A function's or process's `name` and `description`, both required (each missing one reported).
fn name_and_description(
    path: &str,
    lines: &Lines,
    rule: Rule,
    name: &Option<String>,
    description: &Option<String>,
    findings: &mut Vec<Finding>,
) -> Option<(String, String)> {
    let name = require_text(path, lines, rule, "name", name, findings);
    let description = require_text(path, lines, rule, "description", description, findings);
    Some((name?, description?))
}

/// Reports `name` when a file read earlier (`earlier`) already declared it; true when it did.
pub(super) fn declared_twice(
    what: &str,
    name: &str,
    earlier: Option<&str>,
    path: &str,
    lines: &Lines,
    findings: &mut Vec<Finding>,
) -> bool {
    let Some(earlier) = earlier else { return false };
    findings.push(finding(
        path,
        lines.line(&FieldPath::key("name")),
        Rule::NamesUnique,
        Some("name".into()),
        format!("{what} {name:?} is also declared by {earlier}"),
    ));
    true
}

pub(super) fn require_text(
    path: &str,
    lines: &Lines,
    rule: Rule,
    field: &str,
    value: &Option<String>,
    findings: &mut Vec<Finding>,
) -> Option<String> {
    match value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
        Some(v) => Some(v.to_string()),
        None => {
            let line = lines.line(&FieldPath::key(field));
            findings.push(finding(
                path,
                line.or(Some(1)),
                rule,
                Some(field.into()),
                format!("frontmatter field `{field}` is required"),
            ));
            None
        }
    }
}
