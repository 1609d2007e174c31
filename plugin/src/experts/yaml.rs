//! YAML for expert packages: parsing with located errors, frontmatter splitting, and finding the line of
//! a field after parsing (serde keeps no positions, so findings made later look the field up again).

use serde::de::DeserializeOwned;
use std::collections::HashMap;

/// One step of a field path: a mapping key or a sequence index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A field path such as `triggers[0].process`, kept as segments so keys containing dots
/// (`crm.get_contact`) stay one key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub fn key(key: &str) -> Self {
        FieldPath(vec![Seg::Key(key.to_string())])
    }
    pub fn k(mut self, key: &str) -> Self {
        self.0.push(Seg::Key(key.to_string()));
        self
    }
    pub fn i(mut self, index: usize) -> Self {
        self.0.push(Seg::Index(index));
        self
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if n == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// A parse failure: the line (within the parsed text), the field path serde reported and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: Option<u32>,
    pub field: Option<String>,
    pub message: String,
}

/// Longest parser message or field path reported, in characters.
const MAX_ERROR_CHARS: usize = 300;

/// Parses YAML into `T`. An empty document parses as `T::default()` (an empty frontmatter block is
/// not an error; missing required fields are reported by the caller). Nesting is capped before
/// libyaml reads it: deeper documents would cost it quadratic time (see `config::check_yaml`).
pub fn parse<T: DeserializeOwned + Default>(text: &str) -> Result<T, ParseError> {
    let meaningful = text.lines().any(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#') && t != "---" && t != "..."
    });
    if !meaningful {
        return Ok(T::default());
    }
    if let Err(refused) = crate::platform::documents::nesting::check_yaml(text) {
        return Err(ParseError {
            line: Some(refused.line),
            field: None,
            message: refused.message(),
        });
    }
    // A document that is just `~`/`null` is as empty as no document.
    let read = crate::platform::documents::yaml::from_str::<Option<T>>(text);
    read.map(Option::unwrap_or_default).map_err(|e| {
        let (line, message) = e.located(text);
        let (field, message) = crate::platform::documents::errors::split_path(&message);
        let message = match message
            .strip_prefix("duplicate field `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            Some(key) => format!("`{key}` is given twice here; keep one"),
            None => message,
        };
        // The parser quotes the offending key or value whole: a hostile one (a megabyte key) must
        // not become a megabyte of report.
        let bounded = |text: &str| {
            crate::platform::text::one_line(&crate::platform::text::truncate_chars(
                text,
                MAX_ERROR_CHARS,
            ))
        };
        let (line, message) =
            match crate::platform::documents::errors::missing_colon(text, line, &message) {
                Some((line, said)) => (Some(line), said),
                None => (line, in_yaml_terms(&message)),
            };
        ParseError {
            line,
            field: field.as_deref().map(bounded),
            message: bounded(&message),
        }
    })
}

/// The parser's message in the terms of the YAML file rather than of the Rust types it fills:
/// `expected u64` is a whole number, `expected struct PolicySpec` a mapping; the position is
/// dropped where the finding gives the line.
fn in_yaml_terms(message: &str) -> String {
    let mut out = message.to_string();
    for number in ["u8", "u16", "u32", "u64", "usize", "i32", "i64"] {
        let rust = format!("expected {number}");
        if out.ends_with(&rust) {
            out.truncate(out.len() - rust.len());
            out.push_str("expected a whole number");
        }
    }
    if let Some(at) = out.find("expected struct ") {
        out.truncate(at);
        out.push_str("expected a mapping (`key: value` lines)");
    }
    if let Some(at) = out.find(" at line ")
        && out[at..].contains(" column ")
    {
        let rest = out[at + 1..]
            .split_once(", ")
            .map(|(_, rest)| format!(", {rest}"))
            .unwrap_or_default();
        out.truncate(at);
        out.push_str(&rest);
    }
    out
}

/// A markdown file split into its YAML frontmatter and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontmatter<'a> {
    /// The YAML between the `---` lines; `None` when the file has no frontmatter.
    pub yaml: Option<&'a str>,
    /// Line number (1-based) in the file of the frontmatter's first line.
    pub first_line: u32,
    pub body: &'a str,
}

