//! The common part of YAML, read directly: block mappings and sequences indented with spaces, flow
//! collections, plain and quoted scalars on one line, `|` literal blocks and comments.
//!
//! libyaml (through serde_norway) took three quarters of loading a large rules file, most of it in
//! its scanner. This reader gives the same values several times faster, for documents written the
//! way configuration files are. It declines (`None`) everything else and everything it cannot be
//! sure libyaml reads the same way: anchors, tags, multi-line plain scalars, folded blocks, tabs, a
//! `:` inside a plain scalar, a number it does not spell exactly as serde_norway would read it, a
//! duplicate key, a value its target type refuses. The caller then reads the document with
//! serde_norway, so every error and every rare form still comes from one place, exactly as before.
//! The differential tests check that whatever this reader accepts, serde_norway reads the same.

use serde::de::{self, DeserializeOwned, Visitor};
use std::borrow::Cow;

/// `text` read as `T`, or `None` where serde_norway must read it.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Option<T> {
    if !printable(text) {
        return None;
    }
    let mut reader = Reader::new(text);
    let root = reader.document()?;
    T::deserialize(Value(&reader.nodes, &root)).ok()
}

/// Deepest nesting of collections read here: the documents' own cap, so a document this reader
/// accepts needs no separate depth check (deeper ones are declined, and refused by that check).
const MAX_DEPTH: usize = super::nesting::MAX_NESTING;
/// libyaml's limit for an implicit key is 1,024 characters; longer keys are left to it.
const MAX_KEY_BYTES: usize = 1_000;

/// A node of the document. A collection's children sit together in the reader's `nodes` (a
/// mapping's as key, value, key, …): one vector for the whole document, not one per collection,
/// which made allocating and freeing them a third of reading a large rules file.
#[derive(Debug)]
enum Node<'a> {
    Scalar { text: Cow<'a, str>, plain: bool },
    Seq(Children),
    Map(Children),
}

#[derive(Clone, Copy, Debug)]
struct Children {
    start: u32,
    nodes: u32,
}

impl Children {
    fn of<'n, 'a>(self, nodes: &'n [Node<'a>]) -> &'n [Node<'a>] {
        &nodes[self.start as usize..(self.start + self.nodes) as usize]
    }
}

impl<'a> Node<'a> {
    fn empty() -> Node<'a> {
        Node::Scalar {
            text: Cow::Borrowed(""),
            plain: true,
        }
    }

    fn key_text(&self) -> &str {
        match self {
            Node::Scalar { text, .. } => text,
            _ => "",
        }
    }
}

/// Only line feeds and characters libyaml accepts in content, and no character it reads as a line
/// break or byte-order mark elsewhere (NEL, LS, PS, BOM); no tab, no carriage return.
fn printable(text: &str) -> bool {
    // In blocks without a branch per byte, so that it compiles to vector code.
    let ascii = text.as_bytes().chunks(64).all(|block| {
        !block.iter().fold(false, |bad, &b| {
            bad | ((b < 0x20) & (b != b'\n')) | (b >= 0x7f)
        })
    });
    if ascii {
        return true;
    }
    text.chars().all(|c| match c {
        '\n' | ' '..='~' => true,
        '\u{2028}' | '\u{2029}' | '\u{feff}' => false,
        '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' => true,
        c => c >= '\u{10000}',
    })
}

/// The bytes a plain scalar's scan stops at to look closer: where it may end. Every byte the
/// `match` in `Reader::plain` looks at must be here, or the scan would pass over it.
const PLAIN_STOP: [bool; 256] = {
    let mut stop = [false; 256];
    let mut k = 0;
    let bytes = *b"\n:#,[]{}";
    while k < bytes.len() {
        stop[bytes[k] as usize] = true;
        k += 1;
    }
    stop
};

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// The children of every collection read so far.
    nodes: Vec<Node<'a>>,
    /// The children of the collections being read, innermost last.
    open: Vec<Node<'a>>,
}

