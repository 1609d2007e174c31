//! The common part of YAML, read directly: block mappings and sequences indented with spaces, flow
//! collections, plain and quoted scalars on one line, `|` literal blocks and comments.
//!
//! libyaml took three quarters of loading a large rules file, most of it in its scanner. This
//! reader gives the same events several times faster, for documents written the way configuration
//! files are. It declines (`None`) everything else and everything it cannot be sure libyaml reads
//! the same way: anchors, tags, multi-line plain scalars, folded blocks, tabs, a `:` inside a plain
//! scalar, a duplicate key. The caller ([`super`]) then has libyaml read the document, as it
//! does to locate any error found in these events, so every error and every rare form still comes
//! from one place. The differential tests check that whatever this reader accepts, libyaml gives
//! the same events and serde_norway reads the same values.

use super::events::{Document, Event, Style};
use std::borrow::Cow;

/// The events of `text`, or `None` where libyaml must read it.
pub fn events(text: &str) -> Option<Document<'_>> {
    if !printable(text) {
        return None;
    }
    let mut reader = Reader::new(text);
    let root = reader.document()?;
    // An event per node, one more per collection (its end), and the root's.
    let collections = reader
        .nodes
        .iter()
        .filter(|node| !matches!(node, Node::Scalar { .. }));
    let mut events = Vec::with_capacity(reader.nodes.len() + collections.count() + 2);
    push_events(&reader.nodes, &root, &mut events);
    Some(Document {
        events,
        marks: Vec::new(),
        error: None,
        more_documents: false,
    })
}

/// Deepest nesting of collections read here: the documents' own cap, so a document this reader
/// accepts needs no separate depth check (deeper ones are declined, and refused by that check).
const MAX_DEPTH: usize = crate::documents::nesting::MAX_NESTING;
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

/// The document's events, as libyaml gives them for it: scalars keep their style,
/// plain or not (quoted and literal scalars read alike where no tag is).
fn push_events<'a>(nodes: &[Node<'a>], node: &Node<'a>, out: &mut Vec<Event<'a>>) {
    let event = match node {
        Node::Scalar { text, plain } => Event::Scalar {
            value: text.clone(),
            style: if *plain { Style::Plain } else { Style::Other },
            tag: None,
        },
        Node::Seq(items) => {
            out.push(Event::SequenceStart(None));
            for item in items.of(nodes) {
                push_events(nodes, item, out);
            }
            Event::SequenceEnd
        }
        Node::Map(entries) => {
            out.push(Event::MappingStart(None));
            for child in entries.of(nodes) {
                push_events(nodes, child, out);
            }
            Event::MappingEnd
        }
    };
    out.push(event);
}

#[cfg(test)]
mod tests;
