//! FalkorDB's parameters. It has no separate channel for them: they travel in a `CYPHER k=v …`
//! header before the query, in its string syntax. This is the one place that writes that header,
//! so a value never enters a query's body and a quote in it cannot end its string.

use std::fmt::Write as _;

/// A parameter's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Text(String),
    Int(i64),
    Texts(Vec<String>),
}

/// The longest header written: FalkorDB reads the whole query into memory, and no parameter of
/// memory control comes near this.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// `CYPHER name=value … ` for `params`, or why it cannot be written: a name that is not a plain
/// identifier, a text holding NUL (FalkorDB reads the query as a C string: it would end there),
/// or a header over [`MAX_HEADER_BYTES`].
pub fn header(params: &[(&str, Param)]) -> Result<String, String> {
    let mut out = String::new();
    if params.is_empty() {
        return Ok(out);
    }
    out.push_str("CYPHER ");
    for (name, value) in params {
        let plain = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return Err(format!("parameter name {name:?} is not a plain identifier"));
        }
        out.push_str(name);
        out.push('=');
        match value {
            Param::Text(text) => quoted(&mut out, name, text)?,
            Param::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Param::Texts(texts) => {
                out.push('[');
                for (i, text) in texts.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quoted(&mut out, name, text)?;
                }
                out.push(']');
            }
        }
        out.push(' ');
        if out.len() > MAX_HEADER_BYTES {
            return Err(format!(
                "the parameters are longer than {MAX_HEADER_BYTES} bytes"
            ));
        }
    }
    Ok(out)
}

/// A double-quoted string in which only a backslash and a double quote are escaped: FalkorDB
/// reads every other character, newlines included, as itself.
fn quoted(out: &mut String, name: &str, text: &str) -> Result<(), String> {
    if text.contains('\0') {
        return Err(format!(
            "parameter {name} holds a NUL character, which FalkorDB cannot read in a query"
        ));
    }
    out.push('"');
    for c in text.chars() {
        if matches!(c, '\\' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads a header back as FalkorDB's lexer does: the reference the property checks against.
    fn read_back(header: &str) -> Vec<(String, Param)> {
        let mut params = Vec::new();
        let mut chars = header
            .strip_prefix("CYPHER ")
            .expect("header")
            .chars()
            .peekable();
        while chars.peek().is_some() {
            let name: String = chars.by_ref().take_while(|&c| c != '=').collect();
            let value = match chars.peek() {
                Some('"') => Param::Text(read_text(&mut chars)),
                Some('[') => {
                    chars.next();
                    let mut texts = Vec::new();
                    while chars.peek() == Some(&'"') {
                        texts.push(read_text(&mut chars));
                        if chars.peek() == Some(&',') {
                            chars.next();
                        }
                    }
                    assert_eq!(chars.next(), Some(']'));
                    Param::Texts(texts)
                }
                _ => Param::Int(
                    chars
                        .by_ref()
                        .take_while(|&c| c != ' ')
                        .collect::<String>()
                        .parse()
                        .unwrap(),
                ),
            };
            if !matches!(value, Param::Int(_)) {
                assert_eq!(chars.next(), Some(' '));
            }
            params.push((name, value));
        }
        params
    }

    fn read_text(chars: &mut std::iter::Peekable<std::str::Chars>) -> String {
        assert_eq!(chars.next(), Some('"'));
        let mut text = String::new();
        loop {
            match chars.next().expect("closed") {
                '\\' => text.push(chars.next().expect("escaped")),
                '"' => return text,
                c => text.push(c),
            }
        }
    }

    fn hostile() -> impl Strategy<Value = String> {
        prop_oneof![
            "[\"'\\\\\n\r\t ;{}()$a-z]{0,40}",
            any::<String>().prop_map(|s| s.replace('\0', "")),
            Just("\" RETURN 1 //".to_string()),
            Just("\\\" MATCH (n) DETACH DELETE n //".to_string()),
        ]
    }

    proptest! {
        #[test]
        fn every_value_reads_back_as_itself(
            text in hostile(),
            texts in proptest::collection::vec(hostile(), 0..5),
            n in any::<i64>(),
        ) {
            let params = vec![
                ("text", Param::Text(text)),
                ("n", Param::Int(n)),
                ("texts", Param::Texts(texts)),
            ];
            let written = header(&params).unwrap();
            let read: Vec<(String, Param)> = read_back(&written);
            let expected: Vec<(String, Param)> =
                params.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            prop_assert_eq!(read, expected);
        }
    }

    #[test]
    fn a_nul_a_bad_name_and_a_huge_value_are_refused_by_name() {
        let nul = header(&[("uuid", Param::Text("a\0b".into()))]).unwrap_err();
        assert!(nul.contains("uuid") && nul.contains("NUL"), "{nul}");
        let name = header(&[("x=1 y", Param::Int(1))]).unwrap_err();
        assert!(name.contains("not a plain identifier"), "{name}");
        let huge = header(&[("t", Param::Text("x".repeat(MAX_HEADER_BYTES + 1)))]).unwrap_err();
        assert!(huge.contains("longer than"), "{huge}");
    }
}
