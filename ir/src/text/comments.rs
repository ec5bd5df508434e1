//! Comments and blank lines: trivia of the text that the IR does not keep.
//!
//! [`Comments`] is a side table for one source text and the module parsed
//! from it. It is keyed by the span starts the IR keeps, so the printer can
//! put each comment back on the line it belongs to:
//!
//! - a comment on its own line leads the next line the printer writes for
//!   that source: a module item, a statement, or the `}` that closes a
//!   block (with the `else {` after it), so comments at the end of a block
//!   stay there, inside it;
//! - a comment after code on the same line trails that line; an own-line
//!   comment right below it, starting in the same column, continues it;
//! - a comment inside an item or statement that spans several lines leads
//!   it, as the printer writes it on one line;
//! - comments before the first item that end with a blank line are the
//!   file's header and stay on top, even if that item moves; comments after
//!   the last token stay at the end.
//!
//! Each line also remembers whether a blank line came before it.

use super::lexer::{Lexer, TokKind};
use super::spelling::Spellings;
use crate::module::{Block, Function, Module, Stmt};
use crate::span::Span;
use std::collections::HashMap;

/// The comments and blank lines of a source text, placed relative to the
/// items and statements of the module parsed from it
/// ([`parse_with_comments`](super::parse_with_comments)), and how the text
/// spelled each literal. The IR itself carries no comments and keeps only
/// the value of a literal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments {
    /// Comments that start the file, before a blank line.
    pub(crate) header: Vec<CommentLine>,
    pub(crate) lines: HashMap<Anchor, LineTrivia>,
    /// Comments after the last token.
    pub(crate) end: Vec<CommentLine>,
    pub(crate) literals: Spellings,
    count: usize,
}

impl Comments {
    /// How many comments the source had.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the source had no comments (it may still have blank lines).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// What belongs to the line `part` of the item or statement starting at
    /// byte `start`.
    pub(crate) fn line(&self, start: u32, part: Part) -> &LineTrivia {
        self.lines
            .get(&Anchor { start, part })
            .unwrap_or(&NO_TRIVIA)
    }
}

static NO_TRIVIA: LineTrivia = LineTrivia {
    leading: Vec::new(),
    trailing: None,
    blank_before: false,
};

/// Which printed line of an item or statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Part {
    /// The item or statement, or the line that opens its block.
    Head,
    /// The `}` that ends the then block of an `if`, with the `else {` or
    /// `else if ... {` that follows it.
    Else,
    /// The last `}`: of a loop, an ordered section, a function, or the
    /// else block of an `if`.
    Close,
}

/// A printed line: `part` of the item or statement whose span starts at
/// byte `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Anchor {
    pub start: u32,
    pub part: Part,
}

/// A comment on a line of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommentLine {
    /// From `//` to the end of the line, trailing spaces removed.
    pub text: String,
    pub blank_before: bool,
}

/// A comment after code, and the comment lines that continue it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trailing {
    pub text: String,
    pub continuation: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LineTrivia {
    /// Comment lines above the line.
    pub leading: Vec<CommentLine>,
    pub trailing: Option<Trailing>,
    /// A blank line between the line and what precedes it (its leading
    /// comments, if any).
    pub blank_before: bool,
}

impl LineTrivia {
    /// Adds a comment from inside the line's source range (a line the
    /// printer joins) above the line, after the line's blank line.
    fn push_inner(&mut self, mut comment: CommentLine) {
        if std::mem::take(&mut self.blank_before) {
            comment.blank_before = true;
        }
        self.leading.push(comment);
    }
}

/// The source range of one printed line, from its first token to the end
/// of its last.
struct Slot {
    start: u32,
    end: u32,
    anchor: Anchor,
}

/// Where the trailing comment seen last was, so the next comment line can
/// continue it.
struct LastTrailing {
    anchor: Anchor,
    column: usize,
    /// End of the last line of the comment (its newline).
    line_end: usize,
}

