//! The deserializer: walks a document's events, making the visitor calls serde_norway makes, and
//! locating errors at the node they come from.
//!
//! Generic code is compiled once per type read, so what does not depend on the visitor (following
//! aliases, reading scalars, wording errors) is in plain functions.

use super::error::{Error, ErrorKind, Step};
use super::events::{Document, Event, Style};
use super::resolve::{self, Resolved};
use crate::documents::libyaml::Mark;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Expected, IgnoredAny, Unexpected, Visitor,
};

type Result<T, E = Error> = std::result::Result<T, E>;

/// `T` read from the document's first node.
pub fn read<T: DeserializeOwned>(document: &Document<'_>) -> Result<T> {
    let walker = Walker {
        events: &document.events,
        marks: &document.marks,
        error: document.error.as_ref(),
        pos: 0,
        jumps: 0,
        path: Vec::new(),
        depth_left: 128,
        variant: None,
    };
    T::deserialize(Root {
        walker,
        more_documents: document.more_documents,
    })
}

/// The document's root: after the type's first call to it returns (a derived type reads its whole
/// node in it), libyaml's error and a second document are errors, before the type goes on (an
/// untagged enum, for one, then matches what it read against its variants).
struct Root<'w, 'a> {
    walker: Walker<'w, 'a>,
    more_documents: bool,
}

impl Root<'_, '_> {
    #[inline(never)]
    fn finish<T>(&self, value: Result<T>) -> Result<T> {
        let value = value?;
        if let Some(error) = self.walker.error {
            return Err(error.clone());
        }
        if self.more_documents {
            return Err(Error::new(ErrorKind::MoreThanOneDocument));
        }
        Ok(value)
    }
}

macro_rules! at_root {
    ($($method:ident($($arg:ident: $kind:ty),*)),+ $(,)?) => {$(
        fn $method<V: Visitor<'de>>(mut self, $($arg: $kind,)* visitor: V) -> Result<V::Value> {
            let value = (&mut self.walker).$method($($arg,)* visitor);
            self.finish(value)
        }
    )+};
}

impl<'de> de::Deserializer<'de> for Root<'_, '_> {
    type Error = Error;

    at_root!(
        deserialize_any(), deserialize_bool(), deserialize_i8(), deserialize_i16(),
        deserialize_i32(), deserialize_i64(), deserialize_i128(), deserialize_u8(),
        deserialize_u16(), deserialize_u32(), deserialize_u64(), deserialize_u128(),
        deserialize_f32(), deserialize_f64(), deserialize_char(), deserialize_str(),
        deserialize_string(), deserialize_bytes(), deserialize_byte_buf(), deserialize_option(),
        deserialize_unit(), deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str), deserialize_seq(),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize), deserialize_map(),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        deserialize_identifier(), deserialize_ignored_any(),
    );
}

/// The walk through one document: every node is read through it (not through a walker of its
/// own, which made every field's reading code larger).
pub struct Walker<'w, 'a> {
    events: &'w [Event<'a>],
    /// The events' marks; none for the common reader's events.
    marks: &'w [Mark],
    error: Option<&'w Error>,
    pos: usize,
    jumps: usize,
    /// From the root to the node being read.
    path: Vec<Step<'w>>,
    depth_left: u8,
    /// Inside an enum variant named by a tag: the variant's content (its tag is not read again).
    variant: Option<Variant<'w>>,
}

#[derive(Clone, Copy)]
struct Variant<'w> {
    name: Option<&'static str>,
    tag: &'w str,
}

/// A scalar read where a number or boolean is expected.
#[derive(Clone, Copy)]
enum Want {
    Bool,
    I64,
    I128,
    U64,
    U128,
    F64,
}

/// Which event a node starts at, for its mark.
#[derive(Clone, Copy)]
struct At(usize);

/// The event at `at` or, past the events, the document's error or its end.
fn event_at<'w, 'a>(
    events: &'w [Event<'a>],
    error: Option<&'w Error>,
    at: usize,
) -> Result<&'w Event<'a>> {
    events.get(at).ok_or_else(|| past_the_end(error))
}

