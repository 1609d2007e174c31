//! [`normalize`](super::normalize) of ASCII text in one pass, sixteen bytes at a time where they
//! hold no white space but single spaces: every prompt is normalized, and a byte at a time was most
//! of a routing call's time in the component. The component does a chunk with WebAssembly SIMD
//! instructions, other targets as two 64-bit words.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
/// Bytes per step of the fast path.
const CHUNK: usize = 16;

/// The text lowered and its white space folded (runs of spaces, tabs, line breaks and form feeds
/// become one space), exactly as `to_lowercase` then `split_whitespace` joined with spaces; None
/// when it is not ASCII, or holds a vertical tab and something to fold: the cases left to the slow
/// path (alone, a vertical tab is kept: see [`normalize`](super::normalize)). `bytes` must be
/// trimmed of white space.
pub(super) fn lower_and_fold(bytes: &[u8]) -> Option<String> {
    // Folding only shrinks: the output fits the input's length. Written by index, not pushed: in
    // the component a push per chunk was a call per chunk.
    let mut out = Out {
        bytes: vec![0; bytes.len()],
        len: 0,
    };
    let mut fold = Fold::default();
    let mut chunks = bytes.chunks_exact(CHUNK);
    for chunk in &mut chunks {
        let chunk: &[u8; CHUNK] = chunk.try_into().expect("a whole chunk");
        match plain_chunk(chunk, fold.after_space) {
            Some(ends_in_space) => {
                out.bytes[out.len..out.len + CHUNK].copy_from_slice(&lower_chunk(chunk));
                out.len += CHUNK;
                fold.after_space = ends_in_space;
            }
            None => {
                chunk.iter().for_each(|&b| fold.byte(b, &mut out));
                if fold.non_ascii {
                    return None;
                }
            }
        }
    }
    // The last bytes as a chunk padded with letters (neither white space nor control characters,
    // so they change nothing the chunk says about the real bytes): a keyword is shorter than one.
    let rest = chunks.remainder();
    let mut padded = [b'a'; CHUNK];
    padded[..rest.len()].copy_from_slice(rest);
    match plain_chunk(&padded, fold.after_space) {
        Some(_) => {
            out.bytes[out.len..out.len + rest.len()]
                .copy_from_slice(&lower_chunk(&padded)[..rest.len()]);
            out.len += rest.len();
        }
        None => rest.iter().for_each(|&b| fold.byte(b, &mut out)),
    }
    if fold.non_ascii || (fold.folded && fold.vertical_tab) {
        return None;
    }
    out.bytes.truncate(out.len);
    debug_assert!(out.bytes.is_ascii());
    // SAFETY: every byte written is ASCII (a byte at or above 0x80 returned None above), so UTF-8;
    // validating it again was a measurable share of routing a long prompt in the component.
    Some(unsafe { String::from_utf8_unchecked(out.bytes) })
}

/// Whether [`normalize`](super::normalize) gives `bytes` back unchanged, for certain: printable
/// ASCII without capitals, words apart by single spaces, none at either end. (Some other texts are
/// normalized too; they are normalized again, which changes nothing.)
pub(super) fn is_normalized(bytes: &[u8]) -> bool {
    let mut after_space = true;
    for &b in bytes {
        match b {
            b' ' if after_space => return false,
            b' ' => after_space = true,
            b'!'..=b'~' if !b.is_ascii_uppercase() => after_space = false,
            _ => return false,
        }
    }
    !after_space || bytes.is_empty()
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
    /// A byte at or above 0x80 was met: the text is not ASCII.
    non_ascii: bool,
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
            self.non_ascii |= !b.is_ascii();
            out.push(b.to_ascii_lowercase());
            self.after_space = false;
        }
    }
}

/// For a chunk of ASCII bytes whose only white space is single spaces, none right after the
/// previous space: whether the last byte is a space. None: they need the byte-wise path (which
/// also says whether a byte is not ASCII).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn plain_chunk(chunk: &[u8; CHUNK], after_space: bool) -> Option<bool> {
    let (low, high) = chunk.split_at(8);
    let after_space = plain_word(u64::from_le_bytes(low.try_into().ok()?), after_space)?;
    plain_word(u64::from_le_bytes(high.try_into().ok()?), after_space)
}

