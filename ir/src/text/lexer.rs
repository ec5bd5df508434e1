//! Tokens of the `.warp` text format.
//!
//! The lexer works on demand (one token per call) so that a huge source never
//! turns into a huge token vector, and it is `Clone` so the parser can look
//! ahead as far as it needs by lexing from a copy. Comments are trivia the
//! parser never sees; a lexer made with [`Lexer::recording`] keeps their
//! spans for the formatter.

use super::MAX_TOKEN_LEN;
use crate::span::{Diagnostic, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokKind {
    /// A keyword or mnemonic: `if`, `add`, `cmp.lt.s`, `true`.
    Word,
    /// `%name`: an SSA value or a module parameter.
    Value,
    /// `$name`: a variable.
    Var,
    /// `@name`: a function, kernel, buffer, shared or private array.
    Global,
    /// A decimal integer, maybe negative: `42`, `-7`.
    Int,
    /// A hex bit pattern: `0xff`.
    Hex,
    /// `2.5`, `-1e-3`, `inf`, `-inf`, `nan`, `-nan`.
    Float,
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Colon,
    Equals,
    Arrow,
    Eof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn span(self) -> Span {
        Span::new(self.start, self.end)
    }
}

/// Letters, digits, `_` and `.`: the characters of names and mnemonics.
pub(crate) fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

#[derive(Clone)]
pub(crate) struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    /// Spans of the comments skipped so far (`//` up to the end of the
    /// line, without the newline), when recording.
    comments: Option<Vec<Span>>,
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str) -> Lexer<'s> {
        Lexer {
            src,
            pos: 0,
            comments: None,
        }
    }

    /// A lexer that keeps the spans of the comments it skips.
    pub fn recording(src: &'s str) -> Lexer<'s> {
        Lexer {
            src,
            pos: 0,
            comments: Some(Vec::new()),
        }
    }

    /// A lexer that starts at byte `pos` (a token boundary).
    pub fn starting_at(src: &'s str, pos: usize) -> Lexer<'s> {
        Lexer {
            src,
            pos: pos.min(src.len()),
            comments: None,
        }
    }

    /// The comments recorded so far (none unless made with `recording`).
    pub fn take_comments(&mut self) -> Vec<Span> {
        self.comments.take().unwrap_or_default()
    }

    pub fn next_token(&mut self) -> Result<Token, Diagnostic> {
        self.skip_trivia()?;
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let Some(&first) = bytes.get(start) else {
            return Ok(Token {
                kind: TokKind::Eof,
                start,
                end: start,
            });
        };
        let punct = match first {
            b'{' => Some(TokKind::LBrace),
            b'}' => Some(TokKind::RBrace),
            b'(' => Some(TokKind::LParen),
            b')' => Some(TokKind::RParen),
            b'[' => Some(TokKind::LBracket),
            b']' => Some(TokKind::RBracket),
            b',' => Some(TokKind::Comma),
            b':' => Some(TokKind::Colon),
            b'=' => Some(TokKind::Equals),
            _ => None,
        };
        if let Some(kind) = punct {
            return Ok(self.finish(kind, start + 1));
        }
        match first {
            b'-' => self.minus(start),
            b'0'..=b'9' => self.number(start, start),
            b'%' | b'$' | b'@' => self.sigil_name(start, first),
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let end = self.name_end(start);
                self.check_len(start, end, "name")?;
                let kind = match &self.src[start..end] {
                    "inf" | "nan" => TokKind::Float,
                    _ => TokKind::Word,
                };
                Ok(self.finish(kind, end))
            }
            _ => Err(self.unexpected_char(start)),
        }
    }

    fn finish(&mut self, kind: TokKind, end: usize) -> Token {
        let start = self.pos;
        self.pos = end;
        Token { kind, start, end }
    }

    fn skip_trivia(&mut self) -> Result<(), Diagnostic> {
        let bytes = self.src.as_bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b'\r') if is_lone_cr(bytes, self.pos) => {
                    return Err(lone_carriage_return(self.pos));
                }
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                // A byte order mark, which some editors put first.
                Some(0xef) if self.pos == 0 && self.src.starts_with('\u{feff}') => {
                    self.pos = '\u{feff}'.len_utf8();
                }
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'/') => {
                    let end = match self.src[self.pos..].find('\n') {
                        Some(i) => self.pos + i,
                        None => self.src.len(),
                    };
                    // A comment would swallow lines ended by a lone CR.
                    if let Some(cr) = (self.pos..end).find(|&at| is_lone_cr(bytes, at)) {
                        return Err(lone_carriage_return(cr));
                    }
                    if let Some(comments) = &mut self.comments {
                        comments.push(Span::new(self.pos, end));
                    }
                    self.pos = end;
                }
                _ => return Ok(()),
            }
        }
    }

    fn name_end(&self, from: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut end = from;
        while end < bytes.len() && is_name_char(bytes[end]) {
            end += 1;
        }
        end
    }

    fn check_len(&self, start: usize, end: usize, what: &str) -> Result<(), Diagnostic> {
        let len = end - start;
        if len > MAX_TOKEN_LEN {
            return Err(Diagnostic::new(
                Span::new(start, end),
                format!("this {what} is {len} characters long; the limit is {MAX_TOKEN_LEN}"),
            ));
        }
        Ok(())
    }

    fn sigil_name(&mut self, start: usize, sigil: u8) -> Result<Token, Diagnostic> {
        let end = self.name_end(start + 1);
        if end == start + 1 {
            let found = describe_char_at(self.src, start + 1);
            return Err(Diagnostic::new(
                Span::new(start, start + 1),
                format!("expected a name after `{}`, found {found}", sigil as char),
            ));
        }
        self.check_len(start, end, "name")?;
        let kind = match sigil {
            b'%' => TokKind::Value,
            b'$' => TokKind::Var,
            _ => TokKind::Global,
        };
        Ok(self.finish(kind, end))
    }

    fn minus(&mut self, start: usize) -> Result<Token, Diagnostic> {
        let bytes = self.src.as_bytes();
        match bytes.get(start + 1) {
            Some(b'>') => Ok(self.finish(TokKind::Arrow, start + 2)),
            Some(b'0'..=b'9') => self.number(start, start + 1),
            _ => {
                let end = self.name_end(start + 1);
                if matches!(&self.src[start + 1..end], "inf" | "nan") {
                    return Ok(self.finish(TokKind::Float, end));
                }
                let found = describe_char_at(self.src, start + 1);
                Err(Diagnostic::new(
                    Span::new(start, start + 1),
                    format!("expected a number, `inf`, `nan` or `>` after `-`, found {found}"),
                ))
            }
        }
    }

    /// A number starting at `start` whose digits start at `digits` (after a
    /// minus sign, if any).
    fn number(&mut self, start: usize, digits: usize) -> Result<Token, Diagnostic> {
        let bytes = self.src.as_bytes();
        let digit_run = |mut i: usize| {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let is_hex = bytes[digits] == b'0' && matches!(bytes.get(digits + 1), Some(b'x' | b'X'));
        let (kind, end) = if is_hex {
            let mut end = digits + 2;
            while end < bytes.len() && bytes[end].is_ascii_hexdigit() {
                end += 1;
            }
            if end == digits + 2 {
                let found = describe_char_at(self.src, end);
                return Err(Diagnostic::new(
                    Span::new(start, end),
                    format!("expected hex digits after `0x`, found {found}"),
                ));
            }
            (TokKind::Hex, end)
        } else {
            let mut end = digit_run(digits);
            let mut kind = TokKind::Int;
            if bytes.get(end) == Some(&b'.') {
                let frac = digit_run(end + 1);
                if frac == end + 1 {
                    let found = describe_char_at(self.src, end + 1);
                    return Err(Diagnostic::new(
                        Span::new(start, end + 1),
                        format!("expected a digit after the decimal point, found {found}"),
                    ));
                }
                end = frac;
                kind = TokKind::Float;
            }
            if matches!(bytes.get(end), Some(b'e' | b'E')) {
                let mut exp = end + 1;
                if matches!(bytes.get(exp), Some(b'+' | b'-')) {
                    exp += 1;
                }
                let exp_end = digit_run(exp);
                if exp_end == exp {
                    let found = describe_char_at(self.src, exp);
                    return Err(Diagnostic::new(
                        Span::new(start, exp),
                        format!("expected the exponent's digits, found {found}"),
                    ));
                }
                end = exp_end;
                kind = TokKind::Float;
            }
            (kind, end)
        };
        if end < bytes.len() && is_name_char(bytes[end]) {
            let bad_end = self.name_end(end);
            return Err(Diagnostic::new(
                Span::new(start, bad_end),
                format!(
                    "invalid number `{}`: expected a separator after `{}`, found {}",
                    shorten(&self.src[start..bad_end]),
                    shorten(&self.src[start..end]),
                    describe_char_at(self.src, end)
                ),
            ));
        }
        self.check_len(start, end, "literal")?;
        if kind == TokKind::Hex && digits != start {
            return Err(Diagnostic::new(
                Span::new(start, end),
                "a hex literal is a bit pattern and cannot be negative",
            ));
        }
        Ok(self.finish(kind, end))
    }

    fn unexpected_char(&self, at: usize) -> Diagnostic {
        let c = self.src[at..].chars().next().expect("not at the end");
        Diagnostic::new(
            Span::new(at, at + c.len_utf8()),
            format!("unexpected character {}", describe_char(c)),
        )
    }
}

