use super::*;
use proptest::prelude::*;
use proptest::sample::Index;
use std::ops::Range;

/// Writes the checksum a header's bytes call for (unsigned sum, the field counted as spaces).
fn seal(header: &mut [u8]) {
    header[CHECKSUM_FIELD].fill(b' ');
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    header[CHECKSUM_FIELD].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

/// A tar stream written block by block, remembering where its headers and file data are.
#[derive(Default)]
struct Tar {
    bytes: Vec<u8>,
    headers: Vec<usize>,
    file_data: Vec<Range<usize>>,
}

impl Tar {
    /// An entry whose ustar header says `header_size` (a pax size may say otherwise).
    fn raw(mut self, prefix: &str, name: &str, kind: u8, header_size: usize, data: &[u8]) -> Self {
        let mut header = [0u8; BLOCK];
        header[..name.len()].copy_from_slice(name.as_bytes());
        header[100..108].copy_from_slice(b"0000644\0");
        header[124..136].copy_from_slice(format!("{header_size:011o}\0").as_bytes());
        header[156] = kind;
        header[257..265].copy_from_slice(b"ustar\x0000");
        header[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
        seal(&mut header);
        self.headers.push(self.bytes.len());
        self.bytes.extend_from_slice(&header);
        let start = self.bytes.len();
        if kind == b'0' {
            self.file_data.push(start..start + data.len());
        }
        self.bytes.extend_from_slice(data);
        self.bytes
            .resize(start + data.len().div_ceil(BLOCK) * BLOCK, 0);
        self
    }

    fn file(self, name: &str, data: &[u8]) -> Self {
        self.raw("", name, b'0', data.len(), data)
    }

    fn entry(self, name: &str, kind: u8, data: &[u8]) -> Self {
        self.raw("", name, kind, data.len(), data)
    }

    fn pax(self, records: &[(&str, &str)]) -> Self {
        self.entry("PaxHeaders/0", b'x', &pax_records(records))
    }

    /// The end-of-archive marker: two zero blocks.
    fn end(mut self) -> Self {
        self.bytes.extend_from_slice(&[0; 2 * BLOCK]);
        self
    }
}

/// Pax records, each `<length> <key>=<value>\n` with the length counting its own digits.
fn pax_records(records: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in records {
        let body = format!(" {key}={value}\n");
        let mut length = body.len() + 1;
        while length.to_string().len() + body.len() != length {
            length = length.to_string().len() + body.len();
        }
        out.extend_from_slice(format!("{length}{body}").as_bytes());
    }
    out
}

fn gzip(tar: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(tar, 1));
    out.extend(crc32(tar).to_le_bytes());
    out.extend((tar.len() as u32).to_le_bytes());
    out
}

/// A package with every kind of entry the reader handles: a directory, a plain file, a pax
/// path and size (the ustar size left 0), a GNU long name, a name split into prefix and name.
fn sample(pax_size: &str) -> Tar {
    Tar::default()
        .entry("package/", b'5', b"")
        .file("package/expert.yaml", b"spec: \"1.0\"\nname: ops\n")
        .pax(&[
            ("path", "package/knowledge/a-long-name.md"),
            ("size", pax_size),
        ])
        .raw("", "package/knowledge/short", b'0', 0, &[b'k'; 700])
        .entry("././@LongLink", b'L', b"package/functions/lookup.md\0")
        .file("package/functions/look", b"# lookup\n")
        .raw("package/persona", "expert.md", b'0', 6, b"# ops\n")
        .end()
}

fn sample_files() -> Vec<PackageFile> {
    [
        ("expert.yaml", &b"spec: \"1.0\"\nname: ops\n"[..]),
        ("knowledge/a-long-name.md", &[b'k'; 700]),
        ("functions/lookup.md", b"# lookup\n"),
        ("persona/expert.md", b"# ops\n"),
    ]
    .into_iter()
    .map(|(path, bytes)| PackageFile {
        path: path.into(),
        bytes: bytes.to_vec(),
    })
    .collect()
}

#[test]
fn every_kind_of_entry_is_read_back() {
    assert_eq!(
        unpack_tgz(&gzip(&sample("700").bytes)).unwrap(),
        sample_files()
    );
}

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

#[test]
fn a_wrong_header_checksum_is_refused_naming_the_entry_and_its_offset() {
    let mut tar = Tar::default()
        .file("package/a.md", b"a")
        .file("package/b.md", b"b")
        .end()
        .bytes;
    tar[1024 + 12] = b'c';
    assert_eq!(
        unpack_tgz(&gzip(&tar)).unwrap_err(),
        "entry \"package/b.mdc\" at byte 1024: its header checksum says 5612, but the header \
         sums to 5755: the archive is corrupt"
    );
    tar[1024 + 148..1024 + 156].copy_from_slice(b"11x24\0 \0");
    assert_eq!(
        unpack_tgz(&gzip(&tar)).unwrap_err(),
        "entry \"package/b.mdc\" at byte 1024: its header checksum \"11x24\" is not an octal number"
    );
}

#[test]
fn signed_and_unsigned_checksums_are_both_accepted() {
    let tar = Tar::default().file("package/café.md", b"x").end().bytes;
    assert_eq!(unpack_tgz(&gzip(&tar)).unwrap()[0].path, "café.md");
    // Old tars summed signed chars: é's two bytes (0xC3 0xA9) count 512 less.
    let mut signed = tar.clone();
    let header = &mut signed[..BLOCK];
    header[CHECKSUM_FIELD].fill(b' ');
    let sum: i64 = header.iter().map(|&b| i64::from(b as i8)).sum();
    header[CHECKSUM_FIELD].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    assert_ne!(signed, tar);
    assert_eq!(unpack_tgz(&gzip(&signed)).unwrap()[0].path, "café.md");
}

#[test]
fn a_pax_size_replaces_the_ustar_size() {
    // The ustar field says 0: a reader that ignored the pax size would read the 700 bytes of
    // data as headers (and could be fed entries hidden there).
    let files = unpack_tgz(&gzip(&sample("700").bytes)).unwrap();
    assert_eq!(files[1].bytes.len(), 700);
    assert_eq!(files.len(), 4, "the entries after it are where they were");
}

#[test]
fn a_pax_size_the_archive_does_not_hold_is_refused_by_name() {
    for (size, says) in [
        (
            "6000",
            "says it holds 6000 bytes, but only 5120 follow: the size is wrong or the \
             archive is truncated",
        ),
        ("99999999999999999999999", "is not a number of bytes"),
        ("-1", "is not a number of bytes"),
        ("+7", "is not a number of bytes"),
        ("", "is not a number of bytes"),
    ] {
        let err = unpack_tgz(&gzip(&sample(size).bytes)).unwrap_err();
        assert!(err.contains(says), "{size}: {err}");
        assert!(
            err.contains("package/knowledge/a-long-name.md") || err.contains("PaxHeaders/0"),
            "{size}: {err}"
        );
    }
    // A shorter pax size reads the data as headers: their checksums refuse them.
    let err = unpack_tgz(&gzip(&sample("400").bytes)).unwrap_err();
    assert!(err.contains("checksum"), "{err}");
}

#[test]
fn a_pax_size_that_disagrees_with_the_ustar_size_is_refused() {
    let tar = Tar::default()
        .pax(&[("size", "3")])
        .file("package/a.md", b"abcd")
        .end()
        .bytes;
    assert_eq!(
        unpack_tgz(&gzip(&tar)).unwrap_err(),
        "entry \"package/a.md\" at byte 1024: its pax header (at byte 0) says it holds 3 \
         bytes, its ustar header 4"
    );
}

#[test]
fn malformed_pax_records_are_refused_naming_the_header() {
    for records in [
        &b"abc path=x\n"[..],
        b"13 path=x\n",
        b"11 path=x\n",
        b"11 path=xy",
        b"9 pathx\n\n",
        b"7 =abc\n",
        b"0 \n",
        b"10 path=x\n ",
    ] {
        let tar = Tar::default()
            .entry("PaxHeaders/a", b'x', records)
            .file("package/a.md", b"a")
            .end()
            .bytes;
        let err = unpack_tgz(&gzip(&tar)).unwrap_err();
        assert!(
            err.starts_with("the pax header \"PaxHeaders/a\" at byte 0: record ")
                && err.ends_with("is malformed (each is \"<length> <key>=<value>\\n\")"),
            "{records:?}: {err}"
        );
    }
    let tar = Tar::default()
        .entry("PaxHeaders/a", b'x', b"10 path=x\n11 mtime=1\n")
        .file("package/b.md", b"a")
        .end()
        .bytes;
    assert_eq!(unpack_tgz(&gzip(&tar)).unwrap()[0].path, "x");
}

#[test]
fn links_devices_and_escapes_are_refused_by_name() {
    for (name, kind, says) in [
        ("package/l", b'2', "entry \"package/l\" is a link"),
        ("package/h", b'1', "entry \"package/h\" is a link"),
        (
            "package/d",
            b'3',
            "is a device, FIFO or other special file (type '3')",
        ),
        ("../x", b'0', "climbs out of the package"),
        ("/etc/x", b'0', "absolute"),
    ] {
        let tar = Tar::default().entry(name, kind, b"").end().bytes;
        let err = unpack_tgz(&gzip(&tar)).unwrap_err();
        assert!(err.contains(says), "{name}: {err}");
    }
    let tar = Tar::default()
        .pax(&[("path", "package/../../etc/passwd")])
        .file("package/a.md", b"a")
        .end()
        .bytes;
    assert!(unpack_tgz(&gzip(&tar)).unwrap_err().contains("climbs out"));
}

#[test]
fn the_caps_hold() {
    let mut many = Tar::default();
    for n in 0..=MAX_FILES {
        many = many.file(&format!("package/{n}"), b"");
    }
    assert_eq!(
        unpack_tgz(&gzip(&many.end().bytes)).unwrap_err(),
        format!("it has more than {MAX_FILES} files")
    );
    let half = vec![b'x'; MAX_UNPACKED_BYTES / 2 + 1];
    let big = Tar::default().file("a", &half).file("b", &half).end();
    assert_eq!(
        unpack_tar(&big.bytes).unwrap_err(),
        "it unpacks to more than 32 MiB"
    );
}

/// What any successful read must hold: paths inside the package, the caps, and each file's
/// bytes exactly the data after some header block of the archive.
fn assert_inside_and_exact(files: &[PackageFile], tar: &[u8]) {
    assert!(files.len() <= MAX_FILES);
    assert!(files.iter().map(|f| f.bytes.len()).sum::<usize>() <= MAX_UNPACKED_BYTES);
    for file in files {
        let path = &file.path;
        assert!(
            path.split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
                && !path.contains(['\\', ':'])
                && !path.chars().any(char::is_control),
            "{path:?}"
        );
        let len = file.bytes.len();
        let in_archive = (BLOCK..=tar.len().saturating_sub(len))
            .step_by(BLOCK)
            .any(|at| tar[at..at + len] == file.bytes[..]);
        assert!(in_archive, "{path:?}: bytes not at a block of the archive");
    }
}

/// Where to apply an edit: a byte of the whole archive, or of one header's size field (most
/// random bytes are caught by the checksum; a size edit with a resealed header goes further).
#[derive(Clone, Debug)]
enum Edit {
    Byte(Index, u8, bool),
    Size(Index, u32, bool),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<Index>(), any::<u8>(), any::<bool>()).prop_map(|(i, b, s)| Edit::Byte(i, b, s)),
        (any::<Index>(), 0u32..9000, any::<bool>()).prop_map(|(i, n, s)| Edit::Size(i, n, s)),
    ]
}

