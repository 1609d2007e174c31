//! The import graph of a Rust source tree (`plugin/src`), and the circles in it.
//!
//! Read from the text, without compiling: comments, strings and `#[cfg(test)]` items are blanked out,
//! then every `use` and every inline path (`crate::a::b`, `super::c`, `child::d`, an alias a `use`
//! brought in) is resolved to the deepest module it names. Within each folder the nodes are its child
//! modules and the folder module's own items; an edge A → B means code in A (or inside A) names
//! something in B. A `pub use` is a re-export, not a use: a path through it is followed to the module
//! that defines the item. `mod` declarations are containment, not edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// A circle among the nodes of one folder, with a witness for each edge in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// The folder module (`crate`, `crate::experts`, ...).
    pub level: String,
    /// Its nodes in the circle: child module names, or `(own items)` for the folder module's own code.
    pub nodes: Vec<String>,
    /// `from → to: file:line names path`, one per edge inside the circle.
    pub witnesses: Vec<String>,
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "in {}: {}", self.level, self.nodes.join(" <-> "))?;
        for witness in &self.witnesses {
            writeln!(f, "    {witness}")?;
        }
        Ok(())
    }
}

/// The circles in the source tree under `src` (the folder holding `lib.rs`).
pub fn circles_in_dir(src: &Path) -> std::io::Result<Vec<Circle>> {
    let mut files = BTreeMap::new();
    read_tree(src, src, &mut files)?;
    Ok(circles(&files))
}

fn read_tree(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            read_tree(root, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under the root").to_path_buf();
            files.insert(relative, std::fs::read_to_string(&path)?);
        }
    }
    Ok(())
}

/// Module path segments (`[]` for the crate root) of a file relative to the source root.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

struct Module {
    file: PathBuf,
    /// The text with comments, strings and test-only items blanked (same lines).
    code: String,
    /// Names a `use` binds here (alias → the path it names), and which of them are `pub`.
    aliases: BTreeMap<String, Vec<String>>,
    reexports: BTreeSet<String>,
}

/// The circles among the modules given as (path relative to the source root → text).
pub fn circles(files: &BTreeMap<PathBuf, String>) -> Vec<Circle> {
    let mut modules: BTreeMap<Vec<String>, Module> = BTreeMap::new();
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    for (file, text) in files {
        let path = module_of(file);
        let (code, test_children) = without_test_items(&blank_comments_and_literals(text));
        for child in test_children {
            let mut child_path = path.clone();
            child_path.push(child);
            test_only.insert(child_path);
        }
        let mut aliases = BTreeMap::new();
        let mut reexports = BTreeSet::new();
        for decl in use_declarations(&code) {
            for (alias, target) in decl.bindings {
                if decl.public {
                    reexports.insert(alias.clone());
                }
                aliases.insert(alias, target);
            }
        }
        let module = Module { file: file.clone(), code, aliases, reexports };
        modules.insert(path, module);
    }
    modules.retain(|path, _| !test_only.iter().any(|t| path.starts_with(t)));

    let graph = Graph { modules: &modules };
    let mut edges: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for (from, module) in &modules {
        for (target, line, written) in graph.references(from, module) {
            if &target == from {
                continue;
            }
            let (level, a, b) = level_edge(from, &target);
            let witness = format!("{}:{line} names {written}", module.file.display());
            edges.entry(level).or_default().entry((a, b)).or_insert(witness);
        }
    }
    let mut found = Vec::new();
    for (level, level_edges) in &edges {
        for component in strongly_connected(level_edges) {
            let witnesses = level_edges
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .map(|((a, b), w)| format!("{a} -> {b}: {w}"))
                .collect();
            found.push(Circle {
                level: display_path(level),
                nodes: component.into_iter().collect(),
                witnesses,
            });
        }
    }
    found
}

const OWN_ITEMS: &str = "(own items)";

fn display_path(path: &[String]) -> String {
    std::iter::once("crate")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// The folder level an edge belongs to and its two nodes there.
fn level_edge(from: &[String], to: &[String]) -> (Vec<String>, String, String) {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    let level = from[..common].to_vec();
    let node = |path: &[String]| path.get(common).cloned().unwrap_or_else(|| OWN_ITEMS.to_string());
    (level, node(from), node(to))
}

struct Graph<'a> {
    modules: &'a BTreeMap<Vec<String>, Module>,
}

