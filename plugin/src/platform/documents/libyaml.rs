//! libyaml's event parser (`unsafe-libyaml-norway`, the parser serde_norway wraps) over a borrowed
//! text, its positions, and its errors worded as serde_norway words them.

use std::borrow::Cow;
use std::fmt;
use std::mem::MaybeUninit;
use unsafe_libyaml_norway::{
    YAML_NO_ERROR, YAML_UTF8_ENCODING, yaml_event_delete, yaml_event_t, yaml_mark_t,
    yaml_parser_delete, yaml_parser_initialize, yaml_parser_parse, yaml_parser_set_encoding,
    yaml_parser_set_input_string, yaml_parser_t,
};

pub use unsafe_libyaml_norway::yaml_event_t as Event;

/// A position as libyaml counts it: a byte offset, and a 0-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    pub index: u64,
    pub line: u64,
    pub column: u64,
}

impl Mark {
    pub fn of(mark: &yaml_mark_t) -> Mark {
        Mark {
            index: mark.index,
            line: mark.line,
            column: mark.column,
        }
    }

    pub fn is_start(&self) -> bool {
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

/// libyaml's error: its message (the problem, where, and what it was parsing) and the problem's
/// position.
#[derive(Clone, Debug)]
pub struct SyntaxError {
    pub message: String,
    pub mark: Mark,
}

/// libyaml's event parser over a borrowed text.
pub struct Parser<'text> {
    /// Boxed: libyaml keeps its state behind this pointer for the parser's whole life.
    sys: Box<MaybeUninit<yaml_parser_t>>,
    initialized: bool,
    _text: std::marker::PhantomData<&'text str>,
}

impl<'text> Parser<'text> {
    pub fn new(text: &'text str) -> Parser<'text> {
        let mut sys = Box::new(MaybeUninit::<yaml_parser_t>::uninit());
        // SAFETY: initialize fills the struct; the input outlives the parser (the lifetime above).
        let initialized = unsafe {
            let parser = sys.as_mut_ptr();
            let ok = yaml_parser_initialize(parser).ok;
            if ok {
                yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING);
                yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as u64);
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
    pub fn next<R>(&mut self, read: impl FnOnce(&Event) -> R) -> Result<R, SyntaxError> {
        if !self.initialized {
            return Err(SyntaxError {
                message: "libyaml parser failed but there is no error".to_string(),
                mark: Mark::default(),
            });
        }
        let mut event = MaybeUninit::<yaml_event_t>::uninit();
        // SAFETY: the parser was initialized; a parsed event is read, then deleted once.
        unsafe {
            let parser = self.sys.as_mut_ptr();
            if (&*parser).error != YAML_NO_ERROR
                || yaml_parser_parse(parser, event.as_mut_ptr()).fail
            {
                return Err(self.error());
            }
            let event = event.as_mut_ptr();
            let value = read(&*event);
            yaml_event_delete(event);
            Ok(value)
        }
    }

    /// libyaml's error, worded as libyaml words it: the problem, where, and what it was parsing.
    fn error(&self) -> SyntaxError {
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
        SyntaxError {
            message,
            mark: problem_mark,
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        if self.initialized {
            // SAFETY: an initialized parser is deleted once (a failed initialize freed its own).
            unsafe { yaml_parser_delete(self.sys.as_mut_ptr()) }
        }
    }
}
