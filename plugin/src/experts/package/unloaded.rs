//! The names that listed files which failed to load may have declared. Cross-reference checks skip a
//! reference to one of them: the file's own finding says what is wrong, and "names no function" would
//! send the author looking in the wrong place.

use std::collections::BTreeSet;

/// Names possibly declared by function, process and tool files that did not load.
#[derive(Debug, Default)]
pub(crate) struct Unloaded {
    pub functions: BTreeSet<String>,
    pub processes: BTreeSet<String>,
    pub tools: BTreeSet<String>,
}

/// The names a listed file that failed to load may have declared: its file name without extension,
/// and the top-level `name:` it gives, read loosely (its YAML may be what failed). `text` is `None`
/// when the file could not be read.
pub(super) fn possible_names(path: &str, text: Option<&str>) -> Vec<String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let mut names = vec![stem.trim().to_string()];
    names.extend(text.and_then(loose_name));
    names
}

/// The value of the first top-level `name:` line, within the frontmatter of a markdown file.
fn loose_name(text: &str) -> Option<String> {
    let mut lines = text.lines();
    let in_frontmatter = text.starts_with("---");
    if in_frontmatter {
        lines.next();
    }
    for line in lines {
        if in_frontmatter && (line.trim_end() == "---" || line.trim_end() == "...") {
            return None;
        }
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
            return (!value.is_empty()).then(|| value.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_file_name_and_a_loose_name_line() {
        let md = "---\nname: \"summarize\"\ndescription: [unclosed\n---\nname: body\n";
        assert_eq!(
            possible_names("functions/sum.md", Some(md)),
            ["sum", "summarize"]
        );
        assert_eq!(possible_names("./tools/crm.yaml", None), ["crm"]);
        assert_eq!(
            possible_names("tools/crm.yaml", Some("description: x\nname: crm-v2\n")),
            ["crm", "crm-v2"]
        );
        let body_only = "---\ndescription: x\n---\nname: not-frontmatter\n";
        assert_eq!(possible_names("f.md", Some(body_only)), ["f"]);
    }
}
