//! [`normalize`](super::normalize) of ASCII text in one pass, eight bytes at a time where they hold
//! no white space but single spaces: every prompt is normalized, and a byte at a time was most of a
//! routing call's time in the component.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The text lowered and its white space folded (runs of spaces, tabs, line breaks and form feeds
/// become one space), exactly as `to_lowercase` then `split_whitespace` joined with spaces; None
/// when it holds a vertical tab and something to fold, the one case left to that slow path (alone,
/// a vertical tab is kept: see [`normalize`](super::normalize)). `bytes` must be ASCII and trimmed
/// of white space.
pub(super) fn lower_and_fold(bytes: &[u8]) -> Option<String> {
    // Folding only shrinks: the output fits the input's length. Written by index, not pushed: in
    // the component a push per chunk was a call per eight bytes.
    let mut out = Out {
        bytes: vec![0; bytes.len()],
        len: 0,
    };
    let mut fold = Fold::default();
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        match plain_chunk(word, fold.after_space) {
            Some(ends_in_space) => {
                out.bytes[out.len..out.len + 8].copy_from_slice(&lower_word(word).to_le_bytes());
                out.len += 8;
                fold.after_space = ends_in_space;
            }
            None => chunk.iter().for_each(|&b| fold.byte(b, &mut out)),
        }
    }
    chunks
        .remainder()
        .iter()
        .for_each(|&b| fold.byte(b, &mut out));
    if fold.folded && fold.vertical_tab {
        return None;
    }
    out.bytes.truncate(out.len);
    Some(String::from_utf8(out.bytes).expect("ASCII in, ASCII out"))
}

/// The output buffer, as long as the input, and how much of it is written.
struct Out {
    bytes: Vec<u8>,
    len: usize,
}

impl Out {
    fn push(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }
}

/// What the bytes so far said about white space.
#[derive(Default)]
struct Fold {
    /// The last byte was white space (a space was written for it).
    after_space: bool,
    /// Something was folded: a run of white space, or white space other than a space.
    folded: bool,
    vertical_tab: bool,
}

impl Fold {
    fn byte(&mut self, b: u8, out: &mut Out) {
        if matches!(b, b' ' | b'\t' | b'\n' | b'\x0c' | b'\r') {
            self.folded |= b != b' ' || self.after_space;
            if !self.after_space {
                out.push(b' ');
            }
            self.after_space = true;
        } else {
            self.vertical_tab |= b == b'\x0b';
            out.push(b.to_ascii_lowercase());
            self.after_space = false;
        }
    }
}

/// For eight ASCII bytes (little-endian) whose only white space is single spaces, none right after
/// the previous space: whether the last byte is a space. None: they need the byte-wise path.
fn plain_chunk(word: u64, after_space: bool) -> Option<bool> {
    // Per byte, without carries between bytes (each is below 0x80): the high bit is set for a byte
    // at or below b' ' (white space, control characters), and for a space.
    let low = !word.wrapping_add(ONES * (0x80 - 0x21)) & HIGH;
    let spaces = !(word ^ (ONES * u64::from(b' '))).wrapping_add(ONES * 0x7f) & HIGH;
    let adjacent = spaces & (spaces << 8) != 0 || (after_space && spaces & 0x80 != 0);
    (low == spaces && !adjacent).then_some(spaces >> 63 != 0)
}

/// Eight ASCII bytes lowered.
fn lower_word(word: u64) -> u64 {
    let at_least_a = word.wrapping_add(ONES * (0x80 - u64::from(b'A')));
    let above_z = word.wrapping_add(ONES * (0x80 - u64::from(b'Z') - 1));
    let upper = at_least_a & !above_z & HIGH;
    word | (upper >> 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_eight_bytes_agree_with_the_byte_wise_path() {
        for text in [
            "ABCDEFGH",
            "abc defg",
            "abc  efg",
            "abcdefg ",
            " bcdefgh",
            "a\tb c d ",
            "A\u{1f}B@[`{Z",
        ] {
            let word = u64::from_le_bytes(text.as_bytes().try_into().unwrap());
            assert_eq!(
                lower_word(word).to_le_bytes(),
                text.to_ascii_lowercase().as_bytes(),
                "{text:?}"
            );
            let plain = !text.contains("  ") && !text.bytes().any(|b| b < b' ');
            assert_eq!(plain_chunk(word, false).is_some(), plain, "{text:?}");
            assert_eq!(
                plain_chunk(word, true).is_some(),
                plain && !text.starts_with(' '),
                "{text:?}"
            );
        }
        let all: Vec<u8> = (0u8..0x80).collect();
        for chunk in all.chunks(8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap());
            assert_eq!(lower_word(word).to_le_bytes(), chunk.to_ascii_lowercase()[..]);
        }
    }
}