#[inline(never)]
fn past_the_end(error: Option<&Error>) -> Error {
    error.cloned().unwrap_or(Error::new(ErrorKind::EndOfStream))
}

/// The error for `event` where `expected` is expected.
#[inline(never)]
fn invalid_type(event: &Event<'_>, expected: &dyn Expected) -> Error {
    match event {
        Event::Scalar { value, style, tag } => {
            match resolve::resolve(value, *style, tag.as_deref(), false) {
                Ok(resolved) => resolved.invalid_type(expected),
                Err(error) => error,
            }
        }
        Event::SequenceStart(_) => de::Error::invalid_type(Unexpected::Seq, expected),
        Event::MappingStart(_) => de::Error::invalid_type(Unexpected::Map, expected),
        Event::Void => Error::new(ErrorKind::EndOfStream),
        Event::Alias(_) | Event::SequenceEnd | Event::MappingEnd => unreachable!("not a node"),
    }
}

/// A tag naming an enum variant (`!Variant`): without the `!`.
#[inline(never)]
fn variant_tag(tag: Option<&[u8]>) -> Option<&str> {
    let (&first, rest) = tag?.split_first()?;
    if first != b'!' {
        return None;
    }
    std::str::from_utf8(if rest.is_empty() { tag? } else { rest }).ok()
}

#[inline(never)]
fn is_empty_plain(event: &Event<'_>) -> bool {
    match event {
        Event::Void => true,
        Event::Scalar { value, style, .. } => value.is_empty() && *style == Style::Plain,
        _ => false,
    }
}

impl<'w, 'a> Walker<'w, 'a> {
    fn peek(&self) -> Result<(&'w Event<'a>, At)> {
        Ok((event_at(self.events, self.error, self.pos)?, At(self.pos)))
    }

    fn next(&mut self) -> Result<(&'w Event<'a>, At)> {
        let next = self.peek()?;
        self.pos += 1;
        self.variant = None;
        Ok(next)
    }

    /// Into the node an alias repeats; returns where to go on after it ([`Walker::leave_alias`]).
    #[inline(never)]
    fn enter_alias(&mut self, target: usize) -> Result<usize> {
        self.jumps += 1;
        if self.jumps > self.events.len() * 100 {
            return Err(Error::new(ErrorKind::RepetitionLimitExceeded));
        }
        self.path.push(Step::Alias);
        self.variant = None;
        Ok(std::mem::replace(&mut self.pos, target))
    }

    #[inline(never)]
    fn leave_alias(&mut self, resume: usize) {
        self.pos = resume;
        self.path.pop();
    }