/// Where a scalar read in a line stopped.
#[derive(PartialEq, Eq)]
enum After {
    /// At a `: ` (or `:` at the end of the line): the scalar is a key; the position is past the colon.
    Colon,
    /// Anywhere else (end of line, comment, flow indicator); the position is right after the text.
    Other,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            nodes: Vec::new(),
            open: Vec::new(),
        }
    }

    /// Moves the children of the collection begun at `mark` (in `open`) to `nodes`.
    fn close(&mut self, mark: usize) -> Children {
        let start = self.nodes.len() as u32;
        self.nodes.extend(self.open.drain(mark..));
        Children {
            start,
            nodes: self.nodes.len() as u32 - start,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(b'\n')
    }

    fn peek(&self) -> u8 {
        self.at(self.pos)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn line_start(&self) -> usize {
        self.bytes[..self.pos.min(self.bytes.len())]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
    }

    /// Reads one collection one level deeper, within [`MAX_DEPTH`].
    fn nested(&mut self, read: impl FnOnce(&mut Self) -> Option<Node<'a>>) -> Option<Node<'a>> {
        if self.depth == MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let node = read(self);
        self.depth -= 1;
        node
    }

    /// The spaces a line starts with, from `at` (its start).
    fn indent_at(&self, at: usize) -> usize {
        self.bytes[at.min(self.bytes.len())..]
            .iter()
            .take_while(|&&b| b == b' ')
            .count()
    }

    fn document(&mut self) -> Option<Node<'a>> {
        let indent = self.next_content_line()?;
        let node = self.block_node(indent)?;
        match self.next_content_line() {
            None => Some(node),
            Some(_) => None,
        }
    }

    /// From a line start, past blank and comment-only lines: the indentation of the next line with
    /// content (the position stays at its start), or `None` at the end of the text.
    fn next_content_line(&mut self) -> Option<usize> {
        loop {
            if self.at_end() {
                return None;
            }
            let indent = self.indent_at(self.pos);
            match self.at(self.pos + indent) {
                b'\n' | b'#' => self.skip_line(),
                _ => return Some(indent),
            }
        }
    }

    /// To the start of the next line.
    fn skip_line(&mut self) {
        self.pos = match memchr::memchr(b'\n', &self.bytes[self.pos.min(self.bytes.len())..]) {
            Some(i) => self.pos + i + 1,
            None => self.bytes.len(),
        };
    }

    fn skip_spaces(&mut self) -> usize {
        let start = self.pos;
        while self.peek() == b' ' && !self.at_end() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// After an inline node: only spaces, then a comment or the end of the line (consumed).
    fn end_of_line(&mut self) -> Option<()> {
        let spaces = self.skip_spaces();
        match self.peek() {
            b'\n' => {
                self.skip_line();
                Some(())
            }
            b'#' if spaces > 0 => {
                self.skip_line();
                Some(())
            }
            _ => None,
        }
    }

    fn is_entry(&self, i: usize) -> bool {
        self.at(i) == b'-' && matches!(self.at(i + 1), b' ' | b'\n')
    }

    /// A block collection whose first line (at its start) is indented by `indent`.
    fn block_node(&mut self, indent: usize) -> Option<Node<'a>> {
        self.nested(|r| {
            if r.is_entry(r.pos + indent) {
                r.block_sequence(indent)
            } else {
                r.pos += indent;
                let key = r.block_key()?;
                r.block_mapping(indent, key)
            }
        })
    }

    /// Entries `- …` at column `indent`; the position is at the start of the first one's line.
    fn block_sequence(&mut self, indent: usize) -> Option<Node<'a>> {
        let mark = self.open.len();
        loop {
            self.pos += indent + 1;
            let item = self.value(indent, false)?;
            self.open.push(item);
            match self.next_content_line() {
                Some(next) if next == indent && self.is_entry(self.pos + next) => {}
                Some(next) if next > indent => return None,
                _ => return Some(Node::Seq(self.close(mark))),
            }
        }
    }

    /// A mapping at column `indent` whose first key has been read (the position is past its colon).
    fn block_mapping(&mut self, indent: usize, first: Node<'a>) -> Option<Node<'a>> {
        let mark = self.open.len();
        let mut seen = SeenKeys::default();
        let mut key = first;
        loop {
            let value = self.value(indent, true)?;
            if seen.seen(&self.open[mark..], &key) {
                return None;
            }
            self.open.push(key);
            self.open.push(value);
            match self.next_content_line() {
                Some(next) if next == indent && !self.is_entry(self.pos + next) => {
                    self.pos += indent;
                    key = self.block_key()?;
                }
                Some(next) if next >= indent => return None,
                _ => return Some(Node::Map(self.close(mark))),
            }
        }
    }

    /// A key of a block mapping, at the position; the position ends past its colon.
    fn block_key(&mut self) -> Option<Node<'a>> {
        let start = self.pos;
        let key = match self.peek() {
            b'\'' | b'"' => {
                let key = self.quoted()?;
                self.skip_spaces();
                if !(self.peek() == b':' && matches!(self.at(self.pos + 1), b' ' | b'\n')) {
                    return None;
                }
                self.pos += 1;
                key
            }
            _ => match self.plain(false)? {
                (key, After::Colon) => key,
                (_, After::Other) => return None,
            },
        };
        (self.pos - start <= MAX_KEY_BYTES).then_some(key)
    }

    /// The node after `key:` (in a mapping at column `indent`) or after `-` (in a sequence there):
    /// on the same line, or a block on the lines below; empty (null) when there is neither.
    fn value(&mut self, indent: usize, in_mapping: bool) -> Option<Node<'a>> {
        let spaces = self.skip_spaces();
        match self.peek() {
            b'\n' => return self.value_below(indent, in_mapping),
            b'#' if spaces > 0 => return self.value_below(indent, in_mapping),
            _ if spaces == 0 && !self.at_end() => return None,
            _ => {}
        }
        let column = self.pos - self.line_start();
        match self.peek() {
            b'[' | b'{' => {
                let node = self.flow(indent)?;
                self.end_of_line()?;
                Some(node)
            }
            b'|' => self.literal(indent),
            b'\'' | b'"' => {
                let text = self.quoted()?;
                self.skip_spaces();
                if self.peek() == b':' && matches!(self.at(self.pos + 1), b' ' | b'\n') {
                    if in_mapping {
                        return None;
                    }
                    self.pos += 1;
                    return self.compact_mapping(column, text);
                }
                self.end_of_line()?;
                Some(text)
            }
            _ if self.is_entry(self.pos) => None,
            _ => match self.plain(false)? {
                (key, After::Colon) if !in_mapping => self.compact_mapping(column, key),
                (_, After::Colon) => None,
                (text, After::Other) => {
                    self.end_of_line()?;
                    Some(text)
                }
            },
        }
    }

    /// The value of an entry whose line ends after its indicator.
    fn value_below(&mut self, indent: usize, in_mapping: bool) -> Option<Node<'a>> {
        self.skip_line();
        match self.next_content_line() {
            Some(next) if next > indent => self.block_node(next),
            // A sequence as a mapping's value may sit at the mapping's own column.
            Some(next) if next == indent && in_mapping && self.is_entry(self.pos + next) => {
                self.nested(|r| r.block_sequence(next))
            }
            _ => Some(Node::empty()),
        }
    }

    /// `- key: value` and the keys below it at the same column.
    fn compact_mapping(&mut self, column: usize, key: Node<'a>) -> Option<Node<'a>> {
        self.nested(|r| r.block_mapping(column, key))
    }

    /// A plain scalar on one line. In block context it ends at `: `, ` #` or the line's end; in
    /// flow context also at `,[]{}`. A `:` anywhere else in it declines.
    fn plain(&mut self, flow: bool) -> Option<(Node<'a>, After)> {
        let start = self.pos;
        let first = self.peek();
        let starts_well = match first {
            b'-' => matches!(self.at(start + 1), b'0'..=b'9' | b'.' | b'A'..=b'Z' | b'a'..=b'z'),
            b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
            | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' => false,
            _ => true,
        };
        if !starts_well || self.at_end() {
            return None;
        }
        let mut i = start;
        let after = loop {
            // Most bytes of a scalar are none of those looked at below: passed a table look-up each.
            while self.bytes.get(i).is_some_and(|&b| !PLAIN_STOP[b as usize]) {
                i += 1;
            }
            match self.at(i) {
                b'\n' => break After::Other,
                b':' if matches!(self.at(i + 1), b' ' | b'\n') => break After::Colon,
                b':' => return None,
                b'#' if self.at(i - 1) == b' ' => break After::Other,
                b',' | b'[' | b']' | b'{' | b'}' if flow => break After::Other,
                _ => i += 1,
            }
        };
        let mut end = i.min(self.bytes.len());
        while end > start && self.bytes[end - 1] == b' ' {
            end -= 1;
        }
        let text = &self.text[start..end];
        self.pos = if after == After::Colon { i + 1 } else { end };
        Some((
            Node::Scalar {
                text: Cow::Borrowed(text),
                plain: true,
            },
            after,
        ))
    }

    /// A single- or double-quoted scalar ending on its own line.
    fn quoted(&mut self) -> Option<Node<'a>> {
        let quote = self.peek();
        self.pos += 1;
        let start = self.pos;
        let mut owned: Option<String> = None;
        let mut run = start;
        loop {
            let byte = self.peek();
            if self.at_end() || byte == b'\n' {
                return None;
            }
            if byte == quote {
                if quote == b'\'' && self.at(self.pos + 1) == b'\'' {
                    let buffer = owned.get_or_insert_with(String::new);
                    buffer.push_str(&self.text[run..=self.pos]);
                    self.pos += 2;
                    run = self.pos;
                    continue;
                }
                break;
            }
            if byte == b'\\' && quote == b'"' {
                let buffer = owned.get_or_insert_with(String::new);
                buffer.push_str(&self.text[run..self.pos]);
                let (c, length) = self.escape(self.pos + 1)?;
                buffer.push(c);
                self.pos += 1 + length;
                run = self.pos;
                continue;
            }
            self.pos += 1;
        }
        let text = match owned {
            Some(mut buffer) => {
                buffer.push_str(&self.text[run..self.pos]);
                Cow::Owned(buffer)
            }
            None => Cow::Borrowed(&self.text[start..self.pos]),
        };
        self.pos += 1;
        Some(Node::Scalar { text, plain: false })
    }

    /// The character a double-quoted escape at `at` (past the backslash) stands for, and its length.
    fn escape(&self, at: usize) -> Option<(char, usize)> {
        let simple = match self.at(at) {
            b'0' => '\0',
            b'a' => '\u{7}',
            b'b' => '\u{8}',
            b't' => '\t',
            b'n' => '\n',
            b'v' => '\u{b}',
            b'f' => '\u{c}',
            b'r' => '\r',
            b'e' => '\u{1b}',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{a0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            b'x' | b'u' | b'U' => {
                let digits = match self.at(at) {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self.text.get(at + 1..at + 1 + digits)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let code = u32::from_str_radix(hex, 16).ok()?;
                return Some((char::from_u32(code)?, 1 + digits));
            }
            _ => return None,
        };
        Some((simple, 1))
    }

    /// A `|` or `|-` literal block under a collection at column `indent`.
    fn literal(&mut self, indent: usize) -> Option<Node<'a>> {
        self.pos += 1;
        let strip = self.peek() == b'-';
        if strip {
            self.pos += 1;
        }
        self.skip_spaces();
        if self.peek() != b'\n' || self.at_end() {
            return None;
        }
        self.skip_line();
        let mut text = String::new();
        let mut content_indent = None;
        let mut pending_breaks = 0usize;
        let mut ends_in_break = false;
        while !self.at_end() {
            let line_end = memchr::memchr(b'\n', &self.bytes[self.pos..])
                .map_or(self.bytes.len(), |i| self.pos + i);
            let line = &self.text[self.pos..line_end];
            let spaces = line.bytes().take_while(|&b| b == b' ').count();
            if spaces == line.len() {
                // An empty line: kept as a break; one with spaces past the indentation declines.
                if content_indent.is_none_or(|k| spaces > k) {
                    return None;
                }
                pending_breaks += 1;
            } else {
                let k = *content_indent.get_or_insert(spaces);
                if k <= indent {
                    return None;
                }
                if spaces < k {
                    break;
                }
                if !text.is_empty() {
                    text.push('\n');
                }
                for _ in 0..pending_breaks {
                    text.push('\n');
                }
                pending_breaks = 0;
                text.push_str(&line[k..]);
                ends_in_break = line_end < self.bytes.len();
            }
            self.skip_line();
        }
        content_indent?; // no line with content: an empty block, left to libyaml
        // Trailing empty lines are dropped; `|` keeps the last line's break, `|-` none.
        if !strip && ends_in_break {
            text.push('\n');
        }
        Some(Node::Scalar {
            text: Cow::Owned(text),
            plain: false,
        })
    }

    /// Between flow tokens: spaces, comments and line breaks; a new line must be indented past
    /// the block collection the flow collection is in.
    fn flow_space(&mut self, indent: usize) -> Option<()> {
        loop {
            let spaces = self.skip_spaces();
            match self.peek() {
                _ if self.at_end() => return None,
                b'#' if spaces > 0 || self.pos == self.line_start() => self.skip_line(),
                b'\n' => self.skip_line(),
                _ => return Some(()),
            }
            if self.at_end() {
                return None;
            }
            let line_indent = self.indent_at(self.pos);
            if line_indent <= indent && !matches!(self.at(self.pos + line_indent), b'\n' | b'#') {
                return None;
            }
        }
    }

    /// `[…]` or `{…}` at the position, in a block collection at column `indent`.
    fn flow(&mut self, indent: usize) -> Option<Node<'a>> {
        self.nested(|r| r.flow_collection(indent))
    }

    fn flow_collection(&mut self, indent: usize) -> Option<Node<'a>> {
        let open = self.peek();
        let close = if open == b'[' { b']' } else { b'}' };
        self.pos += 1;
        let mark = self.open.len();
        let mut seen = SeenKeys::default();
        loop {
            self.flow_space(indent)?;
            if self.peek() == close {
                self.pos += 1;
                break;
            }
            if open == b'[' {
                let (item, after) = self.flow_node(indent)?;
                if after == After::Colon {
                    return None;
                }
                self.flow_space(indent)?;
                if self.peek() == b':' {
                    return None;
                }
                self.open.push(item);
            } else {
                let key_start = self.pos;
                let key = match self.flow_node(indent)? {
                    (key @ Node::Scalar { .. }, After::Colon) => key,
                    (key @ Node::Scalar { plain: false, .. }, After::Other) => {
                        self.skip_spaces();
                        if !(self.peek() == b':' && self.at(self.pos + 1) == b' ') {
                            return None;
                        }
                        self.pos += 1;
                        key
                    }
                    _ => return None,
                };
                if self.pos - key_start > MAX_KEY_BYTES {
                    return None;
                }
                self.flow_space(indent)?;
                let (value, after) = self.flow_node(indent)?;
                if after == After::Colon {
                    return None;
                }
                self.flow_space(indent)?;
                if seen.seen(&self.open[mark..], &key) {
                    return None;
                }
                self.open.push(key);
                self.open.push(value);
            }
            match self.peek() {
                b',' => self.pos += 1,
                byte if byte == close => {
                    self.pos += 1;
                    break;
                }
                _ => return None,
            }
        }
        let children = self.close(mark);
        Some(if open == b'[' {
            Node::Seq(children)
        } else {
            Node::Map(children)
        })
    }

    /// A node inside a flow collection (the position is at its first character).
    fn flow_node(&mut self, indent: usize) -> Option<(Node<'a>, After)> {
        match self.peek() {
            b'[' | b'{' => Some((self.flow(indent)?, After::Other)),
            b'\'' | b'"' => Some((self.quoted()?, After::Other)),
            _ => self.plain(true),
        }
    }
}

