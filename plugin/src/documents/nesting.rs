//! A cap on how deeply a YAML or JSON document nests, checked before it is deserialized.
//!
//! libyaml's scanner does work proportional to the open flow collections for every token, so a
//! document such as `[[[[…]]]]` parses in time quadratic in its size (100 KB took over a minute in the
//! component), and serde only counts depth after the whole document is parsed. Here the same libyaml
//! parser is walked event by event and stopped at the first collection deeper than the cap: the work
//! done until then is linear. JSON nesting is counted directly (its syntax is unambiguous).

use std::mem::MaybeUninit;
use unsafe_libyaml_norway as unsafe_libyaml;

/// Deepest nesting of collections accepted in a configuration or expert file.
pub const MAX_NESTING: usize = 64;

/// Where a document first nests deeper than [`MAX_NESTING`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based.
    pub line: u32,
}

impl TooDeep {
    pub fn message(&self) -> String {
        format!("nested deeper than {MAX_NESTING} levels")
    }
}

/// Checks a YAML text. Syntax errors are left for the deserializer to report (it stops at the same
/// place), so only a nesting problem is an error here.
pub fn check_yaml(text: &str) -> Result<(), TooDeep> {
    let mut parser = Parser::new(text);
    let mut depth = 0usize;
    loop {
        let Some((kind, line)) = parser.next() else {
            return Ok(());
        };
        match kind {
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT
            | unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(TooDeep { line });
                }
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT | unsafe_libyaml::YAML_MAPPING_END_EVENT => {
                depth = depth.saturating_sub(1);
            }
            unsafe_libyaml::YAML_STREAM_END_EVENT => return Ok(()),
            _ => {}
        }
    }
}

/// Checks a JSON text: brackets outside strings. Malformed JSON is left for the deserializer.
pub fn check_json(text: &str) -> Result<(), TooDeep> {
    let (mut depth, mut line, mut in_string, mut escaped) = (0usize, 1u32, false, false);
    for byte in text.bytes() {
        match byte {
            b'\n' => line += 1,
            _ if in_string => match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            },
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(TooDeep { line });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// libyaml's event parser over a borrowed text.
struct Parser<'text> {
    /// Boxed: libyaml keeps its state behind this pointer for the parser's whole life.
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    initialized: bool,
    failed: bool,
    _text: std::marker::PhantomData<&'text str>,
}

impl<'text> Parser<'text> {
    fn new(text: &'text str) -> Parser<'text> {
        let mut sys = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        // SAFETY: initialize fills the struct; the input outlives the parser (the lifetime above).
        let initialized = unsafe {
            let parser = sys.as_mut_ptr();
            let ok = unsafe_libyaml::yaml_parser_initialize(parser).ok;
            if ok {
                unsafe_libyaml::yaml_parser_set_encoding(
                    parser,
                    unsafe_libyaml::YAML_UTF8_ENCODING,
                );
                unsafe_libyaml::yaml_parser_set_input_string(
                    parser,
                    text.as_ptr(),
                    text.len() as u64,
                );
            }
            ok
        };
        Parser {
            sys,
            initialized,
            failed: !initialized,
            _text: std::marker::PhantomData,
        }
    }

    /// The next event's kind and 1-based line; None after an error or the end.
    fn next(&mut self) -> Option<(unsafe_libyaml::yaml_event_type_t, u32)> {
        if self.failed {
            return None;
        }
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialized; a parsed event is read, then deleted once.
        unsafe {
            let parser = self.sys.as_mut_ptr();
            if unsafe_libyaml::yaml_parser_parse(parser, event.as_mut_ptr()).fail {
                self.failed = true;
                return None;
            }
            let event = event.as_mut_ptr();
            let next = ((*event).type_, (*event).start_mark.line as u32 + 1);
            unsafe_libyaml::yaml_event_delete(event);
            Some(next)
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        if self.initialized {
            // SAFETY: an initialized parser is deleted once (a failed initialize freed its own).
            unsafe { unsafe_libyaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallow_documents_pass_and_deep_ones_name_their_line() {
        assert_eq!(check_yaml("a: [1, {b: [2]}]\nc:\n  - d: e\n"), Ok(()));
        let deep = format!("a: 1\nb: {}{}\n", "[".repeat(65), "]".repeat(65));
        assert_eq!(check_yaml(&deep), Err(TooDeep { line: 2 }));
        assert_eq!(
            check_yaml(&format!("{}{}", "[".repeat(64), "]".repeat(64))),
            Ok(())
        );
        let mut block = String::new();
        for level in 0..70 {
            block.push_str(&format!("{}k:\n", " ".repeat(level)));
        }
        assert_eq!(check_yaml(&block), Err(TooDeep { line: 65 }));
        assert_eq!(
            check_yaml("a: [unclosed\n"),
            Ok(()),
            "syntax is the parser's"
        );
    }

    #[test]
    fn json_brackets_inside_strings_do_not_count() {
        let deep = format!("{{\n\"a\": {}1{}}}", "[".repeat(70), "]".repeat(70));
        assert_eq!(check_json(&deep), Err(TooDeep { line: 2 }));
        let quoted = format!("{{\"a\": \"{}\\\"[\"}}", "[".repeat(100));
        assert_eq!(check_json(&quoted), Ok(()));
    }
}