    /// Reads the node an alias repeats with `read`.
    fn aliased<R>(
        &mut self,
        target: usize,
        read: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<R> {
        let resume = self.enter_alias(target)?;
        let value = read(self);
        self.leave_alias(resume);
        value
    }

    /// Where the node starting at `at` is in the text (nowhere for the common reader's events).
    fn mark(&self, at: At) -> Mark {
        self.marks.get(at.0).copied().unwrap_or_default()
    }

    /// `error` located at the node starting at `at`, unless it has a place already.
    #[inline(never)]
    fn locate(&self, error: Error, at: At) -> Error {
        error.at(&self.mark(at), &self.path)
    }

    /// Into a child node at `step`.
    #[inline(never)]
    fn enter(&mut self, step: Step<'w>) {
        self.path.push(step);
        self.variant = None;
    }

    #[inline(never)]
    fn leave(&mut self) {
        self.path.pop();
    }

    /// A number or boolean, and the scalar it was read from (an alias followed).
    #[inline(never)]
    fn typed(&mut self, want: Want, expected: &dyn Expected) -> Result<(Resolved<'static>, At)> {
        let in_variant = self.variant.is_some();
        let (event, at) = self.next()?;
        if let Event::Alias(target) = event {
            return self.aliased(*target, |w| w.typed(want, expected));
        }
        if let Event::Scalar { value, style, tag } = event {
            let (tag_wanted, parsed) = match want {
                Want::Bool => (resolve::BOOL, resolve::boolean(value).map(Resolved::Bool)),
                Want::I64 => (
                    resolve::INT,
                    resolve::signed(value, i64::from_str_radix).map(Resolved::I64),
                ),
                Want::I128 => (
                    resolve::INT,
                    resolve::signed(value, i128::from_str_radix).map(Resolved::I128),
                ),
                Want::U64 => (
                    resolve::INT,
                    resolve::unsigned(value, u64::from_str_radix).map(Resolved::U64),
                ),
                Want::U128 => (
                    resolve::INT,
                    resolve::unsigned(value, u128::from_str_radix).map(Resolved::U128),
                ),
                Want::F64 => (resolve::FLOAT, resolve::float(value).map(Resolved::F64)),
            };
            let readable = match (style, tag.as_deref()) {
                (Style::Plain, _) => true,
                (Style::Literal, Some(tag)) => !in_variant && tag == tag_wanted,
                _ => false,
            };
            if readable && let Some(parsed) = parsed {
                return Ok((parsed, at));
            }
        }
        Err(self.locate(invalid_type(event, expected), at))
    }

    /// Skips one node.
    #[inline(never)]
    fn skip(&mut self) -> Result<()> {
        let mut open = Vec::new();
        loop {
            match self.next()?.0 {
                Event::SequenceStart(_) => open.push(false),
                Event::MappingStart(_) => open.push(true),
                Event::SequenceEnd => assert_eq!(open.pop(), Some(false), "unbalanced sequence"),
                Event::MappingEnd => assert_eq!(open.pop(), Some(true), "unbalanced mapping"),
                Event::Alias(_) | Event::Scalar { .. } | Event::Void => {}
            }
            if open.is_empty() {
                return Ok(());
            }
        }
    }

    /// One level deeper, or the recursion limit at the node starting at `at`.
    #[inline(never)]
    fn descend(&mut self, at: At) -> Result<u8> {
        let saved = self.depth_left;
        self.depth_left = match saved.checked_sub(1) {
            Some(left) => left,
            None => {
                let mark = self.mark(at);
                return Err(Error::new(ErrorKind::RecursionLimitExceeded(mark)));
            }
        };
        Ok(saved)
    }

    fn visit_sequence<'de, V: Visitor<'de>>(&mut self, visitor: V, at: At) -> Result<V::Value> {
        let saved = self.descend(at)?;
        let mut items = Items {
            empty: false,
            walker: self,
            len: 0,
        };
        let value = visitor.visit_seq(&mut items);
        let len = items.len;
        self.depth_left = saved;
        let value = value?;
        self.end_collection(len, false)?;
        Ok(value)
    }

    fn visit_mapping<'de, V: Visitor<'de>>(&mut self, visitor: V, at: At) -> Result<V::Value> {
        let saved = self.descend(at)?;
        let mut entries = Entries {
            empty: false,
            walker: self,
            len: 0,
            key: None,
            key_at: None,
        };
        let value = visitor.visit_map(&mut entries);
        let len = entries.len;
        let key_at = entries.key_at;
        self.depth_left = saved;
        // A key given twice is found when it is read: its line, not the mapping's first, is where
        // the reader has to look (serde_norway names the mapping's).
        let value = value.map_err(|e| match key_at {
            Some(key_at) if e.is_duplicate_key() => self.locate(e, key_at),
            _ => e,
        })?;
        self.end_collection(len, true)?;
        Ok(value)
    }

    /// Past the items or entries the visitor left, and the collection's end: they must have been
    /// all it read.
    #[inline(never)]
    fn end_collection(&mut self, read: usize, mapping: bool) -> Result<()> {
        let total = if mapping {
            let mut rest = Entries {
                empty: false,
                walker: self,
                len: read,
                key: None,
                key_at: None,
            };
            while de::MapAccess::next_entry::<IgnoredAny, IgnoredAny>(&mut rest)?.is_some() {}
            rest.len
        } else {
            let mut rest = Items {
                empty: false,
                walker: self,
                len: read,
            };
            while de::SeqAccess::next_element::<IgnoredAny>(&mut rest)?.is_some() {}
            rest.len
        };
        let end = self.next()?.0;
        assert!(
            matches!(
                (end, mapping),
                (Event::MappingEnd, true) | (Event::SequenceEnd, false) | (Event::Void, _)
            ),
            "a collection's end"
        );
        if total == read {
            return Ok(());
        }
        let expected = match (mapping, read) {
            (true, 1) => "map containing 1 entry".to_string(),
            (true, _) => format!("map containing {read} entries"),
            (false, 1) => "sequence of 1 element".to_string(),
            (false, _) => format!("sequence of {read} elements"),
        };
        Err(de::Error::invalid_length(total, &expected.as_str()))
    }
}

/// Calls the visitor with a number or boolean read by [`Walker::typed`].
fn visit_typed<'de, V: Visitor<'de>>(visitor: V, resolved: Resolved<'_>) -> Result<V::Value> {
    match resolved {
        Resolved::Bool(b) => visitor.visit_bool(b),
        Resolved::I64(i) => visitor.visit_i64(i),
        Resolved::I128(i) => visitor.visit_i128(i),
        Resolved::U64(u) => visitor.visit_u64(u),
        Resolved::U128(u) => visitor.visit_u128(u),
        Resolved::F64(f) => visitor.visit_f64(f),
        Resolved::Unit | Resolved::Str(_) => unreachable!("numbers and booleans only"),
    }
}

/// Calls the visitor with a scalar as it resolves.
fn visit_resolved<'de, V: Visitor<'de>>(visitor: V, resolved: Resolved<'_>) -> Result<V::Value> {
    match resolved {
        Resolved::Unit => visitor.visit_unit(),
        Resolved::Str(s) => visitor.visit_str(s),
        number => visit_typed(visitor, number),
    }
}

macro_rules! typed {
    ($($method:ident => $want:ident),+) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let (resolved, at) = self.typed(Want::$want, &visitor)?;
            visit_typed(visitor, resolved).map_err(|e| self.locate(e, at))
        }
    )+};
}