/// Splits `---` frontmatter off a markdown file. `Err` when the block is opened but never closed.
pub fn split_frontmatter(text: &str) -> Result<Frontmatter<'_>, String> {
    let starts =
        text.starts_with("---\n") || text.starts_with("---\r\n") || text.trim_end() == "---";
    if !starts {
        return Ok(Frontmatter {
            yaml: None,
            first_line: 1,
            body: text,
        });
    }
    let after_open = text.find('\n').map(|i| i + 1).unwrap_or(text.len());
    let mut offset = after_open;
    for line in text[after_open..].split_inclusive('\n') {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            let yaml = &text[after_open..offset];
            let body = &text[offset + line.len()..];
            return Ok(Frontmatter {
                yaml: Some(yaml),
                first_line: 2,
                body,
            });
        }
        offset += line.len();
    }
    Err("the frontmatter opened by `---` on line 1 is never closed by a `---` line".into())
}

/// The line (1-based) of `path` in block-style YAML `text`; see [`Lines::line`].
pub fn line_of(text: &str, path: &FieldPath) -> Option<u32> {
    Lines::new(text, 1).line(path)
}

/// Finds the lines of fields in one YAML text (a file, or a frontmatter block starting at `first_line`).
pub struct Lines {
    index: PathIndex,
    offset: u32,
}

impl Lines {
    pub fn new(text: &str, first_line: u32) -> Lines {
        Lines {
            index: PathIndex::build(text),
            offset: first_line.saturating_sub(1),
        }
    }

    /// The line of `path` in the file; when the exact field is not found (a flow collection, an absent
    /// field), the line of the nearest enclosing field that is.
    /// The document's top-level keys, in file order.
    pub fn top_level_keys(&self) -> Vec<String> {
        let mut keys: Vec<(u32, &str)> = self
            .index
            .children
            .iter()
            .filter_map(|((parent, seg), node)| match seg {
                Seg::Key(key) if *parent == 0 => Some((self.index.lines[*node], key.as_str())),
                _ => None,
            })
            .collect();
        crate::platform::sorting::sort(&mut keys);
        keys.into_iter().map(|(_, key)| key.to_string()).collect()
    }

    pub fn line(&self, path: &FieldPath) -> Option<u32> {
        (1..=path.0.len())
            .rev()
            .find_map(|n| self.index.find(&path.0[..n]))
            .map(|l| l + self.offset)
    }
}

/// Every field path of a YAML text with the first line that starts it. Paths are interned as a tree
/// (a node per distinct path), so building and looking up stay linear in the text and the path.
struct PathIndex {
    /// (parent node, segment) → node; node 0 is the document.
    children: HashMap<(usize, Seg), usize>,
    /// The first line of each node (none for the document).
    lines: Vec<u32>,
}

struct Frame {
    col: usize,
    /// The node this frame's field or item is; the root frame is the document (node 0).
    node: usize,
    is_item: bool,
    children: usize,
}

impl PathIndex {
    fn build(text: &str) -> PathIndex {
        let mut index = PathIndex {
            children: HashMap::new(),
            lines: vec![0],
        };
        let mut stack: Vec<Frame> = vec![Frame {
            col: 0,
            node: 0,
            is_item: false,
            children: 0,
        }];
        // Lines of a block scalar (`|`, `>`) deeper than this column are text, not fields.
        let mut scalar_above: Option<usize> = None;
        for (n, raw) in text.lines().enumerate() {
            let line_no = n as u32 + 1;
            let content = raw.trim_start();
            let mut col = raw.len() - content.len();
            if content.is_empty() {
                continue;
            }
            if let Some(limit) = scalar_above {
                if col > limit {
                    continue;
                }
                scalar_above = None;
            }
            if content.starts_with('#') || content == "---" || content == "..." {
                continue;
            }
            let mut rest = content;
            // Sequence dashes, possibly several on one line (`- - x`).
            while rest == "-" || rest.starts_with("- ") {
                pop_to(&mut stack, col, true);
                let parent = stack.last_mut().expect("root frame");
                let seg = Seg::Index(parent.children);
                parent.children += 1;
                let node = index.intern(parent.node, seg, line_no);
                stack.push(Frame {
                    col,
                    node,
                    is_item: true,
                    children: 0,
                });
                let after = rest[1..].trim_start();
                col += rest.len() - after.len();
                rest = after;
                if rest.is_empty() {
                    break;
                }
            }
            if rest.is_empty() {
                continue;
            }
            if let Some((key, value)) = split_key(rest) {
                pop_to(&mut stack, col, false);
                let parent = stack.last().expect("root frame").node;
                let node = index.intern(parent, Seg::Key(key), line_no);
                stack.push(Frame {
                    col,
                    node,
                    is_item: false,
                    children: 0,
                });
                let v = value.trim_start();
                if v.starts_with('|') || v.starts_with('>') {
                    scalar_above = Some(col);
                }
            }
        }
        index
    }