/// A chunk of ASCII bytes lowered.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn lower_chunk(chunk: &[u8; CHUNK]) -> [u8; CHUNK] {
    let mut out = [0u8; CHUNK];
    for (to, from) in out.chunks_exact_mut(8).zip(chunk.chunks_exact(8)) {
        let word = u64::from_le_bytes(from.try_into().expect("eight bytes"));
        to.copy_from_slice(&lower_word(word).to_le_bytes());
    }
    out
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn load(chunk: &[u8; CHUNK]) -> core::arch::wasm32::v128 {
    // SAFETY: the pointer is to sixteen readable bytes; v128.load needs no alignment.
    unsafe { core::arch::wasm32::v128_load(chunk.as_ptr().cast()) }
}

/// [`plain_chunk`] in one vector: a byte mask of the bytes at or below b' ', one of the spaces.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn plain_chunk(chunk: &[u8; CHUNK], after_space: bool) -> Option<bool> {
    use core::arch::wasm32::{i8x16_eq, u8x16_bitmask, u8x16_le, u8x16_splat};
    let bytes = load(chunk);
    if u8x16_bitmask(bytes) != 0 {
        return None; // not ASCII
    }
    let low = u32::from(u8x16_bitmask(u8x16_le(bytes, u8x16_splat(b' '))));
    let spaces = u32::from(u8x16_bitmask(i8x16_eq(bytes, u8x16_splat(b' '))));
    let adjacent = spaces & (spaces << 1 | u32::from(after_space)) != 0;
    (low == spaces && !adjacent).then_some(spaces >> (CHUNK - 1) != 0)
}

/// [`lower_chunk`] in one vector: 0x20 added to the bytes in A..=Z.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn lower_chunk(chunk: &[u8; CHUNK]) -> [u8; CHUNK] {
    use core::arch::wasm32::{
        i64x2_extract_lane, u8x16_lt, u8x16_splat, u8x16_sub, v128_and, v128_or,
    };
    let bytes = load(chunk);
    let upper = u8x16_lt(u8x16_sub(bytes, u8x16_splat(b'A')), u8x16_splat(26));
    let lowered = v128_or(bytes, v128_and(upper, u8x16_splat(0x20)));
    let mut out = [0u8; CHUNK];
    out[..8].copy_from_slice(&i64x2_extract_lane::<0>(lowered).to_le_bytes());
    out[8..].copy_from_slice(&i64x2_extract_lane::<1>(lowered).to_le_bytes());
    out
}

/// For eight bytes (little-endian), ASCII, whose only white space is single spaces, none right after
/// the previous space: whether the last byte is a space. None: they need the byte-wise path.
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
fn plain_word(word: u64, after_space: bool) -> Option<bool> {
    if word & HIGH != 0 {
        return None; // not ASCII
    }
    // Per byte, without carries between bytes (each is below 0x80): the high bit is set for a byte
    // at or below b' ' (white space, control characters), and for a space.
    let low = !word.wrapping_add(ONES * (0x80 - 0x21)) & HIGH;
    let spaces = !(word ^ (ONES * u64::from(b' '))).wrapping_add(ONES * 0x7f) & HIGH;
    let adjacent = spaces & (spaces << 8) != 0 || (after_space && spaces & 0x80 != 0);
    (low == spaces && !adjacent).then_some(spaces >> 63 != 0)
}

/// Eight ASCII bytes lowered.
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
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
            assert_eq!(plain_word(word, false).is_some(), plain, "{text:?}");
            assert_eq!(
                plain_word(word, true).is_some(),
                plain && !text.starts_with(' '),
                "{text:?}"
            );
        }
        let all: Vec<u8> = (0u8..0x80).collect();
        for chunk in all.chunks(8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap());
            assert_eq!(
                lower_word(word).to_le_bytes(),
                chunk.to_ascii_lowercase()[..]
            );
        }
    }
}