impl Graph<'_> {
    fn is_module(&self, path: &[String]) -> bool {
        self.modules.contains_key(path)
    }

    /// Every module `module` names, with the line and the path as written. `pub use` lines name
    /// nothing themselves (a path through them is followed to where the item is defined).
    fn references(&self, here: &[String], module: &Module) -> Vec<(Vec<String>, usize, String)> {
        let mut found = Vec::new();
        for decl in use_declarations(&module.code) {
            if decl.public {
                continue;
            }
            for (_, target) in decl.bindings {
                if let Some(resolved) = self.resolve(here, &target, true) {
                    found.push((resolved, decl.line, target.join("::")));
                }
            }
        }
        for (line, segments) in inline_paths(&module.code) {
            if let Some(resolved) = self.resolve(here, &segments, false) {
                found.push((resolved, line, segments.join("::")));
            }
        }
        found
    }

    /// The deepest module a path names, seen from module `here`; `None` for another crate's path or a
    /// local item. `from_use`: the path of a `use`, where a bare first segment is a child module only.
    fn resolve(&self, here: &[String], segments: &[String], from_use: bool) -> Option<Vec<String>> {
        let (mut current, rest) = self.start(here, segments, from_use)?;
        for segment in rest {
            let mut child = current.clone();
            child.push(segment.clone());
            if self.is_module(&child) {
                current = child;
                continue;
            }
            let module = self.modules.get(&current)?;
            if module.reexports.contains(segment) {
                let target = module.aliases.get(segment)?;
                let defining = self.resolve(&current, target, true)?;
                return Some(defining);
            }
            break;
        }
        Some(current)
    }

    fn start<'s>(
        &self,
        here: &[String],
        segments: &'s [String],
        from_use: bool,
    ) -> Option<(Vec<String>, &'s [String])> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some((Vec::new(), &segments[1..])),
            "self" => Some((here.to_vec(), &segments[1..])),
            "super" => {
                let mut current = here.to_vec();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    current.pop()?;
                    rest = &rest[1..];
                }
                Some((current, rest))
            }
            _ => {
                let mut child = here.to_vec();
                child.push(first.clone());
                if self.is_module(&child) {
                    return Some((here.to_vec(), segments));
                }
                if from_use {
                    return None;
                }
                let target = self.modules.get(here)?.aliases.get(first)?;
                let resolved = self.resolve(here, target, true)?;
                Some((resolved, &segments[1..]))
            }
        }
    }
}

/// Tarjan's strongly connected components with more than one node.
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    let mut state = Tarjan::default();
    for node in next.keys() {
        if !state.index.contains_key(node) {
            state.visit(node, &next);
        }
    }
    state.components
}

#[derive(Default)]
struct Tarjan<'a> {
    counter: usize,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    components: Vec<BTreeSet<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, node: &'a str, next: &BTreeMap<&'a str, Vec<&'a str>>) {
        self.index.insert(node, self.counter);
        self.low.insert(node, self.counter);
        self.counter += 1;
        self.stack.push(node);
        self.on_stack.insert(node);
        for &to in &next[node] {
            if !self.index.contains_key(to) {
                self.visit(to, next);
                let low = self.low[node].min(self.low[to]);
                self.low.insert(node, low);
            } else if self.on_stack.contains(to) {
                let low = self.low[node].min(self.index[to]);
                self.low.insert(node, low);
            }
        }
        if self.low[node] == self.index[node] {
            let mut component = BTreeSet::new();
            while let Some(top) = self.stack.pop() {
                self.on_stack.remove(top);
                component.insert(top.to_string());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                self.components.push(component);
            }
        }
    }
}

/// A source file's product code: comments, literals and `#[cfg(test)]` items blanked, lines kept
/// (for checks that read code by pattern and name its lines).
pub fn product_code(text: &str) -> String {
    without_test_items(&blank_comments_and_literals(text)).0
}

