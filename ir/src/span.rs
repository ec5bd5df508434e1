//! Source spans and diagnostics rendered with file:line:col and a caret.

use std::fmt;

/// A byte range in the source text. Spans never affect equality of IR: two
/// programs that differ only in where they came from are the same program.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

// Consistent with `eq`: every span hashes alike.
impl std::hash::Hash for Span {
    fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
}

impl Span {
    pub const NONE: Span = Span { start: 0, end: 0 };

    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start.min(u32::MAX as usize) as u32,
            end: end.min(u32::MAX as usize) as u32,
        }
    }

    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn is_none(self) -> bool {
        self.start == 0 && self.end == 0
    }
}

/// One error found in program text (by the parser or the verifier).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    /// Extra lines shown after the caret (e.g. "expected one of ...").
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span,
            notes: Vec::new(),
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// 1-based line and column (in characters) of the span's start.
    pub fn line_col(&self, source: &str) -> (usize, usize) {
        line_col(source, self.span.start as usize)
    }

    /// Renders as
    /// ```text
    /// error: message
    ///  --> file:line:col
    ///   |
    /// 3 |   %x = add %y, %z
    ///   |            ^^
    ///   = note
    /// ```
    pub fn render(&self, file: &str, source: &str) -> String {
        let start = (self.span.start as usize).min(source.len());
        let (line, col) = line_col(source, start);
        let line_start = source[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line_end = source[start..]
            .find('\n')
            .map(|i| start + i)
            .unwrap_or(source.len());
        // Without the CR of a CRLF line end, which has no picture to show
        // (a lone CR at the end of the file is shown: it may be the error).
        let text = &source[line_start..line_end];
        let text = match text.strip_suffix('\r') {
            Some(stripped) if line_end < source.len() => stripped,
            _ => text,
        };
        let end = (self.span.end as usize).clamp(start, line_end);
        let width = source[start..end].chars().count().max(1);
        let gutter = line.to_string().len();
        let pad = " ".repeat(gutter);
        // At most SHOWN characters of the line, from a little before the
        // column when it lies far to the right (a huge one-line file).
        const SHOWN: usize = 200;
        let skip = if col > SHOWN - 40 { col - 1 - 40 } else { 0 };
        let chars: Vec<char> = text.chars().skip(skip).take(SHOWN).collect();
        let before = (col - 1 - skip).min(chars.len());
        let under = &chars[before..(before + width).min(chars.len())];
        let mut shown: String = chars.iter().map(|&c| shown_char(c)).collect();
        let mut caret_at = shown_width(&chars[..before]);
        if skip > 0 {
            shown.insert_str(0, "...");
            caret_at += 3;
        }
        let mut out = format!(
            "error: {}\n{pad}--> {file}:{line}:{col}\n{pad} |\n{line} | {shown}\n{pad} | {}{}\n",
            self.message,
            " ".repeat(caret_at),
            "^".repeat(shown_width(under).max(1)),
        );
        for n in &self.notes {
            out.push_str(&format!("{pad} = {n}\n"));
        }
        out
    }

    /// The one-line form `file:line:col: message`.
    pub fn one_line(&self, file: &str, source: &str) -> String {
        let (line, col) = self.line_col(source);
        format!("{file}:{line}:{col}: {}", self.message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Spaces a tab becomes in a snippet, so the caret line below it, made of
/// spaces, lines up on any terminal.
const TAB: &str = "    ";

/// How a snippet shows `c`: a tab as [`TAB`], other C0 control characters
/// as their Unicode pictures (U+2400..), and DEL, C1 controls and the
/// bidirectional overrides and isolates as U+FFFD, so none can move the
/// cursor or reorder the line on a terminal.
fn shown_char(c: char) -> String {
    match c {
        '\t' => TAB.to_string(),
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32).map_or(String::new(), String::from),
        '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            "\u{fffd}".to_string()
        }
        c => c.to_string(),
    }
}

/// Columns `chars` take in a snippet ([`shown_char`]).
fn shown_width(chars: &[char]) -> usize {
    chars
        .iter()
        .map(|&c| if c == '\t' { TAB.len() } else { 1 })
        .sum()
}

/// 1-based line and character column of byte offset `pos`.
pub fn line_col(source: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(source.len());
    while !source.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &source[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = source[line_start..pos].chars().count() + 1;
    (line, col)
}

/// All diagnostics of one check, rendered together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn render(&self, file: &str, source: &str) -> String {
        let mut out = String::new();
        for d in &self.0 {
            out.push_str(&d.render(file, source));
            out.push('\n');
        }
        let n = self.0.len();
        out.push_str(&format!(
            "{n} error{} in {file}\n",
            if n == 1 { "" } else { "s" }
        ));
        out
    }
}

impl std::error::Error for Diagnostics {}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", d.message)?;
        }
        Ok(())
    }
}