    /// The node of `seg` under `parent`, created with `line` the first time.
    fn intern(&mut self, parent: usize, seg: Seg, line: u32) -> usize {
        let next = self.lines.len();
        let node = *self.children.entry((parent, seg)).or_insert(next);
        if node == next {
            self.lines.push(line);
        }
        node
    }

    fn find(&self, path: &[Seg]) -> Option<u32> {
        let mut node = 0;
        for seg in path {
            node = *self.children.get(&(node, seg.clone()))?;
        }
        (node != 0).then(|| self.lines[node])
    }
}

/// Pops the frames a new entry at `col` closes. A dash at the column of its parent key (a compact
/// sequence) stays under that key; a new item closes the previous sibling item.
fn pop_to(stack: &mut Vec<Frame>, col: usize, is_item: bool) {
    while stack.len() > 1 {
        let top = stack.last().expect("non-empty");
        let closes = if is_item {
            top.col > col || (top.col == col && top.is_item)
        } else {
            top.col >= col
        };
        if !closes {
            break;
        }
        stack.pop();
    }
}

/// `key: value` or `key:` at the start of `text`, with quoted keys unquoted.
fn split_key(text: &str) -> Option<(String, &str)> {
    if let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = text[1..].find(quote)? + 1;
        let key = &text[1..end];
        let after = &text[end + 1..];
        return after
            .strip_prefix(':')
            .filter(|r| r.is_empty() || r.starts_with(' '))
            .map(|r| (key.to_string(), r));
    }
    if text.starts_with(['[', '{', '&', '*', '!', '|', '>']) {
        return None;
    }
    let end = match text.find(": ") {
        Some(i) => i,
        None if text.ends_with(':') => text.len() - 1,
        None => return None,
    };
    let key = text[..end].trim_end();
    (!key.is_empty()).then(|| (key.to_string(), &text[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_speak_of_yaml_not_rust_types() {
        assert_eq!(
            in_yaml_terms("invalid type: string \"lots\", expected u64"),
            "invalid type: string \"lots\", expected a whole number"
        );
        assert_eq!(
            in_yaml_terms("invalid type: string \"x\", expected struct PolicySpec"),
            "invalid type: string \"x\", expected a mapping (`key: value` lines)"
        );
        assert_eq!(
            in_yaml_terms(
                "could not find expected ':' at line 15 column 10, while scanning a simple key"
            ),
            "could not find expected ':', while scanning a simple key"
        );
    }

    #[test]
    fn a_key_without_its_colon_is_named_on_its_own_line() {
        #[derive(Debug, Default, serde::Deserialize)]
        struct Approval {
            #[allow(dead_code)]
            default: Option<String>,
            #[allow(dead_code)]
            timeout: Option<String>,
        }
        #[derive(Debug, Default, serde::Deserialize)]
        struct Manifest {
            #[allow(dead_code)]
            name: Option<String>,
            #[allow(dead_code)]
            version: Option<String>,
            #[allow(dead_code)]
            approval: Option<Approval>,
        }
        let top = parse::<Manifest>("name: a\nversion \"1.0\"\napproval:\n  default: auto\n")
            .expect_err("a top-level key without its colon");
        assert_eq!(
            (top.line, top.message.as_str()),
            (
                Some(2),
                "`version \"1.0\"` has no `:` after its key: write `key: value`"
            )
        );
        let nested = parse::<Manifest>("name: a\napproval:\n  default confirm\n  timeout 1h\n")
            .expect_err("a nested key without its colon");
        assert_eq!(
            (nested.line, nested.message.as_str()),
            (
                Some(3),
                "`default confirm` has no `:` after its key: write `key: value`"
            )
        );
        assert_eq!(nested.field.as_deref(), Some("approval"));
    }

    #[test]
    fn a_hostile_key_is_not_echoed_whole() {
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Known {
            #[allow(dead_code)]
            name: Option<String>,
        }
        let key = format!("k{}", "x".repeat(1 << 20));
        let err = parse::<Known>(&format!("{key}: 1\n")).expect_err("an unknown field");
        let start: String = err.message.chars().take(80).collect();
        assert!(
            err.message.contains("kxxxx"),
            "the value is quoted: {start}"
        );
        assert!(
            err.message.chars().count() <= MAX_ERROR_CHARS + 1,
            "{} chars",
            err.message.len()
        );
    }

    const MANIFEST: &str = "\
spec: \"1.0\"
name: x   # comment
requires:
  tools:
  - crm
  - email
triggers:
  - name: a
    type: cron
    process: p
  - name: b
    process: |
      not: a key
    type: webhook
policy:
  approval:
    overrides:
      crm.get: auto
      \"email.send\": manual
components:
  functions: [functions/a.md, functions/b.md]
";

    fn line(path: FieldPath) -> Option<u32> {
        line_of(MANIFEST, &path)
    }

    #[test]
    fn finds_nested_fields_items_and_dotted_keys() {
        assert_eq!(line(FieldPath::key("name")), Some(2));
        assert_eq!(line(FieldPath::key("requires").k("tools").i(1)), Some(6));
        assert_eq!(line(FieldPath::key("triggers").i(0).k("process")), Some(10));
        assert_eq!(line(FieldPath::key("triggers").i(1).k("name")), Some(11));
        assert_eq!(line(FieldPath::key("triggers").i(1).k("type")), Some(14));
        assert_eq!(
            line(
                FieldPath::key("policy")
                    .k("approval")
                    .k("overrides")
                    .k("crm.get")
            ),
            Some(18)
        );
        assert_eq!(
            line(
                FieldPath::key("policy")
                    .k("approval")
                    .k("overrides")
                    .k("email.send")
            ),
            Some(19)
        );
    }

    #[test]
    fn falls_back_to_the_enclosing_field() {
        // Flow sequences have no item lines: the key's line.
        assert_eq!(
            line(FieldPath::key("components").k("functions").i(1)),
            Some(21)
        );
        assert_eq!(line(FieldPath::key("triggers").i(0).k("expr")), Some(8));
        assert_eq!(line(FieldPath::key("nowhere")), None);
    }

    #[test]
    fn block_scalars_hide_their_text() {
        let index = PathIndex::build(MANIFEST);
        assert!(
            index
                .find(&[
                    Seg::Key("triggers".into()),
                    Seg::Index(1),
                    Seg::Key("not".into())
                ])
                .is_none()
        );
    }

    #[test]
    fn splits_frontmatter() {
        let fm = split_frontmatter("---\nname: a\n---\nbody\n").unwrap();
        assert_eq!(
            (fm.yaml, fm.first_line, fm.body),
            (Some("name: a\n"), 2, "body\n")
        );
        assert_eq!(split_frontmatter("# Title\n").unwrap().yaml, None);
        assert!(split_frontmatter("---\nname: a\n").is_err());
        assert_eq!(split_frontmatter("---\n---\n").unwrap().yaml, Some(""));
    }

    #[derive(Debug, Default, serde::Deserialize)]
    struct Doc {
        name: Option<String>,
    }

    #[test]
    fn parse_errors_are_located() {
        let err = parse::<Doc>("name:\n  - a\n").unwrap_err();
        assert_eq!(err.line, Some(2), "{err:?}");
        assert_eq!(err.field.as_deref(), Some("name"), "{err:?}");
        assert_eq!(parse::<Doc>("# nothing\n").unwrap().name, None);
        assert_eq!(parse::<Doc>("~\n").unwrap().name, None);
        assert!(parse::<Doc>("name: [unclosed\n").is_err());
    }
}
