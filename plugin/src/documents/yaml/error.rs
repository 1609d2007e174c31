//! YAML errors as serde_norway words and locates them, and the paths they name.

use crate::documents::errors::{line_at, strip_location};
use crate::documents::libyaml::Mark;
use std::fmt;

/// A YAML error, worded and located as serde_norway words and locates it.
#[derive(Clone, Debug)]
pub struct Error(Box<ErrorKind>);

#[derive(Clone, Debug)]
pub(super) enum ErrorKind {
    /// A type's error, and where: set by the innermost node the error passes.
    Message(String, Option<(Mark, String)>),
    /// libyaml's error, worded as libyaml words it.
    Syntax(String, Mark),
    EndOfStream,
    MoreThanOneDocument,
    RecursionLimitExceeded(Mark),
    RepetitionLimitExceeded,
    BytesUnsupported,
    UnknownAnchor(Mark),
}

impl Error {
    pub(super) fn new(kind: ErrorKind) -> Error {
        Error(Box::new(kind))
    }

    fn mark(&self) -> Option<Mark> {
        match &*self.0 {
            ErrorKind::Message(_, Some((mark, _)))
            | ErrorKind::Syntax(_, mark)
            | ErrorKind::RecursionLimitExceeded(mark)
            | ErrorKind::UnknownAnchor(mark) => Some(*mark),
            _ => None,
        }
    }

    /// The byte offset in the text the error is about, if it is about one.
    pub fn offset(&self) -> Option<usize> {
        self.mark().map(|mark| mark.index as usize)
    }

    /// The 1-based line of `text` (lines ending at `\n`, as editors count them) the error is about,
    /// and its message without libyaml's own line and column. The reader's errors (a control
    /// character, bad UTF-8) give a byte position instead: the line is computed from it.
    pub fn located(&self, text: &str) -> (Option<u32>, String) {
        let message = self.to_string();
        if let Some((head, position)) = message.rsplit_once(" at position ")
            && let Ok(offset) = position.trim().parse::<usize>()
        {
            return (Some(line_at(text, offset)), head.to_string());
        }
        let line = self.offset().map(|offset| line_at(text, offset));
        (line, strip_location(&message))
    }

    /// A key given twice in one mapping (serde's `duplicate field`, serde_norway's `duplicate
    /// entry`), not located yet.
    pub(super) fn is_duplicate_key(&self) -> bool {
        matches!(&*self.0, ErrorKind::Message(message, None)
            if message.starts_with("duplicate field `") || message.starts_with("duplicate entry "))
    }

    /// Locates an error that has no place yet at `mark`, under `path`.
    #[inline(never)]
    pub(super) fn at(mut self, mark: &Mark, path: &[Step<'_>]) -> Error {
        if let ErrorKind::Message(_, place @ None) = &mut *self.0 {
            *place = Some((*mark, path_text(path)));
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match &*self.0 {
            ErrorKind::Syntax(text, _) => return f.write_str(text),
            ErrorKind::Message(message, place) => {
                if let Some((_, path)) = place
                    && path != "."
                {
                    write!(f, "{path}: ")?;
                }
                message
            }
            ErrorKind::EndOfStream => "EOF while parsing a value",
            ErrorKind::MoreThanOneDocument => {
                "deserializing from YAML containing more than one document is not supported"
            }
            ErrorKind::RecursionLimitExceeded(_) => "recursion limit exceeded",
            ErrorKind::RepetitionLimitExceeded => "repetition limit exceeded",
            ErrorKind::BytesUnsupported => {
                "serialization and deserialization of bytes in YAML is not implemented"
            }
            ErrorKind::UnknownAnchor(_) => "unknown anchor",
        };
        f.write_str(text)?;
        match self.mark() {
            Some(mark) if !mark.is_start() => write!(f, " at {mark}"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Error {
        Error::new(ErrorKind::Message(message.to_string(), None))
    }
}

/// One step of the way to a node from the document's root, as errors name it: `rules[0].keywords`.
#[derive(Clone, Copy)]
pub(super) enum Step<'w> {
    Item(usize),
    Key(&'w str),
    /// Into the node an alias repeats: named as the alias is.
    Alias,
    /// The value of a key that is not a scalar.
    Unknown,
}

/// The path of the steps, as serde_norway words it: `.` for the root, `[0]` after it (`.[0]`), a
/// key after a dot (none at the root).
fn path_text(steps: &[Step<'_>]) -> String {
    let Some((last, parent)) = steps.split_last() else {
        return ".".to_string();
    };
    let under = |name: &str| match parent {
        [] => name.to_string(),
        _ => format!("{}.{name}", path_text(parent)),
    };
    match last {
        Step::Item(index) => format!("{}[{index}]", path_text(parent)),
        Step::Key(key) => under(key),
        Step::Alias => path_text(parent),
        Step::Unknown => under("?"),
    }
}