/// Collects the comments of `src`, which `module` was parsed from without
/// error.
pub(crate) fn collect(src: &str, module: &Module) -> Comments {
    let (comment_spans, braces) = scan(src);
    let mut outline = Outline {
        src,
        braces,
        slots: Vec::new(),
    };
    outline.module(module);
    let mut slots = outline.slots;
    slots.sort_by_key(|s| s.start);

    let lines = SourceLines::new(src);
    let mut comments = Comments {
        count: comment_spans.len(),
        ..Comments::default()
    };
    for slot in &slots {
        if lines.after_blank_line(slot.start as usize) {
            comments.entry(slot.anchor).blank_before = true;
        }
    }
    let mut last_trailing: Option<LastTrailing> = None;
    for span in comment_spans {
        let (start, end) = (span.start as usize, span.end as usize);
        let text = src[start..end].trim_end().to_string();
        let line_start = lines.line_start(start);
        let own_line = lines.first_on_line(start);
        let before = slots.partition_point(|s| (s.start as usize) < start);
        let prev = before.checked_sub(1).map(|i| &slots[i]);
        if !own_line {
            last_trailing = None;
            let Some(slot) = prev else {
                comments.end.push(CommentLine {
                    text,
                    blank_before: false,
                });
                continue;
            };
            let entry = comments.entry(slot.anchor);
            if start >= slot.end as usize && entry.trailing.is_none() {
                entry.trailing = Some(Trailing {
                    text,
                    continuation: Vec::new(),
                });
                last_trailing = Some(LastTrailing {
                    anchor: slot.anchor,
                    column: start - line_start,
                    line_end: end,
                });
            } else {
                // Inside a line the printer joins: above it.
                entry.push_inner(CommentLine {
                    text,
                    blank_before: false,
                });
            }
            continue;
        }
        if let Some(last) = &mut last_trailing {
            if line_start == last.line_end + 1 && start - line_start == last.column {
                last.line_end = end;
                let entry = comments.entry(last.anchor);
                if let Some(trailing) = &mut entry.trailing {
                    trailing.continuation.push(text);
                }
                continue;
            }
        }
        last_trailing = None;
        let line = CommentLine {
            text,
            blank_before: lines.after_blank_line(start),
        };
        match (prev, slots.get(before)) {
            (Some(slot), _) if start < slot.end as usize => {
                comments.entry(slot.anchor).push_inner(line)
            }
            (_, Some(next)) => comments.entry(next.anchor).leading.push(line),
            (_, None) => comments.end.push(line),
        }
    }
    if let Some(first) = slots.first() {
        comments.split_header(first.anchor);
    }
    comments.lines.retain(|_, t| *t != LineTrivia::default());
    comments
}

impl Comments {
    fn entry(&mut self, anchor: Anchor) -> &mut LineTrivia {
        self.lines.entry(anchor).or_default()
    }

    /// Moves the comments that lead the first item, up to the last blank
    /// line above it, into the header.
    fn split_header(&mut self, first: Anchor) {
        let Some(trivia) = self.lines.get_mut(&first) else {
            return;
        };
        let header_len = if trivia.blank_before {
            trivia.leading.len()
        } else {
            trivia
                .leading
                .iter()
                .rposition(|c| c.blank_before)
                .unwrap_or(0)
        };
        self.header = trivia.leading.drain(..header_len).collect();
    }
}

/// The comment spans of `src` and its matching braces (`{` position, `}`
/// position), sorted by the `{`.
fn scan(src: &str) -> (Vec<Span>, Vec<(u32, u32)>) {
    let mut lexer = Lexer::recording(src);
    let mut open = Vec::new();
    let mut braces = Vec::new();
    while let Ok(token) = lexer.next_token() {
        match token.kind {
            TokKind::Eof => break,
            TokKind::LBrace => open.push(token.start as u32),
            TokKind::RBrace => {
                if let Some(start) = open.pop() {
                    braces.push((start, token.start as u32));
                }
            }
            _ => {}
        }
    }
    braces.sort_unstable();
    (lexer.take_comments(), braces)
}

/// The printed lines of a module, with their source ranges.
struct Outline<'s> {
    src: &'s str,
    braces: Vec<(u32, u32)>,
    slots: Vec<Slot>,
}