macro_rules! read_as {
    ($($narrow:ident),+ => $wide:ident) => {$(
        fn $narrow<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.$wide(visitor)
        }
    )+};
}

impl<'de, 'w> de::Deserializer<'de> for &mut Walker<'w, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let in_variant = self.variant.is_some();
        let (event, at) = self.next()?;
        let tag_of = |tag: &'w Option<Box<[u8]>>| {
            if in_variant {
                None
            } else {
                variant_tag(tag.as_deref())
            }
        };
        let value = match event {
            Event::Alias(target) => {
                return self
                    .aliased(*target, |w| w.deserialize_any(visitor))
                    .map_err(|e| self.locate(e, at));
            }
            Event::Scalar { tag, .. } | Event::SequenceStart(tag) | Event::MappingStart(tag)
                if tag_of(tag).is_some() =>
            {
                self.pos -= 1;
                let tag = tag_of(tag).unwrap_or_default();
                visitor.visit_enum(TaggedVariant {
                    walker: self,
                    name: None,
                    tag,
                })
            }
            Event::Scalar { value, style, tag } => {
                match resolve::resolve(value, *style, tag.as_deref(), in_variant) {
                    Ok(resolved) => visit_resolved(visitor, resolved),
                    Err(error) => Err(error),
                }
            }
            Event::SequenceStart(_) => self.visit_sequence(visitor, at),
            Event::MappingStart(_) => self.visit_mapping(visitor, at),
            Event::Void => visitor.visit_none(),
            Event::SequenceEnd | Event::MappingEnd => unreachable!("not a node"),
        };
        value.map_err(|e| self.locate(e, at))
    }

    typed!(deserialize_bool => Bool, deserialize_i64 => I64, deserialize_i128 => I128,
        deserialize_u64 => U64, deserialize_u128 => U128, deserialize_f64 => F64);
    read_as!(deserialize_i8, deserialize_i16, deserialize_i32 => deserialize_i64);
    read_as!(deserialize_u8, deserialize_u16, deserialize_u32 => deserialize_u64);
    read_as!(deserialize_f32 => deserialize_f64);
    read_as!(deserialize_char, deserialize_string, deserialize_identifier => deserialize_str);

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, at) = self.next()?;
        match event {
            Event::Scalar { value, .. } => visitor.visit_str(value),
            Event::Alias(target) => self.aliased(*target, |w| w.deserialize_str(visitor)),
            other => Err(invalid_type(other, &visitor)),
        }
        .map_err(|e| self.locate(e, at))
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Error::new(ErrorKind::BytesUnsupported))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Error::new(ErrorKind::BytesUnsupported))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, _) = self.peek()?;
        let some = match event {
            Event::Alias(target) => {
                self.pos += 1;
                return self.aliased(*target, |w| w.deserialize_option(visitor));
            }
            Event::Scalar { value, style, tag } => {
                if *style != Style::Plain {
                    true
                } else if let (Some(tag), None) = (tag.as_deref(), self.variant) {
                    if tag != resolve::NULL {
                        true
                    } else if resolve::is_null(value) {
                        false
                    } else {
                        return Err(de::Error::invalid_value(Unexpected::Str(value), &"null"));
                    }
                } else {
                    !value.is_empty() && !resolve::is_null(value)
                }
            }
            Event::SequenceStart(_) | Event::MappingStart(_) => true,
            Event::Void => false,
            Event::SequenceEnd | Event::MappingEnd => unreachable!("not a node"),
        };
        if some {
            visitor.visit_some(self)
        } else {
            self.pos += 1;
            self.variant = None;
            visitor.visit_none()
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let in_variant = self.variant.is_some();
        let (event, at) = self.next()?;
        match event {
            Event::Scalar { value, style, tag } => {
                let null = match (style, tag.as_deref()) {
                    (Style::Literal | Style::Other, _) => false,
                    (Style::Plain, Some(tag)) if !in_variant => {
                        tag == resolve::NULL && resolve::is_null(value)
                    }
                    (Style::Plain, _) => value.is_empty() || resolve::is_null(value),
                };
                if null {
                    visitor.visit_unit()
                } else {
                    Err(de::Error::invalid_value(Unexpected::Str(value), &"null"))
                }
            }
            Event::Alias(target) => self.aliased(*target, |w| w.deserialize_unit(visitor)),
            Event::Void => visitor.visit_unit(),
            other => Err(invalid_type(other, &visitor)),
        }
        .map_err(|e| self.locate(e, at))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        let (_, at) = self.peek()?;
        let saved = self.descend(at)?;
        let value = visitor.visit_newtype_struct(&mut *self);
        self.depth_left = saved;
        value
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, at) = self.next()?;
        match event {
            Event::Alias(target) => self.aliased(*target, |w| w.deserialize_seq(visitor)),
            Event::SequenceStart(_) => self.visit_sequence(visitor, at),
            other if is_empty_plain(other) => visitor.visit_seq(Items {
                empty: true,
                walker: self,
                len: 0,
            }),
            other => Err(invalid_type(other, &visitor)),
        }
        .map_err(|e| self.locate(e, at))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, at) = self.next()?;
        match event {
            Event::Alias(target) => self.aliased(*target, |w| w.deserialize_map(visitor)),
            Event::MappingStart(_) => self.visit_mapping(visitor, at),
            other if is_empty_plain(other) => visitor.visit_map(Entries {
                empty: true,
                walker: self,
                len: 0,
                key: None,
                key_at: None,
            }),
            other => Err(invalid_type(other, &visitor)),
        }
        .map_err(|e| self.locate(e, at))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let (event, at) = self.peek()?;
        let value = if let Some(outer) = self.variant {
            match event {
                Event::Scalar { value, .. } if !value.is_empty() => {
                    visitor.visit_enum(UnitVariant { walker: self })
                }
                _ => Err(de::Error::custom(match outer.name {
                    Some(name) => format!(
                        "deserializing nested enum in {name}::{} from YAML is not supported yet",
                        outer.tag
                    ),
                    None => format!(
                        "deserializing nested enum in !{} from YAML is not supported yet",
                        outer.tag
                    ),
                })),
            }
        } else {
            match event {
                Event::Alias(target) => {
                    self.pos += 1;
                    self.aliased(*target, |w| w.deserialize_enum(name, variants, visitor))
                }
                Event::Scalar { tag, .. }
                | Event::SequenceStart(tag)
                | Event::MappingStart(tag)
                    if variant_tag(tag.as_deref()).is_some() =>
                {
                    // Returned as it comes: a tagged variant's errors are located by its content.
                    let tag = variant_tag(tag.as_deref()).unwrap_or_default();
                    return visitor.visit_enum(TaggedVariant {
                        walker: self,
                        name: Some(name),
                        tag,
                    });
                }
                Event::Scalar { .. } => visitor.visit_enum(UnitVariant { walker: self }),
                Event::MappingStart(_) => Err(de::Error::invalid_type(
                    Unexpected::Map,
                    &"a YAML tag starting with '!'",
                )),
                Event::SequenceStart(_) => Err(de::Error::invalid_type(
                    Unexpected::Seq,
                    &"a YAML tag starting with '!'",
                )),
                Event::Void => Err(Error::new(ErrorKind::EndOfStream)),
                Event::SequenceEnd | Event::MappingEnd => unreachable!("not a node"),
            }
        };
        value.map_err(|e| self.locate(e, at))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.skip()?;
        visitor.visit_unit()
    }
}

