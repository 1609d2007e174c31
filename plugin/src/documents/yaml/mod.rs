//! Typed reads of YAML documents: libyaml's events (or the common reader's, for documents written
//! the common way) walked by one deserializer, with serde_norway's values, errors, paths and lines.
//!
//! serde_norway's deserializer was compiled once for every type read from YAML, beside the common
//! reader's own (the fast path): two copies of every configuration type's reading code (235 KB and
//! 45 KB before `wasm-opt`). Here both sources give the same events to one walker, so every type is
//! compiled once. serde_norway stays the oracle: the tests read documents and errors with both.

mod common;
mod error;
mod events;
mod resolve;
mod walker;

#[cfg(test)]
mod tests;

use serde::de::DeserializeOwned;

pub use error::Error;

/// `text` (one YAML document) read as `T`: by the common reader, or by libyaml.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    match from_common(text) {
        Some(value) => Ok(value),
        None => from_libyaml(text),
    }
}

/// `text` read as `T` by the common reader ([`common`]); `None` where it declines the
/// text or finds a type error (libyaml's events locate it). A text it reads nests no deeper than
/// [`super::nesting::MAX_NESTING`].
pub fn from_common<T: DeserializeOwned>(text: &str) -> Option<T> {
    walker::read(&common::events(text)?).ok()
}

/// `text` read as `T` by libyaml. Its nesting is not capped here ([`super::nesting::check_yaml`]).
pub fn from_libyaml<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    walker::read(&events::load(text))
}
