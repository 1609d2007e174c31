//! Tool files (spec §8): YAML declaring a tool's name and its named operations (their `approval`
//! fields are documentation only and not read).

use super::formats::ToolFile;
use super::model::{Operation, Tool, is_tool_name};
use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::yaml::{self, FieldPath, Lines};

/// The tool `path` declares, with its lines; `None` (reported) when the file is not a valid tool file.
pub(super) fn load_tool(
    path: &str,
    text: &str,
    findings: &mut Vec<Finding>,
) -> Option<(Tool, Lines)> {
    let rule = Rule::ToolSyntax;
    let file: ToolFile = match yaml::parse(text) {
        Ok(file) => file,
        Err(e) => {
            findings.push(finding(path, e.line, rule, e.field, e.message));
            return None;
        }
    };
    let lines = Lines::new(text, 1);
    let mut ok = true;
    let name = file.name.clone().unwrap_or_default();
    if !is_tool_name(&name) {
        let message = if name.trim().is_empty() {
            "`name` is required".to_string()
        } else {
            format!("{name:?} must not contain `.`")
        };
        findings.push(finding(
            path,
            lines.line(&FieldPath::key("name")).or(Some(1)),
            rule,
            Some("name".into()),
            message,
        ));
        ok = false;
    }
    let Some(specs) = &file.operations else {
        findings.push(finding(
            path,
            Some(1),
            rule,
            Some("operations".into()),
            "`operations` is required (a list of operations)",
        ));
        return None;
    };
    let mut operations: Vec<Operation> = Vec::new();
    for (i, op) in specs.iter().enumerate() {
        let field = FieldPath::key("operations").i(i).k("name");
        match op.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
            None => {
                findings.push(finding(
                    path,
                    lines.line(&field),
                    rule,
                    Some(field.to_string()),
                    "every operation needs a `name`",
                ));
                ok = false;
            }
            Some(op_name) if operations.iter().any(|o| o.name == op_name) => {
                let message = format!("operation {op_name:?} is declared twice");
                findings.push(finding(
                    path,
                    lines.line(&field),
                    Rule::NamesUnique,
                    Some(field.to_string()),
                    message,
                ));
            }
            Some(op_name) => operations.push(Operation {
                name: op_name.to_string(),
                description: op.description.clone(),
            }),
        }
    }
    if !ok {
        return None;
    }
    crate::platform::sorting::sort_by(&mut operations, |a, b| a.name.cmp(&b.name));
    Some((
        Tool {
            path: path.to_string(),
            name,
            description: file.description,
            operations,
        },
        lines,
    ))
}