impl Outline<'_> {
    fn add(&mut self, start: u32, end: u32, part: Part, key: u32) {
        self.slots.push(Slot {
            start,
            end,
            anchor: Anchor { start: key, part },
        });
    }

    fn flat(&mut self, span: Span) {
        self.add(span.start, span.end, Part::Head, span.start);
    }

    fn module(&mut self, module: &Module) {
        for p in &module.params {
            self.flat(p.span);
        }
        for b in &module.buffers {
            self.flat(b.span);
        }
        for s in &module.shared {
            self.flat(s.span);
        }
        for f in &module.functions {
            self.function(f);
        }
    }

    /// The first block `{ ... }` at or after `from`.
    fn block_at(&self, from: u32) -> Option<(u32, u32)> {
        let i = self.braces.partition_point(|b| b.0 < from);
        self.braces.get(i).copied()
    }

    fn function(&mut self, f: &Function) {
        let start = f.span.start;
        let Some((open, close)) = self.block_at(start) else {
            return self.flat(f.span);
        };
        self.add(start, open + 1, Part::Head, start);
        for v in &f.vars {
            self.flat(v.span);
        }
        for p in &f.privates {
            self.flat(p.span);
        }
        self.block(&f.body);
        self.add(close, close + 1, Part::Close, start);
    }

    fn block(&mut self, block: &Block) {
        for s in &block.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let span = stmt.span();
        let start = span.start;
        let body = match stmt {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => return self.if_stmt(start, then_body, else_body),
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => body,
            _ => return self.flat(span),
        };
        let Some((open, close)) = self.block_at(start) else {
            return self.flat(span);
        };
        self.add(start, open + 1, Part::Head, start);
        self.block(body);
        self.add(close, close + 1, Part::Close, start);
    }

    fn if_stmt(&mut self, start: u32, then_body: &Block, else_body: &Block) {
        let Some((open, then_close)) = self.block_at(start) else {
            return self.add(start, start + 1, Part::Head, start);
        };
        self.add(start, open + 1, Part::Head, start);
        self.block(then_body);
        let mut lexer = Lexer::starting_at(self.src, then_close as usize + 1);
        let after = lexer.next_token();
        let is_else = matches!(after, Ok(t) if t.kind == TokKind::Word
            && &self.src[t.start..t.end] == "else");
        if !is_else {
            return self.add(then_close, then_close + 1, Part::Else, start);
        }
        let else_end = after.map_or(then_close + 1, |t| t.end as u32);
        match lexer.next_token() {
            Ok(t) if t.kind == TokKind::LBrace => {
                let else_open = t.start as u32;
                self.add(then_close, else_open + 1, Part::Else, start);
                self.block(else_body);
                if let Some((_, else_close)) = self.block_at(else_open) {
                    self.add(else_close, else_close + 1, Part::Close, start);
                }
            }
            // `else if`: the nested `if` starts right here.
            _ => {
                self.add(then_close, else_end, Part::Else, start);
                self.block(else_body);
            }
        }
    }
}

/// Line lookups in a source text, each in logarithmic time or in the
/// length of a run of spaces (a file may be one huge line).
struct SourceLines<'s> {
    src: &'s str,
    /// Byte positions of the newlines.
    newlines: Vec<usize>,
}

impl SourceLines<'_> {
    fn new(src: &str) -> SourceLines<'_> {
        let newlines = src
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i)
            .collect();
        SourceLines { src, newlines }
    }

    /// The byte where the line holding `pos` starts.
    fn line_start(&self, pos: usize) -> usize {
        let i = self.newlines.partition_point(|&n| n < pos);
        i.checked_sub(1).map_or(0, |i| self.newlines[i] + 1)
    }

    /// True when only spaces come before `pos` on its line.
    fn first_on_line(&self, pos: usize) -> bool {
        let bytes = self.src.as_bytes();
        let mut at = pos;
        while at > 0 {
            // A byte order mark opening the file is not code.
            if at == '\u{feff}'.len_utf8() && self.src.starts_with('\u{feff}') {
                return true;
            }
            match bytes[at - 1] {
                b'\n' => return true,
                b' ' | b'\t' | b'\r' => at -= 1,
                _ => return false,
            }
        }
        true
    }

    /// True when `pos` is the first non-blank of its line and the line
    /// above is blank.
    fn after_blank_line(&self, pos: usize) -> bool {
        if !self.first_on_line(pos) {
            return false;
        }
        let start = self.line_start(pos);
        start > 0 && self.first_on_line(start - 1)
    }
}