struct Items<'i, 'w, 'a> {
    /// An empty plain scalar read as an empty sequence.
    empty: bool,
    walker: &'i mut Walker<'w, 'a>,
    len: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'_, '_, '_> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>> {
        if self.empty {
            return Ok(None);
        }
        match self.walker.peek()?.0 {
            Event::SequenceEnd | Event::Void => Ok(None),
            _ => {
                self.walker.enter(Step::Item(self.len));
                self.len += 1;
                let item = seed.deserialize(&mut *self.walker);
                self.walker.leave();
                item.map(Some)
            }
        }
    }
}

struct Entries<'e, 'w, 'a> {
    /// An empty plain scalar read as an empty mapping.
    empty: bool,
    walker: &'e mut Walker<'w, 'a>,
    len: usize,
    /// The key just read, when it is a scalar.
    key: Option<&'w str>,
    /// Where the key just read starts.
    key_at: Option<At>,
}

impl<'de> de::MapAccess<'de> for Entries<'_, '_, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.empty {
            return Ok(None);
        }
        let (event, at) = self.walker.peek()?;
        self.key = match event {
            Event::MappingEnd | Event::Void => return Ok(None),
            Event::Scalar { value, .. } => Some(value.as_ref()),
            _ => None,
        };
        self.key_at = Some(at);
        self.len += 1;
        // A key is read where its mapping is: errors in it name the mapping.
        seed.deserialize(&mut *self.walker).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value> {
        self.walker.enter(match self.key {
            Some(key) => Step::Key(key),
            None => Step::Unknown,
        });
        let value = seed.deserialize(&mut *self.walker);
        self.walker.leave();
        value
    }
}

