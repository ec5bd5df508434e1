//! Printed lines with their comments and blank lines, rendered to text.
//!
//! Blank lines are asked for, not written: at most one appears, never at
//! the start of the text or of a block, nor before a `}`. Trailing comments
//! on consecutive lines are aligned in one column.

use super::comments::{CommentLine, LineTrivia, Trailing};

/// Two spaces per block level.
const INDENT: &str = "  ";

enum Line<'c> {
    Blank,
    Comment {
        indent: usize,
        text: &'c str,
    },
    Code {
        indent: usize,
        text: String,
        trailing: Option<&'c Trailing>,
        /// Ends with the `{` of a block that stays open.
        opens: bool,
    },
}

#[derive(Default)]
pub(crate) struct Layout<'c> {
    lines: Vec<Line<'c>>,
    blank_pending: bool,
    /// The code line being written: its indent and text.
    current: Option<(usize, String)>,
}

impl<'c> Layout<'c> {
    /// Asks for a blank line before the next line.
    pub fn blank(&mut self) {
        self.blank_pending = true;
    }

    fn push(&mut self, line: Line<'c>) {
        let after_open = matches!(
            self.lines.last(),
            None | Some(Line::Code { opens: true, .. })
        );
        if std::mem::take(&mut self.blank_pending) && !after_open {
            self.lines.push(Line::Blank);
        }
        self.lines.push(line);
    }

    /// Comment lines at `indent`, with the blank lines they had.
    pub fn comments(&mut self, comments: &'c [CommentLine], indent: usize) {
        for c in comments {
            if c.blank_before {
                self.blank();
            }
            self.push(Line::Comment {
                indent,
                text: &c.text,
            });
        }
    }

    /// Starts a code line: first the comments above it and its blank line.
    pub fn begin(&mut self, indent: usize, trivia: &'c LineTrivia) {
        self.comments(&trivia.leading, indent);
        if trivia.blank_before {
            self.blank();
        }
        self.current = Some((indent, String::new()));
    }

    /// Starts a line that closes a block (no blank line before it).
    pub fn begin_close(&mut self, indent: usize) {
        self.blank_pending = false;
        self.current = Some((indent, String::new()));
    }

    /// Appends to the line being written.
    pub fn text(&mut self, text: &str) {
        if let Some((_, line)) = &mut self.current {
            line.push_str(text);
        }
    }

    /// Ends the line being written.
    pub fn end(&mut self, trailing: Option<&'c Trailing>, opens: bool) {
        if let Some((indent, text)) = self.current.take() {
            self.push(Line::Code {
                indent,
                text,
                trailing,
                opens,
            });
        }
    }

    /// A whole line.
    pub fn line(&mut self, indent: usize, trivia: &'c LineTrivia, text: &str) {
        self.begin(indent, trivia);
        self.text(text);
        self.end(trivia.trailing.as_ref(), false);
    }

    pub fn finish(mut self) -> String {
        self.end(None, false);
        let mut out = String::new();
        let mut column = 0;
        for (i, line) in self.lines.iter().enumerate() {
            match line {
                Line::Blank => out.push('\n'),
                Line::Comment { indent, text } => {
                    push_indent(&mut out, *indent);
                    out.push_str(text);
                    out.push('\n');
                }
                Line::Code {
                    indent,
                    text,
                    trailing,
                    ..
                } => {
                    push_indent(&mut out, *indent);
                    out.push_str(text);
                    if let Some(trailing) = trailing {
                        let starts_run = i == 0 || !has_trailing(&self.lines[i - 1]);
                        if starts_run {
                            column = self.lines[i..]
                                .iter()
                                .take_while(|l| has_trailing(l))
                                .map(code_width)
                                .max()
                                .unwrap_or(0)
                                + 1;
                        }
                        let width = code_width(line);
                        out.extend(std::iter::repeat_n(' ', column.saturating_sub(width)));
                        out.push_str(&trailing.text);
                        for more in &trailing.continuation {
                            out.push('\n');
                            out.extend(std::iter::repeat_n(' ', column));
                            out.push_str(more);
                        }
                    }
                    out.push('\n');
                }
            }
        }
        out
    }
}

fn push_indent(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str(INDENT);
    }
}

fn has_trailing(line: &Line<'_>) -> bool {
    matches!(
        line,
        Line::Code {
            trailing: Some(_),
            ..
        }
    )
}

/// Characters of indentation and code (code is ASCII).
fn code_width(line: &Line<'_>) -> usize {
    match line {
        Line::Code { indent, text, .. } => indent * INDENT.len() + text.len(),
        _ => 0,
    }
}
