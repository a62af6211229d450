//! A strict JSON parser for the reader ([CR-1]): the whole of RFC 8259, nothing more.
//!
//! Written here rather than taken from `serde_json` for two reasons the canonical form imposes: a label
//! integer has any size ([CC-9]), and `serde_json` reads one beyond 64 bits as a float; and an object
//! with a member named twice must be refused, where `serde_json` keeps the last one. Numbers are kept
//! as their text, objects as their members in document order. Nesting deeper than
//! [`MAX_LABEL_DEPTH`] levels — deeper than the writer ever writes — is refused before it can exhaust
//! the stack.
//!
//! [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use connectome_canonical::MAX_LABEL_DEPTH;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, unescaped.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: its members in document order, no name twice.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// What the value is, for a message: `null`, `a boolean`, `a number`, ….
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::Str(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// Where and why bytes are not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Syntax {
    /// The byte offset of the fault.
    pub(crate) offset: usize,
    /// What is wrong there.
    pub(crate) problem: &'static str,
}

/// Parses `bytes` as one JSON value, surrounded by nothing but whitespace.
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, Syntax> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Syntax { offset: e.valid_up_to(), problem: "ill-formed UTF-8" })?;
    let mut parser = Parser { text, at: 0 };
    parser.space();
    let value = parser.value(1)?;
    parser.space();
    if parser.at != text.len() {
        return Err(parser.fault("trailing characters after the value"));
    }
    Ok(value)
}