/// The keys of one mapping so far: compared one by one while few, by hash once many (a collision
/// only declines the document), so a mapping of 10,000 keys is not read in quadratic time.
#[derive(Default)]
struct SeenKeys(Option<std::collections::HashSet<u64>>);

impl SeenKeys {
    /// Whether `key` is among the keys of `entries` (key, value, key, …).
    fn seen(&mut self, entries: &[Node<'_>], key: &Node<'_>) -> bool {
        let key = key.key_text();
        let mut keys = entries.iter().step_by(2).map(Node::key_text);
        if entries.len() < 32 {
            return keys.any(|k| k == key);
        }
        let hash = |text: &str| {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut hasher);
            hasher.finish()
        };
        let hashes = self.0.get_or_insert_with(|| keys.map(hash).collect());
        !hashes.insert(hash(key))
    }
}

/// Why this reader declined; the caller reads the document with serde_norway instead.
#[derive(Debug)]
pub struct Declined;

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("left to serde_norway")
    }
}

impl std::error::Error for Declined {}

impl de::Error for Declined {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Declined
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Decimal digits with no leading zero (or `0` alone): the integers every YAML reader agrees on.
fn decimal_digits(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes[0] != b'0' || bytes.len() == 1)
}

fn unsigned(text: &str) -> Option<u64> {
    decimal_digits(text).then(|| text.parse().ok())?
}