fn describe_char(c: char) -> String {
    if c.is_control() || c.is_whitespace() || c == '`' {
        format!("U+{:04X}", c as u32)
    } else if c.is_ascii() {
        format!("`{c}`")
    } else {
        // Beyond ASCII a character may be invisible (a byte order mark, a
        // zero-width space): its code point too.
        format!("`{c}` (U+{:04X})", c as u32)
    }
}

/// The character at byte `at`, for "found ..." in messages.
fn describe_char_at(src: &str, at: usize) -> String {
    match src.get(at..).and_then(|s| s.chars().next()) {
        None => "end of file".into(),
        Some(' ' | '\t') => "a space".into(),
        Some('\n' | '\r') => "end of line".into(),
        Some(c) => describe_char(c),
    }
}

/// Source text quoted in a message, cut to a readable length.
pub(crate) fn shorten(text: &str) -> String {
    const SHOWN: usize = 40;
    if text.chars().count() <= SHOWN {
        text.to_string()
    } else {
        let head: String = text.chars().take(SHOWN).collect();
        format!("{head}...")
    }
}

/// Whether `bytes[at]` is a carriage return without a line feed after it.
fn is_lone_cr(bytes: &[u8], at: usize) -> bool {
    bytes[at] == b'\r' && bytes.get(at + 1) != Some(&b'\n')
}

/// The error for a carriage return not followed by a line feed: lines end
/// in `\n` or `\r\n`, and a lone CR (old Mac line endings) would make a
/// comment run on to the end of the file.
fn lone_carriage_return(at: usize) -> Diagnostic {
    Diagnostic::new(
        Span::new(at, at + 1),
        "a carriage return without a line feed: lines must end in \\n or \\r\\n \
         (convert the file's line endings)",
    )
}