/// The parser's state: the text and the byte offset it has reached.
struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    /// A fault at the current offset.
    fn fault(&self, problem: &'static str) -> Syntax {
        Syntax { offset: self.at, problem }
    }

    /// The byte at the current offset, if any.
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips JSON whitespace.
    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consumes `word` if the text continues with it.
    fn literal(&mut self, word: &str, value: Json) -> Result<Json, Syntax> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.fault("not a JSON value"))
        }
    }

    /// One value at nesting `depth` (the top level is 1).
    fn value(&mut self, depth: usize) -> Result<Json, Syntax> {
        match self.peek() {
            None => Err(self.fault("unexpected end of input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Json::Str),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.fault("not a JSON value")),
        }
    }

    /// Refuses a container opened deeper than the writer ever nests.
    fn open(&mut self, depth: usize) -> Result<(), Syntax> {
        if depth > MAX_LABEL_DEPTH {
            return Err(self.fault("nested deeper than 127 levels"));
        }
        self.at += 1;
        self.space();
        Ok(())
    }

    /// After an element: `,` (true, more follow) or the closing byte (false).
    fn next(&mut self, close: u8) -> Result<bool, Syntax> {
        self.space();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                self.space();
                Ok(true)
            }
            Some(b) if b == close => {
                self.at += 1;
                Ok(false)
            }
            None => Err(self.fault("unexpected end of input")),
            Some(_) => Err(self.fault("expected `,` or the end of the container")),
        }
    }

    /// An object; a member named twice is refused at its second name (the first such in document
    /// order, found once the object is read, in linear time).
    fn object(&mut self, depth: usize) -> Result<Json, Syntax> {
        self.open(depth)?;
        let mut members: Vec<(String, Json)> = Vec::new();
        let mut starts = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(members));
        }
        loop {
            starts.push(self.at);
            if self.peek() != Some(b'"') {
                return Err(self.fault("expected a member name"));
            }
            let name = self.string()?;
            self.space();
            if self.peek() != Some(b':') {
                return Err(self.fault("expected `:`"));
            }
            self.at += 1;
            self.space();
            let value = self.value(depth + 1)?;
            members.push((name, value));
            if !self.next(b'}')? {
                break;
            }
        }
        let mut names = std::collections::HashSet::with_capacity(members.len());
        if let Some(i) = members.iter().position(|(name, _)| !names.insert(name.as_str())) {
            return Err(Syntax { offset: starts[i], problem: "a member named twice" });
        }
        Ok(Json::Object(members))
    }

    /// An array.
    fn array(&mut self, depth: usize) -> Result<Json, Syntax> {
        self.open(depth)?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if !self.next(b']')? {
                return Ok(Json::Array(items));
            }
        }
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as written.
    fn number(&mut self) -> Result<Json, Syntax> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        let digits = |at: &mut usize| {
            let from = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at - from
        };
        let mut at = self.at;
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        let int_start = at;
        let int = digits(&mut at);
        if int == 0 || (int > 1 && bytes[int_start] == b'0') {
            self.at = int_start;
            return Err(self.fault("a malformed number"));
        }
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            if digits(&mut at) == 0 {
                self.at = at;
                return Err(self.fault("a malformed number"));
            }
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            if digits(&mut at) == 0 {
                self.at = at;
                return Err(self.fault("a malformed number"));
            }
        }
        self.at = at;
        Ok(Json::Number(self.text[start..at].to_owned()))
    }

    /// Four hex digits after `\u`.
    fn hex4(&mut self) -> Result<u32, Syntax> {
        let hex = self.text.get(self.at..self.at + 4).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        let code = hex
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.fault("a malformed \\u escape"))?;
        self.at += 4;
        Ok(code)
    }

    /// A string, unescaped; a control character or a lone surrogate is refused.
    fn string(&mut self) -> Result<String, Syntax> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run = self.text[self.at..].find(|c: char| c == '"' || c == '\\' || c < ' ');
            let Some(len) = run else {
                self.at = self.text.len();
                return Err(self.fault("an unterminated string"));
            };
            out.push_str(&self.text[self.at..self.at + len]);
            self.at += len;
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                _ => return Err(self.fault("a control character in a string")),
            }
        }
    }

    /// One escape, after its `\`.
    fn escape(&mut self, out: &mut String) -> Result<(), Syntax> {
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.at += 1;
                let first = self.hex4()?;
                let code = if (0xd800..0xdc00).contains(&first) {
                    if !self.text[self.at..].starts_with("\\u") {
                        return Err(self.fault("a lone surrogate"));
                    }
                    self.at += 2;
                    let second = self.hex4()?;
                    if !(0xdc00..0xe000).contains(&second) {
                        return Err(self.fault("a lone surrogate"));
                    }
                    0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
                } else {
                    first
                };
                let c = char::from_u32(code).ok_or_else(|| self.fault("a lone surrogate"))?;
                out.push(c);
                return Ok(());
            }
            _ => return Err(self.fault("an unknown escape")),
        };
        self.at += 1;
        out.push(simple);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_integers_stay_text_and_members_keep_their_order() {
        let json = parse(br#" {"b":123456789012345678901234567890,"a":[true,null,-1.5e3]} "#).unwrap();
        let Json::Object(members) = json else { panic!("an object") };
        assert_eq!(members[0], ("b".to_owned(), Json::Number("123456789012345678901234567890".to_owned())));
        assert_eq!(members[1].0, "a");
    }

    #[test]
    fn faults_name_their_offset() {
        let cases: [(&[u8], usize, &str); 9] = [
            (br#"{"a":1"#, 6, "unexpected end of input"),
            (br#"{"a":1,"a":2}"#, 7, "a member named twice"),
            (br#"[01]"#, 1, "a malformed number"),
            (br#""\ud800""#, 7, "a lone surrogate"),
            (b"\"a\nb\"", 2, "a control character in a string"),
            (br#"{} x"#, 3, "trailing characters after the value"),
            (b"\"\xff\"", 1, "ill-formed UTF-8"),
            (br#"[tru]"#, 1, "not a JSON value"),
            (br#""\q""#, 2, "an unknown escape"),
        ];
        for (bytes, offset, problem) in cases {
            assert_eq!(parse(bytes), Err(Syntax { offset, problem }), "{}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn escapes_and_surrogate_pairs_are_decoded() {
        assert_eq!(parse(br#""\u00e9\ud83d\ude00\/\n""#), Ok(Json::Str("\u{e9}\u{1f600}/\n".to_owned())));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}{}", "[".repeat(MAX_LABEL_DEPTH), "]".repeat(MAX_LABEL_DEPTH));
        assert!(parse(deep.as_bytes()).is_ok());
        let deeper = format!("{}{}", "[".repeat(MAX_LABEL_DEPTH + 1), "]".repeat(MAX_LABEL_DEPTH + 1));
        assert_eq!(parse(deeper.as_bytes()).unwrap_err().problem, "nested deeper than 127 levels");
    }
}