fn signed(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    decimal_digits(digits).then(|| text.parse().ok())?
}

/// `-?digits(.digits)?`, as serde_norway reads a float where one is expected.
fn float(text: &str) -> Option<f64> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !(digits(whole) && digits(fraction)) {
        return None;
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// A plain scalar where any type may come: null, a boolean, an integer, a float or a string, as
/// serde_norway resolves it; a number in any other spelling (hex, exponent, leading zero, `.inf`)
/// declines.
fn visit_plain<'de, V: Visitor<'de>>(text: &str, visitor: V) -> Result<V::Value, Declined> {
    if is_null(text) {
        return visitor.visit_unit();
    }
    if let Some(b) = boolean(text) {
        return visitor.visit_bool(b);
    }
    if !matches!(text.as_bytes()[0], b'0'..=b'9' | b'+' | b'-' | b'.') {
        return visitor.visit_str(text);
    }
    if let Some(u) = unsigned(text) {
        return visitor.visit_u64(u);
    }
    if let Some(i) = signed(text) {
        return visitor.visit_i64(i);
    }
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    if let Some((whole, _)) = unsigned.split_once('.')
        && decimal_digits(whole)
        && let Some(f) = float(text)
    {
        return visitor.visit_f64(f);
    }
    // Not a number in any spelling (hex, octal, binary, exponent, `inf`) if it holds a character
    // none of them uses, as in `24h` or `15m`.
    let numeric = |b: u8| b.is_ascii_hexdigit() || b"xXoOiInNtTyY+-.".contains(&b);
    if text.bytes().all(numeric) {
        return Err(Declined);
    }
    visitor.visit_str(text)
}

/// A node as a serde deserializer that makes the visitor calls serde_norway makes for it.
struct Value<'n, 'a>(&'n [Node<'a>], &'n Node<'a>);

