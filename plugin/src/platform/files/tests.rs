use super::*;

fn scratch(name: &str) -> tempfile::TempDir {
    temp_dir(&format!("files-{name}"))
}

#[test]
fn a_large_read_copies_each_byte_about_once_whatever_the_read_size() {
    // 50 MB, given 1 MiB per read as a host may: the buffer's growths copy less than twice the
    // size (copying all read so far at each step, as a fixed-size growth does, is 25 times it).
    let size = 50 << 20;
    let (bytes, copied) = read_growing(
        |buf, at| {
            let n = buf.len().min(1 << 20).min(size - at as usize);
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = ((at as usize + i) % 251) as u8;
            }
            Ok(n)
        },
        usize::MAX,
    )
    .unwrap();
    assert_eq!(bytes.len(), size);
    for k in [0, (1 << 20) + 5, (32 << 20) + 7, size - 1] {
        assert_eq!(bytes[k], (k % 251) as u8, "byte {k}");
    }
    assert!(copied < 2 * size, "{copied} bytes copied to read {size}");
}

#[test]
fn a_read_across_many_buffer_growths_gives_the_file_from_its_offset() {
    // 200 KB: the buffer grows from 16 KB four times, each growth keeping what was read.
    let dir_temp = scratch("read-from");
    let dir = dir_temp.path();
    fs::create_dir_all(dir).unwrap();
    let path = dir.join("big.bin");
    let bytes: Vec<u8> = (0..200_000u32).map(|n| (n * 7 % 251) as u8).collect();
    fs::write(&path, &bytes).unwrap();
    assert_eq!(read(&path).unwrap(), bytes);
    assert_eq!(
        read_from(&path, 12_345, usize::MAX).unwrap(),
        &bytes[12_345..]
    );
    assert!(read_from(&path, 300_000, usize::MAX).unwrap().is_empty());
    let capped = read_from(&path, 1, 40_000).unwrap();
    assert!(capped.len() >= 40_000, "{}", capped.len());
    assert_eq!(capped, &bytes[1..1 + capped.len()]);
}

#[test]
fn an_in_place_write_pads_a_shorter_value_and_readers_take_the_first_value() {
    let dir_temp = scratch("in-place");
    let dir = dir_temp.path();
    let path = dir.join("sub").join("state.json");
    write_in_place(&path, br#"{"a":"a long first value"}"#, None).unwrap();
    write_in_place(&path, br#"{"a":"short"}"#, None).unwrap();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(bytes.len(), r#"{"a":"a long first value"}"#.len());
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        value["a"], "short",
        "padded with spaces: plain JSON readers read it too"
    );
    // Two writers of different lengths met: the tail of the longer one follows the value.
    let value: serde_json::Value = parse_first(br#"{"a":"short"}ng first value"}"#).unwrap();
    assert_eq!(value["a"], "short");
    // A write cut short (a full disk while the file grows) does not parse.
    assert!(parse_first::<serde_json::Value>(br#"{"a":"a longer val"#).is_err());
}

#[test]
fn a_write_with_a_stale_known_length_still_reads_as_its_own_value() {
    let dir_temp = scratch("stale-length");
    let dir = dir_temp.path();
    let path = dir.join("state.json");
    write_in_place(&path, br#"{"a":"another writer's longer value"}"#, None).unwrap();
    // This instance last saw the file 5 bytes long.
    write_in_place(&path, br#"{"a":"mine"}"#, Some(5)).unwrap();
    let value: serde_json::Value = parse_first(&read(&path).unwrap()).unwrap();
    assert_eq!(value["a"], "mine");
}

#[test]
fn read_gives_every_byte_of_files_small_empty_and_past_its_largest_chunk() {
    let dir_temp = scratch("read");
    let dir = dir_temp.path();
    fs::create_dir_all(dir).unwrap();
    for len in [0, 1, 16 * 1024, 16 * 1024 + 1, 3 * (1 << 20) + 7] {
        let path = dir.join(format!("f{len}"));
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        write_atomically(&path, &bytes).unwrap();
        assert_eq!(read(&path).unwrap(), bytes, "{len} bytes");
    }
    fs::write(dir.join("latin1"), b"caf\xe9").unwrap();
    let err = read_to_string(dir.join("latin1")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert_eq!(
        read(dir.join("missing")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

#[test]
fn a_kept_content_is_used_until_another_writer_changes_the_file() {
    let dir_temp = scratch("kept");
    let dir = dir_temp.path();
    let path = dir.join("state.json");
    let (mut mine, mut theirs) = (Kept::<String>::new(4), Kept::<String>::new(4));
    assert!(mine.read(&path, 1024).unwrap().is_none());
    mine.write(&path, br#""mine, longer""#, "mine, longer".into())
        .unwrap();
    assert_eq!(theirs.read(&path, 1024).unwrap().unwrap(), "mine, longer");
    // The other writes a shorter value in place: same length on disk, a new modification time.
    theirs
        .write(&path, br#""theirs""#, "theirs".into())
        .unwrap();
    assert_eq!(mine.read(&path, 1024).unwrap().unwrap(), "theirs");
    // What this instance wrote is what it reads back, without reading the file.
    mine.write(&path, br#""x""#, "kept, not read".into())
        .unwrap();
    assert_eq!(mine.read(&path, 1024).unwrap().unwrap(), "kept, not read");
    assert_eq!(theirs.read(&path, 1024).unwrap().unwrap(), "x");
    // Removed: none, and a file that is not JSON is a parse error.
    fs::remove_file(&path).unwrap();
    assert!(mine.read(&path, 1024).unwrap().is_none());
    fs::write(&path, b"{torn").unwrap();
    assert!(matches!(mine.read(&path, 1024), Err(ReadError::Parse(_))));
    assert!(
        matches!(mine.read(&path, 2), Err(ReadError::Io(_))),
        "too large"
    );
}