/// An enum variant named by a tag (`!Variant content`).
struct TaggedVariant<'t, 'w, 'a> {
    walker: &'t mut Walker<'w, 'a>,
    name: Option<&'static str>,
    tag: &'w str,
}

impl<'de, 't, 'w, 'a> de::EnumAccess<'de> for TaggedVariant<'t, 'w, 'a> {
    type Error = Error;
    type Variant = Content<'t, 'w, 'a>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant)> {
        let variant = seed.deserialize(de::value::StrDeserializer::<Error>::new(self.tag))?;
        self.walker.variant = Some(Variant {
            name: self.name,
            tag: self.tag,
        });
        Ok((variant, Content(self.walker)))
    }
}

/// The content of a variant named by a tag: the tagged node itself, its tag not read again.
struct Content<'c, 'w, 'a>(&'c mut Walker<'w, 'a>);

impl<'de> de::VariantAccess<'de> for Content<'_, '_, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        de::Deserialize::deserialize(self.0)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value> {
        seed.deserialize(self.0)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self.0, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self.0, "", fields, visitor)
    }
}

/// An enum variant named by a plain scalar: a unit variant only.
struct UnitVariant<'u, 'w, 'a> {
    walker: &'u mut Walker<'w, 'a>,
}

impl<'de, 'u, 'w, 'a> de::EnumAccess<'de> for UnitVariant<'u, 'w, 'a> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self)> {
        Ok((seed.deserialize(&mut *self.walker)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant<'_, '_, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, _: S) -> Result<S::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"newtype variant",
        ))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"tuple variant",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"struct variant",
        ))
    }
}
