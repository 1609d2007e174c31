//! A package archive (`.tgz`, as `npm pack` and `tar czf` make them) read into memory with every
//! hostile shape refused by name: an entry outside the package (absolute, `..`), a link, a device or
//! FIFO, more bytes or files than the caps, a truncated or corrupt stream, a header whose checksum
//! is wrong, a pax header that is malformed or gives a size the archive does not hold.

use miniz_oxide::inflate::{TINFLStatus, decompress_to_vec_with_limit};

/// Largest unpacked package, in bytes, and most files in one.
pub const MAX_UNPACKED_BYTES: usize = 32 << 20;
pub const MAX_FILES: usize = 2_000;

const BLOCK: usize = 512;
/// Where a ustar header keeps its checksum, which is summed as if it held spaces.
const CHECKSUM_FIELD: std::ops::Range<usize> = 148..156;

/// A file of the package: its path relative to the package root, and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// The gzip stream's deflate payload (RFC 1952 header and trailer skipped, optional fields honoured).
fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if bytes.len() < 18 || bytes[0] != 0x1f || bytes[1] != 0x8b || bytes[2] != 8 {
        return Err("it is not a gzip file (.tgz)".into());
    }
    let flags = bytes[3];
    let mut at = 10;
    if flags & 0x04 != 0 {
        let len = usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        at += 2 + len;
    }
    for flag in [0x08, 0x10] {
        if flags & flag != 0 {
            let end = bytes
                .get(at..)
                .and_then(|b| b.iter().position(|&c| c == 0))
                .ok_or("the gzip header is truncated")?;
            at += end + 1;
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
    }
    let body = bytes
        .get(at..bytes.len() - 8)
        .ok_or("the gzip header is truncated")?;
    let tar = decompress_to_vec_with_limit(body, MAX_UNPACKED_BYTES + 1024 * 1024).map_err(
        |e| match e.status {
            TINFLStatus::HasMoreOutput => {
                format!("it unpacks to more than {} MiB", MAX_UNPACKED_BYTES >> 20)
            }
            _ => "its compressed data is corrupt or truncated".into(),
        },
    )?;
    let trailer = &bytes[bytes.len() - 8..];
    let (crc, size) = (
        u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]),
        u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]),
    );
    if crc32(&tar) != crc || tar.len() as u32 != size {
        return Err("its checksum does not match: the archive is corrupt".into());
    }
    Ok(tar)
}

/// CRC-32 (IEEE), as gzip's trailer has it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (n, slot) in table.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *slot = c;
    }
    !bytes.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// A number in a header field: octal digits, space-padded, ended by NUL or the field's end.
fn octal(field: &[u8]) -> Result<usize, String> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let text = String::from_utf8_lossy(&field[..end]);
    let digits = text.trim();
    if digits.is_empty() {
        return Ok(0);
    }
    let not_octal = || format!("{digits:?} is not an octal number");
    if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(not_octal());
    }
    usize::from_str_radix(digits, 8).map_err(|_| not_octal())
}

/// A number in a pax record: decimal digits only (`str::parse` would take a sign too).
fn decimal(text: &[u8]) -> Option<usize> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn text_field(field: &[u8]) -> String {
    String::from_utf8_lossy(&field[..field.iter().position(|&b| b == 0).unwrap_or(field.len())])
        .into_owned()
}

