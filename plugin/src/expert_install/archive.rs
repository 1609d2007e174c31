//! A package archive (`.tgz`, as `npm pack` and `tar czf` make them) read into memory with every
//! hostile shape refused by name: an entry outside the package (absolute, `..`), a link, a device or
//! FIFO, more bytes or files than the caps, a truncated or corrupt stream.

use miniz_oxide::inflate::{TINFLStatus, decompress_to_vec_with_limit};

/// Largest unpacked package, in bytes, and most files in one.
pub const MAX_UNPACKED_BYTES: usize = 32 << 20;
pub const MAX_FILES: usize = 2_000;

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

fn octal(field: &[u8]) -> Result<usize, String> {
    let text: String = field
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| b as char)
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return Ok(0);
    }
    usize::from_str_radix(text, 8).map_err(|_| format!("a tar header has a bad number {text:?}"))
}

fn text_field(field: &[u8]) -> String {
    String::from_utf8_lossy(&field[..field.iter().position(|&b| b == 0).unwrap_or(field.len())])
        .into_owned()
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

/// The regular files of a `.tgz`, with one common top-level directory (`package/`) removed.
pub fn unpack_tgz(bytes: &[u8]) -> Result<Vec<PackageFile>, String> {
    let tar = gunzip(bytes)?;
    let mut files = Vec::new();
    let (mut at, mut total) = (0usize, 0usize);
    let mut long_name: Option<String> = None;
    while at + 512 <= tar.len() {
        let header = &tar[at..at + 512];
        if header.iter().all(|&b| b == 0) {
            break;
        }
        let size = octal(&header[124..136])?;
        let kind = header[156];
        let data_at = at + 512;
        let data = tar
            .get(data_at..data_at + size)
            .ok_or("the archive is truncated")?;
        at = data_at + size.div_ceil(512) * 512;
        let mut name = long_name.take().unwrap_or_else(|| {
            let prefix = text_field(&header[345..500]);
            let name = text_field(&header[0..100]);
            if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            }
        });
        match kind {
            b'0' | 0 | b'7' => {}
            b'5' => continue,
            // GNU long name, and pax headers (a `path=` record replaces the name).
            b'L' => {
                long_name = Some(text_field(data));
                continue;
            }
            b'x' => {
                long_name = pax_path(data);
                continue;
            }
            b'g' => continue,
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
        let Some(path) = clean_entry_path(&name)? else {
            continue;
        };
        name = path;
        total += size;
        if total > MAX_UNPACKED_BYTES {
            return Err(format!(
                "it unpacks to more than {} MiB",
                MAX_UNPACKED_BYTES >> 20
            ));
        }
        if files.len() >= MAX_FILES {
            return Err(format!("it has more than {MAX_FILES} files"));
        }
        files.push(PackageFile {
            path: name,
            bytes: data.to_vec(),
        });
    }
    strip_common_top(&mut files);
    Ok(files)
}

fn pax_path(records: &[u8]) -> Option<String> {
    String::from_utf8_lossy(records).lines().find_map(|line| {
        line.split_once(' ')
            .and_then(|(_, kv)| kv.strip_prefix("path="))
            .map(str::to_string)
    })
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
mod tests {
    use super::*;

    #[test]
    fn entry_paths_stay_inside() {
        assert_eq!(
            clean_entry_path("package/./a.md").unwrap().as_deref(),
            Some("package/a.md")
        );
        assert!(clean_entry_path("/etc/passwd").is_err());
        assert!(clean_entry_path("a/../../b").is_err());
        assert!(clean_entry_path("C:evil").is_err());
        assert_eq!(clean_entry_path("./").unwrap(), None);
    }

    #[test]
    fn crc32_is_gzips() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn not_gzip_is_named() {
        assert_eq!(
            unpack_tgz(b"hello").unwrap_err(),
            "it is not a gzip file (.tgz)"
        );
    }
}
