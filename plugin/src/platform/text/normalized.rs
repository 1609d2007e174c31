//! Text as secrets and keywords are matched: NFKC (full-width letters, ligatures and the like as
//! their plain forms), without the invisible characters that can split a word (zero-width ones, the
//! soft hyphen). For secrets, also with curly quotes made straight and a line break inside a long
//! token joined. Each piece of the matched form remembers where it came from, so a match maps back
//! to the span of the original text it covers.
//!
//! Normalization is made character by character with its combining marks, not across starters:
//! Hangul jamo written apart stay apart. That is all a match needs.

use std::ops::Range;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// What the matched form changes beyond NFKC and invisible characters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Curly and angle quotes become `'` and `"`.
    pub straight_quotes: bool,
    /// A line break inside a long token with letters and digits is left out: a key wrapped
    /// across two lines is one key.
    pub join_wrapped_tokens: bool,
}

impl Options {
    pub const SECRETS: Options = Options {
        straight_quotes: true,
        join_wrapped_tokens: true,
    };
}

/// Characters with no width that split a word without showing: zero-width space, joiners, word
/// joiner and invisible operators, the byte-order mark, the Mongolian vowel separator, and the soft
/// hyphen.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}'
    )
}

/// The shortest token, with letters and digits, a line break inside which is taken for a wrap.
const WRAPPED_TOKEN_MIN_CHARS: usize = 24;

/// The fewest characters of such a token before its line break.
const WRAPPED_BEFORE_MIN_CHARS: usize = 8;

/// The matched form of a text, and the way back to the text.
#[derive(Debug)]
pub struct Normalized<'a> {
    original: &'a str,
    text: String,
    /// Where each piece starts: its byte in `text`, its byte in `original`. Empty when the two are
    /// the same text.
    pieces: Vec<(usize, usize)>,
}

impl<'a> Normalized<'a> {
    pub fn new(original: &'a str, options: Options) -> Normalized<'a> {
        if !needs_work(original, options) {
            return Normalized {
                original,
                text: original.to_string(),
                pieces: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len());
        let mut pieces = Vec::with_capacity(original.len());
        let mut chars = original.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            pieces.push((text.len(), at));
            if c.is_ascii() && chars.peek().is_none_or(|&(_, next)| next.is_ascii()) {
                let wrapped = options.join_wrapped_tokens
                    && is_line_break(original, at)
                    && is_wrap(&text, original[at..].trim_start_matches(['\r', '\n']));
                if !wrapped {
                    text.push(c);
                }
                continue;
            }
            let mut end = at + c.len_utf8();
            while let Some(&(next_at, next)) = chars.peek() {
                if canonical_combining_class(next) == 0 {
                    break;
                }
                end = next_at + next.len_utf8();
                chars.next();
            }
            for n in original[at..end].nfkc() {
                if is_invisible(n) {
                    continue;
                }
                text.push(if options.straight_quotes {
                    straight(n)
                } else {
                    n
                });
            }
        }
        Normalized {
            original,
            text,
            pieces,
        }
    }

    /// The text it was made from.
    pub fn original(&self) -> &'a str {
        self.original
    }

    /// The matched form.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The span of the original text that `range` of the matched form came from: from the start
    /// of the piece its first byte is in to the end of the piece its last byte is in.
    pub fn original_span(&self, range: Range<usize>) -> Range<usize> {
        if self.pieces.is_empty() {
            return range;
        }
        let piece_at = |byte: usize| self.pieces.partition_point(|&(t, _)| t <= byte) - 1;
        let start = self.pieces[piece_at(range.start)].1;
        let last = piece_at(range.end.saturating_sub(1).max(range.start));
        let end = self
            .pieces
            .get(last + 1)
            .map_or(self.original.len(), |&(_, o)| o);
        start..end.max(start)
    }
}