/// The name a ustar header gives, with its prefix field joined on.
fn header_name(header: &[u8]) -> String {
    let prefix = text_field(&header[345..500]);
    let name = text_field(&header[0..100]);
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

/// Refuses a header whose checksum field is not the sum of its bytes (the field itself counted as
/// spaces). Old tars summed signed chars: either sum is accepted, as GNU tar does.
fn verify_checksum(header: &[u8], at: usize) -> Result<(), String> {
    let (mut unsigned, mut signed) = (0i64, 0i64);
    for (i, &byte) in header.iter().enumerate() {
        let byte = if CHECKSUM_FIELD.contains(&i) {
            b' '
        } else {
            byte
        };
        unsigned += i64::from(byte);
        signed += i64::from(byte as i8);
    }
    let name = header_name(header);
    let stored = octal(&header[CHECKSUM_FIELD])
        .map_err(|why| format!("entry {name:?} at byte {at}: its header checksum {why}"))?;
    let stored = stored as i64;
    if stored == unsigned || stored == signed {
        return Ok(());
    }
    Err(format!(
        "entry {name:?} at byte {at}: its header checksum says {stored:o}, but the header sums to \
         {unsigned:o}: the archive is corrupt"
    ))
}

/// A path inside the package, or why it is refused.
fn clean_entry_path(raw: &str) -> Result<Option<String>, String> {
    if raw.starts_with('/') || raw.contains('\\') || raw.contains(':') {
        return Err(format!(
            "entry {raw:?} has an absolute or non-portable path"
        ));
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("entry {raw:?} climbs out of the package (..)")),
            p if p.chars().any(char::is_control) => {
                return Err(format!("entry {raw:?} has a control character in its name"));
            }
            p => parts.push(p),
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

/// What the headers before an entry said about it: a GNU long name (`L`) or pax `path` replaces
/// its name; a pax `size` (with the pax header's offset, for messages) replaces its size.
#[derive(Default)]
struct Pending {
    name: Option<String>,
    size: Option<(usize, usize)>,
}

/// One entry: its header's offset, its name, its type and its data.
struct Entry<'t> {
    at: usize,
    name: String,
    kind: u8,
    data: &'t [u8],
}

impl Entry<'_> {
    /// Where the next header starts: after the data, padded to whole blocks.
    fn next(&self) -> usize {
        self.at + BLOCK + self.data.len().div_ceil(BLOCK) * BLOCK
    }
}

/// Reads the entry whose (checked) header is at `at`; `pax_size` comes from a pax header before it.
fn read_entry<'t>(
    tar: &'t [u8],
    at: usize,
    name: Option<&str>,
    pax_size: Option<(usize, usize)>,
) -> Result<Entry<'t>, String> {
    let header = &tar[at..at + BLOCK];
    let name = name.map_or_else(|| header_name(header), str::to_string);
    let in_header = octal(&header[124..136])
        .map_err(|why| format!("entry {name:?} at byte {at}: its size {why}"))?;
    let size = match pax_size {
        None => in_header,
        // Writers leave the ustar field 0 when a pax size replaces it; any other value that
        // differs would split the archive differently in another reader.
        Some((size, _)) if in_header == 0 || in_header == size => size,
        Some((size, pax_at)) => {
            return Err(format!(
                "entry {name:?} at byte {at}: its pax header (at byte {pax_at}) says it holds \
                 {size} bytes, its ustar header {in_header}"
            ));
        }
    };
    let data_at = at + BLOCK;
    let Some(data) = data_at
        .checked_add(size)
        .and_then(|end| tar.get(data_at..end))
    else {
        let left = tar.len() - data_at;
        return Err(match pax_size {
            Some((_, pax_at)) => format!(
                "entry {name:?} at byte {at}: its pax header (at byte {pax_at}) says it holds \
                 {size} bytes, but only {left} follow: the size is wrong or the archive is truncated"
            ),
            None => format!(
                "entry {name:?} at byte {at} says it holds {size} bytes, but only {left} follow: \
                 the archive is truncated"
            ),
        });
    };
    Ok(Entry {
        at,
        name,
        kind: header[156],
        data,
    })
}

/// The records of a pax extended header (`x`) this reader uses: `path` and `size`. Every record
/// must be well formed (`<length> <key>=<value>\n`, the length counting the whole record), since a
/// reader that skipped a bad one would split the archive where another reader does not.
fn read_pax(mut records: &[u8], pending: &mut Pending, at: usize) -> Result<(), String> {
    while !records.is_empty() {
        let Some((key, value, length)) = pax_record(records) else {
            let shown = String::from_utf8_lossy(&records[..records.len().min(40)]);
            return Err(format!(
                "record {shown:?} is malformed (each is \"<length> <key>=<value>\\n\")"
            ));
        };
        match key {
            b"path" => {
                pending.name =
                    (!value.is_empty()).then(|| String::from_utf8_lossy(value).into_owned());
            }
            b"size" => {
                let size = decimal(value).ok_or_else(|| {
                    let shown = String::from_utf8_lossy(value);
                    format!("its size record {shown:?} is not a number of bytes")
                })?;
                pending.size = Some((size, at));
            }
            _ => {}
        }
        records = &records[length..];
    }
    Ok(())
}