proptest! {
    #[test]
    fn hostile_archives_are_refused_or_read_exactly(
        pax_size in prop_oneof![Just(700usize), 0usize..5000],
        edits in proptest::collection::vec(edit(), 0..5),
        cut in proptest::option::of(any::<Index>()),
        cut_compressed in any::<bool>(),
    ) {
        let sample = sample(&pax_size.to_string());
        let mut tar = sample.bytes;
        for edit in edits {
            let (at, reseal) = match edit {
                Edit::Byte(at, byte, reseal) => {
                    let at = at.index(tar.len());
                    tar[at] = byte;
                    (at, reseal)
                }
                Edit::Size(header, size, reseal) => {
                    let at = *header.get(&sample.headers);
                    tar[at + 124..at + 136].copy_from_slice(format!("{size:011o}\0").as_bytes());
                    (at, reseal)
                }
            };
            if reseal {
                let block = at - at % BLOCK;
                seal(&mut tar[block..block + BLOCK]);
            }
        }
        let mut tgz;
        if cut_compressed {
            tgz = gzip(&tar);
            if let Some(cut) = cut {
                tgz.truncate(cut.index(tgz.len()));
            }
        } else {
            if let Some(cut) = cut {
                tar.truncate(cut.index(tar.len()));
            }
            tgz = gzip(&tar);
        }
        if let Ok(files) = unpack_tgz(&tgz) {
            assert_inside_and_exact(&files, &tar);
        }
    }

    #[test]
    fn edited_file_data_comes_back_as_edited(
        edits in proptest::collection::vec((any::<Index>(), any::<Index>(), any::<u8>()), 1..8),
    ) {
        let sample = sample("700");
        let mut tar = sample.bytes;
        let mut expected = sample_files();
        for (file, at, byte) in edits {
            let n = file.index(sample.file_data.len());
            let at = at.index(sample.file_data[n].len());
            tar[sample.file_data[n].start + at] = byte;
            expected[n].bytes[at] = byte;
        }
        prop_assert_eq!(unpack_tgz(&gzip(&tar)).unwrap(), expected);
    }

    #[test]
    fn a_changed_header_byte_is_caught_by_its_checksum(
        header in any::<Index>(),
        offset in 0..BLOCK - CHECKSUM_FIELD.len(),
        change in 1u8..,
    ) {
        let sample = sample("700");
        let at = *header.get(&sample.headers);
        // Any byte but the checksum field's own.
        let offset = if offset >= CHECKSUM_FIELD.start { offset + CHECKSUM_FIELD.len() } else { offset };
        let mut tar = sample.bytes;
        tar[at + offset] ^= change;
        let err = unpack_tgz(&gzip(&tar)).unwrap_err();
        prop_assert!(
            err.contains(&format!(" at byte {at}: its header checksum says ")),
            "{}", err
        );
    }
}
