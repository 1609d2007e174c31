//! A YAML document as the walker reads it: its events up to the end of the first document (or to
//! libyaml's first error, kept for the walker to return where the events end), aliases resolved to
//! the events they repeat.

use super::error::{Error, ErrorKind};
use crate::documents::libyaml::{Mark, Parser};
use std::borrow::Cow;
use std::collections::HashMap;
use unsafe_libyaml_norway::{
    YAML_ALIAS_EVENT, YAML_DOCUMENT_END_EVENT, YAML_LITERAL_SCALAR_STYLE, YAML_MAPPING_END_EVENT,
    YAML_MAPPING_START_EVENT, YAML_PLAIN_SCALAR_STYLE, YAML_SCALAR_EVENT, YAML_SEQUENCE_END_EVENT,
    YAML_SEQUENCE_START_EVENT, YAML_STREAM_END_EVENT, yaml_event_t,
};

/// How a scalar was written; only plain and literal scalars are told apart from the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Literal,
    /// Quoted or folded.
    Other,
}

#[derive(Debug, PartialEq)]
pub enum Event<'a> {
    /// Repeats the node whose first event is at this index.
    Alias(usize),
    Scalar {
        value: Cow<'a, str>,
        style: Style,
        tag: Option<Box<[u8]>>,
    },
    SequenceStart(Option<Box<[u8]>>),
    SequenceEnd,
    MappingStart(Option<Box<[u8]>>),
    MappingEnd,
    /// An empty document.
    Void,
}

pub struct Document<'a> {
    pub events: Vec<Event<'a>>,
    /// Where each event starts; empty where the events were not read from libyaml (their errors
    /// are located by reading the text again with libyaml).
    pub marks: Vec<Mark>,
    /// libyaml's error where the events stop early.
    pub error: Option<Error>,
    /// Whether the text goes on to a second document.
    pub more_documents: bool,
}

/// The first document of `text`, parsed by libyaml.
pub fn load(text: &str) -> Document<'static> {
    let mut parser = Parser::new(text);
    let mut document = Document {
        events: Vec::new(),
        marks: Vec::new(),
        error: None,
        more_documents: false,
    };
    let mut anchors: HashMap<Box<[u8]>, usize> = HashMap::new();
    loop {
        let at = document.events.len();
        let next = parser.next(|event| read_event(event, &mut anchors, at));
        let (event, mark) = match next {
            Ok(Read::Event(event, mark)) => (event, mark),
            Ok(Read::Skip) => continue,
            Ok(Read::StreamEnd(mark)) => {
                if document.events.is_empty() {
                    document.events.push(Event::Void);
                    document.marks.push(mark);
                }
                return document;
            }
            Ok(Read::DocumentEnd) => {
                // Anything but the stream's end after it is a second document (an error too).
                document.more_documents =
                    !matches!(parser.next(|e| e.type_), Ok(YAML_STREAM_END_EVENT));
                return document;
            }
            Ok(Read::UnknownAnchor(mark)) => {
                document.error = Some(Error::new(ErrorKind::UnknownAnchor(mark)));
                return document;
            }
            Err(error) => {
                document.error = Some(Error::new(ErrorKind::Syntax(error.message, error.mark)));
                return document;
            }
        };
        document.events.push(event);
        document.marks.push(mark);
    }
}

enum Read {
    Event(Event<'static>, Mark),
    Skip,
    StreamEnd(Mark),
    DocumentEnd,
    UnknownAnchor(Mark),
}

/// One libyaml event as the walker reads it; an anchor is remembered as the index `at`.
fn read_event(event: &yaml_event_t, anchors: &mut HashMap<Box<[u8]>, usize>, at: usize) -> Read {
    let mark = Mark::of(&event.start_mark);
    // SAFETY: each union field is read for its own event type; libyaml's strings are
    // NUL-terminated and its scalar's value is `length` bytes, alive until the event is deleted.
    unsafe {
        let mut anchored = |anchor: *const u8| {
            if let Some(name) = c_bytes(anchor) {
                anchors.insert(name, at);
            }
        };
        let event = match event.type_ {
            YAML_STREAM_END_EVENT => return Read::StreamEnd(mark),
            YAML_DOCUMENT_END_EVENT => return Read::DocumentEnd,
            YAML_ALIAS_EVENT => {
                let name = c_bytes(event.data.alias.anchor).unwrap_or_default();
                match anchors.get(&name) {
                    Some(&target) => Event::Alias(target),
                    None => return Read::UnknownAnchor(mark),
                }
            }
            YAML_SCALAR_EVENT => {
                let scalar = &event.data.scalar;
                anchored(scalar.anchor);
                let bytes = std::slice::from_raw_parts(scalar.value, scalar.length as usize);
                Event::Scalar {
                    value: Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
                    style: match scalar.style {
                        YAML_PLAIN_SCALAR_STYLE => Style::Plain,
                        YAML_LITERAL_SCALAR_STYLE => Style::Literal,
                        _ => Style::Other,
                    },
                    tag: c_bytes(scalar.tag),
                }
            }
            YAML_SEQUENCE_START_EVENT => {
                anchored(event.data.sequence_start.anchor);
                Event::SequenceStart(c_bytes(event.data.sequence_start.tag))
            }
            YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            YAML_MAPPING_START_EVENT => {
                anchored(event.data.mapping_start.anchor);
                Event::MappingStart(c_bytes(event.data.mapping_start.tag))
            }
            YAML_MAPPING_END_EVENT => Event::MappingEnd,
            _ => return Read::Skip, // stream and document starts
        };
        Read::Event(event, mark)
    }
}

/// A NUL-terminated C string's bytes; `None` for a null pointer.
unsafe fn c_bytes(pointer: *const u8) -> Option<Box<[u8]>> {
    if pointer.is_null() {
        return None;
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let bytes = unsafe { std::ffi::CStr::from_ptr(pointer.cast()) }.to_bytes();
    Some(bytes.into())
}
