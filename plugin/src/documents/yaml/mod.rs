//! Typed reads of YAML documents: libyaml's events (or the common reader's, for documents written
//! the common way) walked by one deserializer, with serde_norway's values, errors, paths and lines.
//!
//! serde_norway's deserializer was compiled once for every type read from YAML, beside the common
//! reader's own (the fast path): two copies of every configuration type's reading code, 0.23 MB of
//! the component. Here both sources give the same events to one walker, so every type is compiled
//! once. serde_norway stays the oracle: the tests read documents and errors with both.

pub(in crate::documents) mod events;
mod resolve;
pub(in crate::documents) mod walker;

#[cfg(test)]
mod tests;

use serde::de::DeserializeOwned;
use std::fmt;

pub use events::Mark;

/// `text` (one YAML document) read as `T`: by the common reader, or by libyaml.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    match from_common(text) {
        Some(value) => Ok(value),
        None => from_libyaml(text),
    }
}

/// `text` read as `T` by the common reader ([`super::common_yaml`]); `None` where it declines the
/// text or finds a type error (libyaml's events locate it). A text it reads nests no deeper than
/// [`super::nesting::MAX_NESTING`].
pub fn from_common<T: DeserializeOwned>(text: &str) -> Option<T> {
    walker::read(&super::common_yaml::events(text)?).ok()
}

/// `text` read as `T` by libyaml. Its nesting is not capped here ([`super::nesting::check_yaml`]).
pub fn from_libyaml<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    walker::read(&events::load(text))
}

/// A YAML error, worded and located as serde_norway words and locates it.
#[derive(Clone, Debug)]
pub struct Error(Box<ErrorKind>);

#[derive(Clone, Debug)]
enum ErrorKind {
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
    fn new(kind: ErrorKind) -> Error {
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

    /// Locates an error that has no place yet at `mark`, under `path`.
    #[inline(never)]
    fn at(mut self, mark: &Mark, path: &[Step<'_>]) -> Error {
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
            Some(mark) if mark.line != 0 || mark.column != 0 => write!(f, " at {mark}"),
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
enum Step<'w> {
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