/// The first record's key, value and length, or `None` if it is malformed.
fn pax_record(records: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let space = records.iter().position(|&b| b == b' ')?;
    let length = decimal(&records[..space])?;
    let (&newline, line) = records.get(space + 1..length)?.split_last()?;
    let equals = line.iter().position(|&b| b == b'=')?;
    (newline == b'\n' && equals > 0).then(|| (&line[..equals], &line[equals + 1..], length))
}

/// The regular files of a `.tgz`, with one common top-level directory (`package/`) removed.
pub fn unpack_tgz(bytes: &[u8]) -> Result<Vec<PackageFile>, String> {
    let mut files = unpack_tar(&gunzip(bytes)?)?;
    strip_common_top(&mut files);
    Ok(files)
}

/// The regular files of a tar stream, every header checked before it is believed.
fn unpack_tar(tar: &[u8]) -> Result<Vec<PackageFile>, String> {
    let mut files = Vec::new();
    let (mut at, mut total) = (0usize, 0usize);
    let mut pending = Pending::default();
    while at + BLOCK <= tar.len() {
        let header = &tar[at..at + BLOCK];
        if header.iter().all(|&b| b == 0) {
            break;
        }
        verify_checksum(header, at)?;
        // A pax size is for the very next header; a name waits for the entry it names.
        let entry = read_entry(tar, at, pending.name.as_deref(), pending.size.take())?;
        at = entry.next();
        match entry.kind {
            b'L' => pending.name = Some(text_field(entry.data)),
            b'x' => read_pax(entry.data, &mut pending, entry.at).map_err(|why| {
                format!(
                    "the pax header {:?} at byte {}: {why}",
                    header_name(header),
                    entry.at
                )
            })?,
            // Global pax records name no entry.
            b'g' => {}
            _ => {
                pending = Pending::default();
                let Some(file) = regular_file(entry)? else {
                    continue;
                };
                total += file.bytes.len();
                if total > MAX_UNPACKED_BYTES {
                    return Err(format!(
                        "it unpacks to more than {} MiB",
                        MAX_UNPACKED_BYTES >> 20
                    ));
                }
                if files.len() >= MAX_FILES {
                    return Err(format!("it has more than {MAX_FILES} files"));
                }
                files.push(file);
            }
        }
    }
    Ok(files)
}

/// The file an entry holds; `None` for a directory (implied by its files) or the package root.
fn regular_file(entry: Entry<'_>) -> Result<Option<PackageFile>, String> {
    let name = entry.name;
    match entry.kind {
        b'0' | 0 | b'7' => {}
        b'5' => return Ok(None),
        b'1' | b'2' => {
            return Err(format!(
                "entry {name:?} is a link; packages may hold regular files only"
            ));
        }
        other => {
            return Err(format!(
                "entry {name:?} is a device, FIFO or other special file (type {:?})",
                other as char
            ));
        }
    }
    Ok(clean_entry_path(&name)?.map(|path| PackageFile {
        path,
        bytes: entry.data.to_vec(),
    }))
}

/// `package/expert.yaml`, `package/…` → `expert.yaml`, `…` when every file shares the directory.
fn strip_common_top(files: &mut [PackageFile]) {
    let Some(top) = files
        .first()
        .and_then(|f| f.path.split_once('/'))
        .map(|(t, _)| t.to_string())
    else {
        return;
    };
    let prefix = format!("{top}/");
    if files.iter().all(|f| f.path.starts_with(&prefix)) {
        for f in files.iter_mut() {
            f.path = f.path[prefix.len()..].to_string();
        }
    }
}

#[cfg(test)]
mod tests;