/// Comments, string and char literals replaced by spaces; new lines kept so lines still count.
fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if let Some(length) = raw_string_length(&chars, i) {
            for &ch in &chars[i..i + length] {
                blank(&mut out, ch);
            }
            i += length;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && is_char_literal(&chars, i) {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// `r"..."`, `r#"..."#`, `br#"..."#` at `i`: its whole length.
fn raw_string_length(chars: &[char], i: usize) -> Option<usize> {
    if is_ident_char(i.checked_sub(1).and_then(|p| chars.get(p).copied())) {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && chars[j + 1..].iter().take(hashes).filter(|&&c| c == '#').count() == hashes
        {
            return Some(j + 1 + hashes - i);
        }
        j += 1;
    }
    Some(chars.len() - i)
}

/// A `'` that opens a char literal rather than a lifetime or label.
fn is_char_literal(chars: &[char], i: usize) -> bool {
    matches!(
        (chars.get(i + 1), chars.get(i + 2)),
        (Some('\\'), _) | (Some(_), Some('\''))
    )
}

/// The code without `#[cfg(test)]` items, and the names of test-only child modules (`mod tests;`).
fn without_test_items(code: &str) -> (String, Vec<String>) {
    let mut out: Vec<char> = code.chars().collect();
    let mut test_children = Vec::new();
    let text: String = out.iter().collect();
    let mut search_from = 0;
    while let Some(found) = text[search_from..].find("#[cfg(test)]") {
        let start = search_from + found;
        let char_start = text[..start].chars().count();
        let mut i = char_start + "#[cfg(test)]".len();
        let rest: String = out[i..].iter().collect();
        let item_start = rest.trim_start();
        if let Some(after_mod) = item_start.strip_prefix("mod ") {
            let name: String = after_mod.trim_start().chars().take_while(|&c| is_ident_char(Some(c))).collect();
            let after_name = after_mod.trim_start()[name.len()..].trim_start();
            if after_name.starts_with(';') {
                test_children.push(name);
            }
        }
        let mut depth = 0usize;
        let mut end = out.len();
        while i < out.len() {
            match out[i] {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        for ch in &mut out[char_start..end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        search_from = start + "#[cfg(test)]".len();
    }
    (out.into_iter().collect(), test_children)
}

struct UseDeclaration {
    public: bool,
    line: usize,
    /// (the name it binds here, the path it names); a glob binds `*`.
    bindings: Vec<(String, Vec<String>)>,
}

/// Every `use` declaration in the (blanked) code, its tree expanded.
fn use_declarations(code: &str) -> Vec<UseDeclaration> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].text == "use" && (i == 0 || !matches!(tokens[i - 1].text.as_str(), "::")) {
            let public = i > 0 && is_visibility_end(&tokens, i - 1);
            let line = tokens[i].line;
            let end = tokens[i..].iter().position(|t| t.text == ";").map_or(tokens.len(), |p| i + p);
            let mut bindings = Vec::new();
            expand_use_tree(&tokens[i + 1..end], &mut Vec::new(), &mut bindings);
            found.push(UseDeclaration { public, line, bindings });
            i = end;
        }
        i += 1;
    }
    found
}

/// Whether the token at `i` ends a visibility (`pub`, `pub(crate)`, `pub(super)`, `pub(in ...)`).
fn is_visibility_end(tokens: &[Token], i: usize) -> bool {
    if tokens[i].text == "pub" {
        return true;
    }
    if tokens[i].text != ")" {
        return false;
    }
    let open = tokens[..i].iter().rposition(|t| t.text == "(");
    open.is_some_and(|o| o > 0 && tokens[o - 1].text == "pub")
}

fn expand_use_tree(tokens: &[Token], prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let mut i = 0;
    let depth_at_start = prefix.len();
    while i < tokens.len() {
        let text = tokens[i].text.as_str();
        match text {
            "::" => {}
            "{" => {
                let close = matching_brace(tokens, i);
                for part in split_top_level_commas(&tokens[i + 1..close]) {
                    expand_use_tree(part, prefix, out);
                }
                prefix.truncate(depth_at_start);
                return;
            }
            "*" => out.push(("*".to_string(), prefix.clone())),
            "as" => {
                if let (Some(alias), Some(_)) = (tokens.get(i + 1), prefix.last())
                    && let Some(last) = out.last_mut().filter(|(_, p)| p == prefix)
                {
                    last.0 = alias.text.clone();
                }
                break;
            }
            "self" if !prefix.is_empty() && tokens.get(i + 1).is_none_or(|t| t.text == "as") => {
                let name = prefix.last().cloned().unwrap_or_default();
                out.push((name, prefix.clone()));
            }
            _ => {
                prefix.push(text.to_string());
                let ends_here = tokens.get(i + 1).is_none_or(|t| t.text == "as");
                if ends_here {
                    out.push((text.to_string(), prefix.clone()));
                }
            }
        }
        i += 1;
    }
    prefix.truncate(depth_at_start);
}

fn matching_brace(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (j, token) in tokens.iter().enumerate().skip(open) {
        match token.text.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

fn split_top_level_commas(tokens: &[Token]) -> Vec<&[Token]> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (j, token) in tokens.iter().enumerate() {
        match token.text.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(&tokens[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    parts.retain(|p| !p.is_empty());
    parts
}

/// Paths of two or more segments outside `use` declarations (`a::b`, `crate::x::y`), with their line.
fn inline_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].text == "use" {
            i += tokens[i..].iter().position(|t| t.text == ";").unwrap_or(tokens.len() - i);
            continue;
        }
        let starts_path = tokens[i].is_ident && (i == 0 || tokens[i - 1].text != "::");
        if starts_path && tokens.get(i + 1).is_some_and(|t| t.text == "::") {
            let line = tokens[i].line;
            let mut segments = vec![tokens[i].text.clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|t| t.text == "::")
                && tokens.get(j + 1).is_some_and(|t| t.is_ident)
            {
                segments.push(tokens[j + 1].text.clone());
                j += 2;
            }
            found.push((line, segments));
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

struct Token {
    text: String,
    line: usize,
    is_ident: bool,
}

/// Identifiers, `::` and single punctuation characters, with their 1-based line.
fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && is_ident_char(Some(chars[i])) {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let text = text.strip_prefix("r#").map(str::to_string).unwrap_or(text);
            out.push(Token { text, line, is_ident: true });
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token { text: "::".to_string(), line, is_ident: false });
            i += 2;
        } else {
            out.push(Token { text: c.to_string(), line, is_ident: false });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> BTreeMap<PathBuf, String> {
        files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect()
    }

    fn names(found: &[Circle]) -> Vec<String> {
        found.iter().map(|c| format!("{}: {}", c.level, c.nodes.join(","))).collect()
    }

    #[test]
    fn a_circle_between_two_top_level_modules_is_found_with_witnesses() {
        let found = circles(&tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a.rs", "use crate::b::Thing;\n"),
            ("b.rs", "pub struct Thing;\nfn f() { crate::a::g(); }\n"),
        ]));
        assert_eq!(names(&found), ["crate: a,b"]);
        assert!(found[0].witnesses.iter().any(|w| w.contains("b.rs:2 names crate::a::g")), "{found:?}");
        assert!(found[0].witnesses.iter().any(|w| w.contains("a.rs:1 names crate::b::Thing")), "{found:?}");
    }

    #[test]
    fn a_one_way_graph_has_no_circle() {
        let found = circles(&tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub use a::Engine;\n"),
            ("a.rs", "use crate::b::{self, Thing};\nfn f() { b::g(); }\n"),
            ("b.rs", "pub struct Thing;\npub fn g() {}\n"),
        ]));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_circle_through_a_longer_path_and_an_alias_is_found() {
        let found = circles(&tree(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("a.rs", "use crate::b;\nfn f() { b::x(); }\n"),
            ("b.rs", "fn x() { crate::c::y() }\n"),
            ("c.rs", "use crate::a as first;\nfn y() { first::f() }\n"),
        ]));
        assert_eq!(names(&found), ["crate: a,b,c"]);
    }

    #[test]
    fn a_folder_module_using_its_child_that_uses_the_folders_own_items_is_a_circle() {
        let found = circles(&tree(&[
            ("lib.rs", "mod experts;\n"),
            ("experts/mod.rs", "mod package;\npub struct Shared;\nfn load() { package::read(); }\n"),
            ("experts/package.rs", "use super::Shared;\npub fn read() {}\n"),
        ]));
        assert_eq!(names(&found), ["crate::experts: (own items),package"]);
    }

    #[test]
    fn re_exports_declarations_comments_strings_and_tests_are_not_uses() {
        let found = circles(&tree(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "mod inner;\npub use inner::Thing;\npub use crate::b::Other;\n"),
            ("a/inner.rs", "pub struct Thing;\n"),
            (
                "b.rs",
                "use crate::a::Thing;\npub struct Other;\n\
                 // crate::a::mentioned in a comment\n\
                 /* crate::a::x /* nested */ */\n\
                 const S: &str = \"crate::a::in_a_string\";\n\
                 const R: &str = r#\"crate::a::raw \"quoted\"\"#;\n\
                 const C: char = '\"';\n\
                 fn lifetime<'a>(x: &'a str) -> &'a str { x }\n\
                 #[cfg(test)]\nmod tests { use crate::a::inner::Thing; }\n\
                 #[cfg(test)]\nmod more;\n",
            ),
            ("b/more.rs", "use crate::a::Thing;\n"),
        ]));
        // b names a::Thing, which a only re-exports: the edge is b -> a (inner), and a's re-export
        // of b::Other is not a use, so there is no circle.
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_use_inside_a_test_module_does_not_count_but_the_same_use_outside_does() {
        let base = [
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ];
        let mut in_tests = tree(&base);
        in_tests.insert("b.rs".into(), "pub struct B;\n#[cfg(test)]\nmod tests {\n use crate::a::A;\n}\n".into());
        assert!(circles(&in_tests).is_empty());
        let mut outside = tree(&base);
        outside.insert("b.rs".into(), "pub struct B;\nfn f() -> crate::a::A { todo!() }\n".into());
        assert_eq!(names(&circles(&outside)), ["crate: a,b"]);
    }

    #[test]
    fn super_paths_and_nested_use_trees_resolve_to_the_named_module() {
        let found = circles(&tree(&[
            ("lib.rs", "mod x;\n"),
            ("x/mod.rs", "mod p;\nmod q;\n"),
            ("x/p.rs", "use super::{q::{self, Q}, p};\n"),
            ("x/q.rs", "pub struct Q;\nfn f() { super::super::x::p::g(); }\n"),
        ]));
        assert_eq!(names(&found), ["crate::x: p,q"]);
    }
}