impl<'n, 'a> Value<'n, 'a> {
    fn plain(&self) -> Option<&'n str> {
        match self.1 {
            Node::Scalar { text, plain: true } => Some(text),
            _ => None,
        }
    }

    fn empty_plain(&self) -> bool {
        self.plain().is_some_and(str::is_empty)
    }
}

/// Deserializer methods that read a value as another kind does: narrower numbers as the widest of
/// their kind (range checks are the visitor's, as with serde_norway), every string-like as `str`.
macro_rules! read_as {
    ($($narrow:ident),+ => $wide:ident) => {$(
        fn $narrow<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
            self.$wide(visitor)
        }
    )+};
}

impl<'de, 'n, 'a> de::Deserializer<'de> for Value<'n, 'a> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.1 {
            Node::Scalar { text, plain: true } => visit_plain(text, visitor),
            Node::Scalar { text, .. } => visitor.visit_str(text),
            Node::Seq(items) => visitor.visit_seq(Items(self.0, items.of(self.0).iter())),
            Node::Map(entries) => visitor.visit_map(Entries(self.0, entries.of(self.0).iter())),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        visitor.visit_bool(self.plain().and_then(boolean).ok_or(Declined)?)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        visitor.visit_i64(self.plain().and_then(signed).ok_or(Declined)?)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        visitor.visit_u64(self.plain().and_then(unsigned).ok_or(Declined)?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        visitor.visit_f64(self.plain().and_then(float).ok_or(Declined)?)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.1 {
            Node::Scalar { text, .. } => visitor.visit_str(text),
            _ => Err(Declined),
        }
    }

