//! The manifest's own rules: where its findings go (with the lines of their fields), required fields,
//! the package name, the spec version, `requires.tools`, and the README beside it.

use super::formats::ManifestFile;
use super::model::{MANIFEST_FILE, is_tool_name};
use super::values::Report;
use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::yaml::{FieldPath, Lines};
use crate::platform::text::{one_line, truncate_chars};
use std::fs;
use std::path::Path;

/// Collects findings about the manifest with the lines of their fields.
pub(crate) struct ManifestCtx<'a> {
    pub lines: Lines,
    pub findings: &'a mut Vec<Finding>,
}

impl Report for ManifestCtx<'_> {
    fn report(&mut self, rule: Rule, field: FieldPath, message: impl Into<String>) {
        let line = self.lines.line(&field);
        let field = (!field.0.is_empty()).then(|| field.to_string());
        self.findings.push(Finding {
            file: MANIFEST_FILE.into(),
            line,
            rule,
            field,
            message: message.into(),
        });
    }
}

/// The manifest's identity: `spec`, `name`, `version`, `description` and `components` present, a safe
/// name, a 1.x spec. Returns `spec` and `version` as text.
pub(super) fn check_identity(
    m: &mut ManifestCtx,
    manifest: &ManifestFile,
) -> (Option<String>, Option<String>) {
    let spec = scalar_text(m, "spec", manifest.spec.as_ref());
    let version = scalar_text(m, "version", manifest.version.as_ref());
    let name = manifest.name.clone().unwrap_or_default();
    let description = manifest.description.clone().unwrap_or_default();
    for (field, present) in [
        (
            "spec",
            spec.as_deref().is_some_and(|s| !s.trim().is_empty()),
        ),
        ("name", !name.trim().is_empty()),
        (
            "version",
            version.as_deref().is_some_and(|s| !s.trim().is_empty()),
        ),
        ("description", !description.trim().is_empty()),
        ("components", manifest.components.is_some()),
    ] {
        if !present {
            let misspelt = misspelling_of(manifest, field)
                .map(|key| {
                    format!(
                        " (`{}` looks like it, misspelt)",
                        one_line(&truncate_chars(key, 80))
                    )
                })
                .unwrap_or_default();
            m.report(
                Rule::ManifestRequiredFields,
                FieldPath::key(field),
                format!("required field `{field}` is missing or empty{misspelt}"),
            );
        }
    }
    for key in unknown_keys(manifest) {
        let key = one_line(&truncate_chars(key, 80));
        let hint = MANIFEST_KEYS
            .iter()
            .find(|known| near_miss(&key, known))
            .map(|known| format!("; did you mean `{known}`?"))
            .unwrap_or_default();
        m.report(
            Rule::ManifestUnknownKey,
            FieldPath::key(&key),
            format!("`{key}` is not a key of expert.yaml in spec 1.0 and is ignored{hint}"),
        );
    }
    if !name.trim().is_empty() && !is_safe_name(&name) {
        m.report(
            Rule::ManifestName,
            FieldPath::key("name"),
            format!("{name:?} must be one path segment of letters, digits (any script), `-`, `_` or `.`, not starting with `.` nor holding `..` (it names the workspace directory and the session)"),
        );
    }
    if let Some(spec) = spec.as_deref().filter(|s| !s.trim().is_empty())
        && !(spec == "1" || spec.starts_with("1."))
    {
        m.report(
            Rule::ManifestSpecVersion,
            FieldPath::key("spec"),
            format!("spec {spec:?} is not a 1.x version; this loader implements spec 1.0"),
        );
    }
    (spec, version)
}

/// The top-level keys of expert.yaml in spec 1.0.
const MANIFEST_KEYS: [&str; 15] = [
    "spec",
    "name",
    "version",
    "description",
    "author",
    "license",
    "requires",
    "triggers",
    "concurrency",
    "execution",
    "delivery",
    "learning",
    "policy",
    "outputs",
    "components",
];

/// The top-level keys spec 1.0 does not define.
fn unknown_keys(manifest: &ManifestFile) -> impl Iterator<Item = &str> {
    manifest
        .keys
        .iter()
        .map(String::as_str)
        .filter(|key| !MANIFEST_KEYS.contains(key))
}

/// The unknown key that looks like `field` misspelt, if one does.
fn misspelling_of<'a>(manifest: &'a ManifestFile, field: &str) -> Option<&'a str> {
    unknown_keys(manifest).find(|key| near_miss(key, field))
}

/// The slips worth a suggestion: case, a plural `s`, `-` or `_` between words.
fn near_miss(key: &str, known: &str) -> bool {
    let plain = |text: &str| text.to_lowercase().replace(['-', '_'], "");
    let (key, known) = (plain(key), plain(known));
    key == known || format!("{key}s") == known || key == format!("{known}s")
}

/// A name safe as one path segment and in a session label: letters and digits of any script (the spec
/// allows them), `-`, `_` and `.`; never a separator, white space, a control or formatting character,
/// a leading `.` or `..`. At most 128 characters and 255 bytes (a file name's limit).
pub fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name.chars().count() <= 128
        && !name.starts_with('.')
        && !name.contains("..")
        && name.chars().all(is_name_char)
}

/// A character of a package name: a letter or digit of any script, `-`, `_` or `.`. (Session keys
/// carry the name after `expert:`; a reader of them should take these characters.)
pub fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// `spec` and `version` may be written unquoted (`1.0` is a YAML number).
fn scalar_text(
    m: &mut ManifestCtx,
    field: &str,
    value: Option<&serde_norway::Value>,
) -> Option<String> {
    match value? {
        serde_norway::Value::String(s) => Some(s.clone()),
        serde_norway::Value::Number(n) => Some(n.to_string()),
        serde_norway::Value::Null => None,
        _ => {
            m.report(
                Rule::ManifestSyntax,
                FieldPath::key(field),
                format!("`{field}` must be a string such as \"1.0\""),
            );
            None
        }
    }
}

pub(super) fn required_tools(m: &mut ManifestCtx, manifest: &ManifestFile) -> Vec<String> {
    let listed = manifest
        .requires
        .as_ref()
        .and_then(|r| r.tools.clone())
        .unwrap_or_default();
    let mut tools = Vec::new();
    for (i, tool) in listed.iter().enumerate() {
        let field = FieldPath::key("requires").k("tools").i(i);
        if !is_tool_name(tool) {
            m.report(
                Rule::ManifestValues,
                field,
                format!("{tool:?} is not a tool name (non-empty, without `.`)"),
            );
        } else if tools.contains(tool) {
            m.report(
                Rule::NamesUnique,
                field,
                format!("tool {tool:?} is listed twice"),
            );
        } else {
            tools.push(tool.clone());
        }
    }
    crate::platform::sorting::sort(&mut tools);
    tools
}

pub(super) fn check_readme(dir: &Path, m: &mut ManifestCtx) {
    let present = fs::symlink_metadata(dir.join("README.md")).is_ok_and(|meta| meta.is_file());
    if !present {
        m.findings.push(finding(
            "README.md",
            None,
            Rule::StructureReadme,
            None,
            "README.md is missing (spec §2 lists it as a required component)",
        ));
    }
}
