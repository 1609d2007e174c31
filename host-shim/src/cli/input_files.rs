//! Files the user names on the command line (recall data, eval cases, settings), read as text.

use std::path::Path;

/// Files the user names are read up to this size (the HTTP cap for a Graphiti answer): a wrong path
/// to a huge file is an error, not a CLI that eats the machine's memory.
const MAX_INPUT_FILE_BYTES: u64 = 10 << 20;

pub(crate) fn read_text(what: &str, path: &Path) -> Result<String, String> {
    use std::io::Read;
    let cannot = |err: std::io::Error| format!("cannot read {what} {}: {err}", path.display());
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_INPUT_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(format!(
            "{what} {} is larger than {} MiB: not read",
            path.display(),
            MAX_INPUT_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|err| {
        format!(
            "cannot read {what} {}: not UTF-8 text ({err})",
            path.display()
        )
    })
}