    read_as!(deserialize_i32, deserialize_i16, deserialize_i8 => deserialize_i64);
    read_as!(deserialize_u32, deserialize_u16, deserialize_u8 => deserialize_u64);
    read_as!(deserialize_f32 => deserialize_f64);
    read_as!(deserialize_string, deserialize_char, deserialize_identifier => deserialize_str);

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Declined> {
        Err(Declined)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Declined> {
        Err(Declined)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.plain() {
            Some(text) if is_null(text) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.plain() {
            Some(text) if is_null(text) => visitor.visit_unit(),
            _ => Err(Declined),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Declined> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Declined> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.1 {
            Node::Seq(items) => visitor.visit_seq(Items(self.0, items.of(self.0).iter())),
            _ if self.empty_plain() => visitor.visit_seq(Items(self.0, [].iter())),
            _ => Err(Declined),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Declined> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Declined> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.1 {
            Node::Map(entries) => visitor.visit_map(Entries(self.0, entries.of(self.0).iter())),
            _ if self.empty_plain() => visitor.visit_map(Entries(self.0, [].iter())),
            _ => Err(Declined),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Declined> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Declined> {
        match self.1 {
            Node::Scalar { .. } => visitor.visit_enum(self),
            _ => Err(Declined),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        visitor.visit_unit()
    }
}

/// A scalar naming a unit variant, the only kind of enum serde_norway reads without a tag.
impl<'de, 'n, 'a> de::EnumAccess<'de> for Value<'n, 'a> {
    type Error = Declined;
    type Variant = Self;

    fn variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self), Declined> {
        Ok((seed.deserialize(Value(self.0, self.1))?, self))
    }
}

impl<'de, 'n, 'a> de::VariantAccess<'de> for Value<'n, 'a> {
    type Error = Declined;

    fn unit_variant(self) -> Result<(), Declined> {
        Ok(())
    }

    fn newtype_variant_seed<S: de::DeserializeSeed<'de>>(self, _: S) -> Result<S::Value, Declined> {
        Err(Declined)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Declined> {
        Err(Declined)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Declined> {
        Err(Declined)
    }
}

struct Items<'n, 'a>(&'n [Node<'a>], std::slice::Iter<'n, Node<'a>>);

impl<'de, 'n, 'a> de::SeqAccess<'de> for Items<'n, 'a> {
    type Error = Declined;

    fn next_element_seed<S: de::DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Declined> {
        self.1
            .next()
            .map(|node| seed.deserialize(Value(self.0, node)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.1.len())
    }
}

/// A mapping's children, key then value.
struct Entries<'n, 'a>(&'n [Node<'a>], std::slice::Iter<'n, Node<'a>>);

impl<'de, 'n, 'a> de::MapAccess<'de> for Entries<'n, 'a> {
    type Error = Declined;

    fn next_key_seed<S: de::DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Declined> {
        self.1
            .next()
            .map(|key| seed.deserialize(Value(self.0, key)))
            .transpose()
    }

    fn next_value_seed<S: de::DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Declined> {
        seed.deserialize(Value(self.0, self.1.next().ok_or(Declined)?))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.1.len() / 2)
    }
}

#[cfg(test)]
mod tests;
