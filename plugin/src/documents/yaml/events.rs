//! A YAML document as the walker reads it: its events up to the end of the first document (or to
//! libyaml's first error, kept for the walker to return where the events end), aliases resolved to
//! the events they repeat.

use super::{Error, ErrorKind};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::mem::MaybeUninit;
use unsafe_libyaml_norway as sys;

/// A position as libyaml counts it: a byte offset, and a 0-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    pub index: u64,
    pub line: u64,
    pub column: u64,
}

impl Mark {
    fn of(mark: &sys::yaml_mark_t) -> Mark {
        Mark {
            index: mark.index,
            line: mark.line,
            column: mark.column,
        }
    }

    fn is_start(&self) -> bool {
        self.line == 0 && self.column == 0
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_start() {
            write!(f, "position {}", self.index)
        } else {
            write!(f, "line {} column {}", self.line + 1, self.column + 1)
        }
    }
}

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
                    !matches!(parser.next(|e| e.type_), Ok(sys::YAML_STREAM_END_EVENT));
                return document;
            }
            Ok(Read::UnknownAnchor(mark)) => {
                document.error = Some(Error::new(ErrorKind::UnknownAnchor(mark)));
                return document;
            }
            Err(error) => {
                document.error = Some(error);
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
fn read_event(
    event: &sys::yaml_event_t,
    anchors: &mut HashMap<Box<[u8]>, usize>,
    at: usize,
) -> Read {
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
            sys::YAML_STREAM_END_EVENT => return Read::StreamEnd(mark),
            sys::YAML_DOCUMENT_END_EVENT => return Read::DocumentEnd,
            sys::YAML_ALIAS_EVENT => {
                let name = c_bytes(event.data.alias.anchor).unwrap_or_default();
                match anchors.get(&name) {
                    Some(&target) => Event::Alias(target),
                    None => return Read::UnknownAnchor(mark),
                }
            }
            sys::YAML_SCALAR_EVENT => {
                let scalar = &event.data.scalar;
                anchored(scalar.anchor);
                let bytes = std::slice::from_raw_parts(scalar.value, scalar.length as usize);
                Event::Scalar {
                    value: Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
                    style: match scalar.style {
                        sys::YAML_PLAIN_SCALAR_STYLE => Style::Plain,
                        sys::YAML_LITERAL_SCALAR_STYLE => Style::Literal,
                        _ => Style::Other,
                    },
                    tag: c_bytes(scalar.tag),
                }
            }
            sys::YAML_SEQUENCE_START_EVENT => {
                anchored(event.data.sequence_start.anchor);
                Event::SequenceStart(c_bytes(event.data.sequence_start.tag))
            }
            sys::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            sys::YAML_MAPPING_START_EVENT => {
                anchored(event.data.mapping_start.anchor);
                Event::MappingStart(c_bytes(event.data.mapping_start.tag))
            }
            sys::YAML_MAPPING_END_EVENT => Event::MappingEnd,
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

/// libyaml's event parser over a borrowed text.
pub(in crate::documents) struct Parser<'text> {
    /// Boxed: libyaml keeps its state behind this pointer for the parser's whole life.
    sys: Box<MaybeUninit<sys::yaml_parser_t>>,
    initialized: bool,
    _text: std::marker::PhantomData<&'text str>,
}

impl<'text> Parser<'text> {
    pub(in crate::documents) fn new(text: &'text str) -> Parser<'text> {
        let mut sys = Box::new(MaybeUninit::<sys::yaml_parser_t>::uninit());
        // SAFETY: initialize fills the struct; the input outlives the parser (the lifetime above).
        let initialized = unsafe {
            let parser = sys.as_mut_ptr();
            let ok = sys::yaml_parser_initialize(parser).ok;
            if ok {
                sys::yaml_parser_set_encoding(parser, sys::YAML_UTF8_ENCODING);
                sys::yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as u64);
            }
            ok
        };
        Parser {
            sys,
            initialized,
            _text: std::marker::PhantomData,
        }
    }

    /// The next event, as `read` reads it before libyaml frees it; after an error, that error
    /// again.
    pub(in crate::documents) fn next<R>(
        &mut self,
        read: impl FnOnce(&sys::yaml_event_t) -> R,
    ) -> Result<R, Error> {
        if !self.initialized {
            return Err(Error::new(ErrorKind::EndOfStream));
        }
        let mut event = MaybeUninit::<sys::yaml_event_t>::uninit();
        // SAFETY: the parser was initialized; a parsed event is read, then deleted once.
        unsafe {
            let parser = self.sys.as_mut_ptr();
            if (&*parser).error != sys::YAML_NO_ERROR
                || sys::yaml_parser_parse(parser, event.as_mut_ptr()).fail
            {
                return Err(self.error());
            }
            let event = event.as_mut_ptr();
            let value = read(&*event);
            sys::yaml_event_delete(event);
            Ok(value)
        }
    }

    /// libyaml's error, worded as libyaml words it: the problem, where, and what it was parsing.
    fn error(&self) -> Error {
        // SAFETY: read after a failed parse; libyaml's problem and context are static strings.
        let parser = unsafe { &*self.sys.as_ptr() };
        let text = |pointer: *const std::ffi::c_char| {
            // SAFETY: libyaml's messages are NUL-terminated static strings.
            (!pointer.is_null())
                .then(|| unsafe { std::ffi::CStr::from_ptr(pointer) }.to_string_lossy())
        };
        let problem_mark = Mark::of(&parser.problem_mark);
        let context_mark = Mark::of(&parser.context_mark);
        let mut message = text(parser.problem)
            .unwrap_or(Cow::Borrowed("libyaml parser failed but there is no error"))
            .into_owned();
        if !problem_mark.is_start() {
            message.push_str(&format!(" at {problem_mark}"));
        } else if parser.problem_offset != 0 {
            message.push_str(&format!(" at position {}", parser.problem_offset));
        }
        if let Some(context) = text(parser.context) {
            message.push_str(&format!(", {context}"));
            if !context_mark.is_start()
                && (context_mark.line, context_mark.column)
                    != (problem_mark.line, problem_mark.column)
            {
                message.push_str(&format!(" at {context_mark}"));
            }
        }
        Error::new(ErrorKind::Syntax(message, problem_mark))
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        if self.initialized {
            // SAFETY: an initialized parser is deleted once (a failed initialize freed its own).
            unsafe { sys::yaml_parser_delete(self.sys.as_mut_ptr()) }
        }
    }
}