/// Whether the matched form differs from the text: most texts are NFKC already and have no
/// invisible character, curly quote or wrapped token.
fn needs_work(text: &str, options: Options) -> bool {
    let wrapped = options.join_wrapped_tokens && has_wrapped_token(text);
    if text.is_ascii() {
        return wrapped;
    }
    wrapped
        || text
            .chars()
            .any(|c| is_invisible(c) || options.straight_quotes && straight(c) != c)
        || unicode_normalization::is_nfkc_quick(text.chars())
            != unicode_normalization::IsNormalized::Yes
}

/// Token characters: what API keys, base64 and URL-safe base64 are written with.
pub fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-')
}

fn is_line_break(text: &str, at: usize) -> bool {
    let rest = &text.as_bytes()[at..];
    rest.starts_with(b"\n") || rest.starts_with(b"\r\n")
}

/// Whether a line break between `before` and `after` is a wrap inside one token: the token's run
/// before the break is 8 characters or more, and the token, joined, is long and mixed enough to be
/// a key.
fn is_wrap(before: &str, after: &str) -> bool {
    let run_before = before
        .bytes()
        .rev()
        .take_while(|&b| is_token_char(b as char))
        .count();
    let run_after = after
        .bytes()
        .take_while(|&b| is_token_char(b as char))
        .count();
    let token = || {
        before.as_bytes()[before.len() - run_before..]
            .iter()
            .chain(&after.as_bytes()[..run_after])
    };
    run_before >= WRAPPED_BEFORE_MIN_CHARS
        && run_after > 0
        && run_before + run_after >= WRAPPED_TOKEN_MIN_CHARS
        && token().any(u8::is_ascii_digit)
        && token().any(u8::is_ascii_alphabetic)
}

fn has_wrapped_token(text: &str) -> bool {
    text.match_indices('\n').any(|(at, _)| {
        let before = text[..at].strip_suffix('\r').unwrap_or(&text[..at]);
        is_wrap(before, &text[at + 1..])
    })
}

fn straight(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2039}' | '\u{203A}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{00AB}' | '\u{00BB}' => '"',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(text: &str) -> Normalized<'_> {
        Normalized::new(text, Options::SECRETS)
    }

    #[test]
    fn full_width_invisible_and_quotes_are_matched_as_plain_text() {
        let n = secrets("ｓｋ－ｐｒｏｊ key: “pw”");
        assert_eq!(n.text(), "sk-proj key: \"pw\"");
        let n = secrets("din\u{200B}ner and soft\u{AD}ware");
        assert_eq!(n.text(), "dinner and software");
        // Combining marks compose with their letter.
        assert_eq!(secrets("cafe\u{301}").text(), "café");
        let plain = Normalized::new("“x”", Options::default());
        assert_eq!(plain.text(), "“x”");
    }

    #[test]
    fn a_match_maps_back_to_every_original_byte_it_came_from() {
        let original = "key ｓｋ\u{200B}-abc end";
        let n = secrets(original);
        let at = n.text().find("sk-abc").unwrap();
        let span = n.original_span(at..at + "sk-abc".len());
        assert_eq!(&original[span], "ｓｋ\u{200B}-abc");
        let original = "x ﬁle y";
        let n = secrets(original);
        assert_eq!(n.text(), "x file y");
        // Half of a ligature is the whole ligature.
        let span = n.original_span(2..3);
        assert_eq!(&original[span], "ﬁ");
    }

    #[test]
    fn a_line_break_joins_only_a_long_mixed_token() {
        let key = "sk-proj-4fG7hJ2kL9mN3pQ8rS5t\nV1wXa2B3c4D5e6F7";
        let n = secrets(key);
        assert_eq!(n.text(), key.replace('\n', ""));
        assert_eq!(n.original_span(0..n.text().len()), 0..key.len());
        let crlf = "abc123def456ghi\r\nJKLmnopqrstu";
        assert_eq!(secrets(crlf).text(), "abc123def456ghiJKLmnopqrstu");
        for kept in [
            "hello\nworld",
            "password: hunter2\nthanks",
            "a list\n- item",
        ] {
            assert_eq!(secrets(kept).text(), kept);
        }
        let keywords = Normalized::new(key, Options::default());
        assert_eq!(keywords.text(), key);
    }
}
