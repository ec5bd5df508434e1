//! Parser from tokens to the syntax tree: recursive descent, except that
//! nested blocks live on an explicit stack (see `body`), so nesting depth
//! costs no call stack.
//!
//! The grammar is free-form, so an instruction's operand list ends at the
//! first token after an operand that is not a comma, and the list is absent
//! when the token after the mnemonic cannot be an operand. Whether a token
//! can be an operand sometimes needs more than one token of lookahead: a
//! value or variable that starts a run `%a, $b, ... =` is the start of the
//! next instruction, not an operand (`starts_instruction`).

use super::lexer::{shorten, Lexer, TokKind, Token};
use super::mnemonics::{suggest, KEYWORDS};
use super::syntax::*;
use super::MAX_NESTING;
use crate::ops::{NumFormat, Op, ShuffleForm};
use crate::span::{line_col, Diagnostic, Span};
use crate::types::Type;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

type PResult<T> = Result<T, Diagnostic>;

const TYPE_LIST: &str = "bool, i8, i16, i32, i64, f16, f32, f64";
const FORMAT_LIST: &str = "s8, s16, s32, s64, u8, u16, u32, u64, f16, f32, f64";

pub(crate) fn parse_syntax(src: &str) -> PResult<SynModule<'_>> {
    let mut parser = Parser::new(src)?;
    parser.module()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Label {
    Width,
    Mask,
    Guard,
}

impl Label {
    fn from_word(w: &str) -> Option<Label> {
        match w {
            "width" => Some(Label::Width),
            "mask" => Some(Label::Mask),
            "guard" => Some(Label::Guard),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Label::Width => "width",
            Label::Mask => "mask",
            Label::Guard => "guard",
        }
    }
}

/// A block being parsed and the construct it belongs to.
struct OpenBlock<'s> {
    construct: Construct<'s>,
    stmts: Vec<SynStmt<'s>>,
    /// The `{` that opened it (for "never closed" errors).
    brace: Token,
    /// Nesting level (the function body is 1; an `else if` adds one).
    level: usize,
}

/// `if cond` of an `if` being parsed.
struct IfHead<'s> {
    start: usize,
    cond: SynOperand<'s>,
}

/// An `if` and its then block, whose else block is an `else if`.
type ElseIfParent<'s> = (IfHead<'s>, SynBlock<'s>);

enum Construct<'s> {
    Body,
    Loop {
        start: usize,
    },
    Ordered {
        start: usize,
        key: SynOperand<'s>,
    },
    Then {
        head: IfHead<'s>,
        chain: Vec<ElseIfParent<'s>>,
    },
    Else {
        head: IfHead<'s>,
        then_body: SynBlock<'s>,
        chain: Vec<ElseIfParent<'s>>,
    },
}

struct Parser<'s> {
    src: &'s str,
    /// Positioned just after `tok`.
    lexer: Lexer<'s>,
    tok: Token,
    /// End of the last consumed token.
    prev_end: usize,
    /// Where the last run `%a, $b, ...` that `starts_instruction` scanned
    /// and found not followed by `=` ends: any token before it belongs to
    /// that run and gets the same answer (keeps long lists linear).
    plain_run_end: Cell<usize>,
    /// Mnemonics already looked up (only known ones, so it stays small).
    known_ops: RefCell<HashMap<&'s str, Op>>,
}

impl<'s> Parser<'s> {
    fn new(src: &'s str) -> PResult<Parser<'s>> {
        let mut lexer = Lexer::new(src);
        let tok = lexer.next_token()?;
        Ok(Parser {
            src,
            lexer,
            tok,
            prev_end: 0,
            plain_run_end: Cell::new(0),
            known_ops: RefCell::new(HashMap::new()),
        })
    }

    fn text(&self, t: Token) -> &'s str {
        &self.src[t.start..t.end]
    }

    fn bump(&mut self) -> PResult<Token> {
        let t = self.tok;
        self.tok = self.lexer.next_token()?;
        self.prev_end = t.end;
        Ok(t)
    }

    fn at(&self, kind: TokKind) -> bool {
        self.tok.kind == kind
    }

    fn at_word(&self, w: &str) -> bool {
        self.tok.kind == TokKind::Word && self.text(self.tok) == w
    }

    fn describe(&self, t: Token) -> String {
        match t.kind {
            TokKind::Eof => "end of file".into(),
            _ => format!("`{}`", shorten(self.text(t))),
        }
    }

    /// "expected {what}, found {the current token}".
    fn expected(&self, what: &str) -> Diagnostic {
        Diagnostic::new(
            self.tok.span(),
            format!("expected {what}, found {}", self.describe(self.tok)),
        )
    }

    fn expect(&mut self, kind: TokKind, what: &str) -> PResult<Token> {
        if self.at(kind) {
            self.bump()
        } else {
            Err(self.expected(what))
        }
    }

    fn name(&mut self, kind: TokKind, what: &str) -> PResult<Name<'s>> {
        let t = self.expect(kind, what)?;
        Ok(Name {
            text: &self.src[t.start + 1..t.end],
            span: t.span(),
        })
    }

    fn location(&self, pos: usize) -> String {
        let (line, col) = line_col(self.src, pos);
        format!("{line}:{col}")
    }

    // ---- module items ----

    fn module(&mut self) -> PResult<SynModule<'s>> {
        let mut items = Vec::new();
        loop {
            if self.at(TokKind::Eof) {
                return Ok(SynModule { items });
            }
            let start = self.tok.start;
            let item = match (self.tok.kind, self.text(self.tok)) {
                (TokKind::Word, "param") => {
                    self.bump()?;
                    let name = self.name(TokKind::Value, "a parameter name like `%n`")?;
                    self.expect(TokKind::Colon, "`:` and the parameter's type")?;
                    let ty = self.ty()?;
                    Item::Param {
                        name,
                        ty,
                        span: Span::new(start, self.prev_end),
                    }
                }
                (TokKind::Word, "buffer") => {
                    self.bump()?;
                    let name = self.name(TokKind::Global, "a buffer name like `@data`")?;
                    self.expect(TokKind::LBracket, "`[` and the buffer's binding number")?;
                    let binding = self.u32_literal("a binding number")?;
                    self.expect(TokKind::RBracket, "`]`")?;
                    self.expect(TokKind::Colon, "`:` and the buffer's element format")?;
                    let elem = self.format()?;
                    Item::Buffer {
                        name,
                        binding,
                        elem,
                        span: Span::new(start, self.prev_end),
                    }
                }
                (TokKind::Word, "shared") => {
                    self.bump()?;
                    let name = self.name(TokKind::Global, "a shared array name like `@tile`")?;
                    let size = self.byte_size()?;
                    Item::Shared {
                        name,
                        size,
                        span: Span::new(start, self.prev_end),
                    }
                }
                (TokKind::Word, "kernel") => Item::Func(self.function(true)?),
                (TokKind::Word, "func") => Item::Func(self.function(false)?),
                _ => return Err(self.expected("`param`, `buffer`, `shared`, `kernel` or `func`")),
            };
            items.push(item);
        }
    }

    fn ty(&mut self) -> PResult<Type> {
        if self.at(TokKind::Word) {
            let text = self.text(self.tok);
            if let Some(ty) = Type::from_name(text) {
                self.bump()?;
                return Ok(ty);
            }
            if let Some(f) = NumFormat::from_name(text) {
                let mut d = self.expected(&format!("a type ({TYPE_LIST})"));
                d = d.with_note(format!(
                    "types carry no signedness; `{}` is a memory format, its type is `{}`",
                    f.name(),
                    f.ir_type()
                ));
                return Err(d);
            }
        }
        Err(self.expected(&format!("a type ({TYPE_LIST})")))
    }

    fn format(&mut self) -> PResult<NumFormat> {
        if self.at(TokKind::Word) {
            if let Some(f) = NumFormat::from_name(self.text(self.tok)) {
                self.bump()?;
                return Ok(f);
            }
        }
        Err(self.expected(&format!("an element format ({FORMAT_LIST})")))
    }

    fn u32_literal(&mut self, what: &str) -> PResult<Number<'s>> {
        let text = self.text(self.tok);
        let value = match self.tok.kind {
            TokKind::Int if !text.starts_with('-') => text.parse::<u32>().ok(),
            TokKind::Hex => u32::from_str_radix(&text[2..], 16).ok(),
            _ => return Err(self.expected(what)),
        };
        match value {
            Some(value) => {
                self.bump()?;
                Ok(Number { value, text })
            }
            None => Err(Diagnostic::new(
                self.tok.span(),
                format!(
                    "expected {what}, found {}, which does not fit in 32 bits",
                    self.describe(self.tok)
                ),
            )),
        }
    }

    /// `[size]` of a shared or private array.
    fn byte_size(&mut self) -> PResult<Number<'s>> {
        self.expect(TokKind::LBracket, "`[` and the size in bytes")?;
        let size = self.u32_literal("a size in bytes")?;
        self.expect(TokKind::RBracket, "`]`")?;
        Ok(size)
    }

    fn function(&mut self, kernel: bool) -> PResult<SynFunc<'s>> {
        let start = self.bump()?.start;
        let name = self.name(TokKind::Global, "a function name like `@main`")?;
        let mut params = Vec::new();
        let mut results = Vec::new();
        let kind = if kernel {
            let mut workgroup = None;
            if self.at_word("workgroup") {
                workgroup = Some(self.workgroup()?);
            }
            if !self.at(TokKind::LBrace) {
                let mut d = self.expected("`workgroup` or `{`");
                if self.at(TokKind::LParen) || self.at(TokKind::Arrow) {
                    d = d.with_note(
                        "kernels take no parameters and return nothing; use `param` for launch inputs",
                    );
                }
                return Err(d);
            }
            Some(workgroup)
        } else {
            self.expect(TokKind::LParen, "`(` and the parameter list")?;
            if !self.at(TokKind::RParen) {
                loop {
                    let name = self.name(TokKind::Value, "a parameter like `%a: i32`")?;
                    self.expect(TokKind::Colon, "`:` and the parameter's type")?;
                    let ty = self.ty()?;
                    params.push(SynParam {
                        name,
                        ty,
                        span: name.span.to(Span::new(self.prev_end, self.prev_end)),
                    });
                    if self.at(TokKind::Comma) {
                        self.bump()?;
                    } else {
                        break;
                    }
                }
            }
            self.expect(TokKind::RParen, "`,` or `)`")?;
            if self.at(TokKind::Arrow) {
                self.bump()?;
                if self.at(TokKind::LParen) {
                    self.bump()?;
                    loop {
                        results.push(self.ty()?);
                        if self.at(TokKind::Comma) {
                            self.bump()?;
                        } else {
                            break;
                        }
                    }
                    self.expect(TokKind::RParen, "`,` or `)`")?;
                } else {
                    results.push(self.ty()?);
                }
            } else if !self.at(TokKind::LBrace) {
                return Err(self.expected("`->` or `{`"));
            }
            None
        };
        let body = self.body()?;
        Ok(SynFunc {
            name,
            kernel: kind,
            params,
            results,
            body,
            span: Span::new(start, self.prev_end),
        })
    }

    /// `workgroup(x[, y[, z]])`: the sizes written (missing ones are 1).
    fn workgroup(&mut self) -> PResult<Vec<Number<'s>>> {
        self.bump()?;
        self.expect(TokKind::LParen, "`(` and the workgroup size")?;
        let mut dims = Vec::with_capacity(3);
        loop {
            if dims.len() == 3 {
                return Err(self.expected("`)` (a workgroup has at most 3 dimensions)"));
            }
            dims.push(self.u32_literal("a workgroup size")?);
            if self.at(TokKind::Comma) {
                self.bump()?;
            } else {
                break;
            }
        }
        self.expect(TokKind::RParen, "`,` or `)`")?;
        Ok(dims)
    }

    // ---- statements ----

    /// A function body. Nested blocks are kept on an explicit stack, not
    /// the call stack, so deep nesting costs heap, not stack.
    fn body(&mut self) -> PResult<SynBlock<'s>> {
        let brace = self.open_block(1)?;
        let mut stack = vec![OpenBlock {
            construct: Construct::Body,
            stmts: Vec::new(),
            brace,
            level: 1,
        }];
        loop {
            match self.tok.kind {
                TokKind::RBrace => {
                    self.bump()?;
                    let open = stack.pop().expect("a block is open");
                    let block = SynBlock { stmts: open.stmts };
                    let done = match open.construct {
                        Construct::Body => return Ok(block),
                        Construct::Loop { start } => SynStmt::Loop {
                            body: block,
                            span: Span::new(start, self.prev_end),
                        },
                        Construct::Ordered { start, key } => SynStmt::Ordered {
                            key,
                            body: block,
                            span: Span::new(start, self.prev_end),
                        },
                        Construct::Then { head, mut chain } => {
                            if !self.at_word("else") {
                                self.finish_if(head, block, SynBlock::default(), chain)
                            } else {
                                self.bump()?;
                                if self.at_word("if") {
                                    chain.push((head, block));
                                    self.open_if(&mut stack, chain)?;
                                } else if self.at(TokKind::LBrace) {
                                    let brace = self.open_block(open.level)?;
                                    stack.push(OpenBlock {
                                        construct: Construct::Else {
                                            head,
                                            then_body: block,
                                            chain,
                                        },
                                        stmts: Vec::new(),
                                        brace,
                                        level: open.level,
                                    });
                                } else {
                                    return Err(self.expected("`{` or `if` after `else`"));
                                }
                                continue;
                            }
                        }
                        Construct::Else {
                            head,
                            then_body,
                            chain,
                        } => self.finish_if(head, then_body, block, chain),
                    };
                    stack.last_mut().expect("the body is open").stmts.push(done);
                }
                TokKind::Eof => {
                    let brace = stack.last().expect("a block is open").brace;
                    return Err(self.unclosed(brace));
                }
                _ if self.at_word("if") => self.open_if(&mut stack, Vec::new())?,
                _ if self.at_word("loop") => {
                    let start = self.bump()?.start;
                    self.push_block(&mut stack, Construct::Loop { start }, 0)?;
                }
                _ if self.at_word("ordered") => {
                    let start = self.bump()?.start;
                    let key = self.operand("a key operand after `ordered`")?;
                    self.push_block(&mut stack, Construct::Ordered { start, key }, 0)?;
                }
                _ => {
                    let stmt = self.flat_stmt()?;
                    stack.last_mut().expect("a block is open").stmts.push(stmt);
                }
            }
        }
    }

    /// Opens the block of `construct`, `extra` levels deeper than usual.
    fn push_block(
        &mut self,
        stack: &mut Vec<OpenBlock<'s>>,
        construct: Construct<'s>,
        extra: usize,
    ) -> PResult<()> {
        let level = stack.last().expect("a block is open").level + 1 + extra;
        let brace = self.open_block(level).map_err(|d| {
            // Only the depth error is about the chain.
            if extra == 0 || level <= MAX_NESTING {
                return d;
            }
            let message = format!(
                "{}; each `else if` of a chain counts as one more (this is the {})",
                d.message,
                ordinal(extra)
            );
            Diagnostic { message, ..d }
        })?;
        stack.push(OpenBlock {
            construct,
            stmts: Vec::new(),
            brace,
            level,
        });
        Ok(())
    }

    /// `if cond {`: opens the then block. `chain` holds the `if`s this one
    /// is the `else if` of; each puts the block one level deeper.
    fn open_if(
        &mut self,
        stack: &mut Vec<OpenBlock<'s>>,
        chain: Vec<ElseIfParent<'s>>,
    ) -> PResult<()> {
        let start = self.bump()?.start;
        let cond = self.operand("a condition operand after `if`")?;
        let extra = chain.len();
        let head = IfHead { start, cond };
        self.push_block(stack, Construct::Then { head, chain }, extra)
    }

    /// The completed `if`, wrapped in the `if`s it is the `else if` of.
    fn finish_if(
        &self,
        head: IfHead<'s>,
        then_body: SynBlock<'s>,
        else_body: SynBlock<'s>,
        chain: Vec<ElseIfParent<'s>>,
    ) -> SynStmt<'s> {
        let mut stmt = SynStmt::If {
            cond: head.cond,
            then_body,
            else_body,
            span: Span::new(head.start, self.prev_end),
        };
        for (outer, outer_then) in chain.into_iter().rev() {
            stmt = SynStmt::If {
                cond: outer.cond,
                then_body: outer_then,
                else_body: SynBlock { stmts: vec![stmt] },
                span: Span::new(outer.start, self.prev_end),
            };
        }
        stmt
    }

    fn open_block(&mut self, depth: usize) -> PResult<Token> {
        let open = self.expect(TokKind::LBrace, "`{`")?;
        if depth > MAX_NESTING {
            return Err(Diagnostic::new(
                open.span(),
                format!("blocks nest too deeply: the limit is {MAX_NESTING} levels"),
            ));
        }
        Ok(open)
    }

    fn unclosed(&self, open: Token) -> Diagnostic {
        let what = format!(
            "`}}` to close the block opened at {}",
            self.location(open.start)
        );
        self.expected(&what)
    }

    /// A statement without a nested block.
    fn flat_stmt(&mut self) -> PResult<SynStmt<'s>> {
        let start = self.tok.start;
        if matches!(self.tok.kind, TokKind::Value | TokKind::Var) {
            return Ok(SynStmt::Inst(self.inst()?));
        }
        if !self.at(TokKind::Word) {
            return Err(self.expected("a statement or `}`"));
        }
        let stmt = match self.text(self.tok) {
            "var" => {
                self.bump()?;
                let name = self.name(TokKind::Var, "a variable name like `$i`")?;
                self.expect(TokKind::Colon, "`:` and the variable's type")?;
                let ty = self.ty()?;
                SynStmt::Var {
                    name,
                    ty,
                    span: Span::new(start, self.prev_end),
                }
            }
            "private" => {
                self.bump()?;
                let name = self.name(TokKind::Global, "a private array name like `@stack`")?;
                let size = self.byte_size()?;
                SynStmt::Private {
                    name,
                    size,
                    span: Span::new(start, self.prev_end),
                }
            }
            "break" => SynStmt::Break {
                span: self.bump()?.span(),
            },
            "continue" => SynStmt::Continue {
                span: self.bump()?.span(),
            },
            "kill" => SynStmt::Kill {
                span: self.bump()?.span(),
            },
            "return" => {
                self.bump()?;
                let mut values = Vec::new();
                if self.starts_operand() && !self.starts_instruction() {
                    loop {
                        values.push(self.operand("a return value")?);
                        if !self.at(TokKind::Comma) {
                            break;
                        }
                        self.bump()?;
                    }
                }
                SynStmt::Return {
                    values,
                    span: Span::new(start, self.prev_end),
                }
            }
            "else" => {
                return Err(self
                    .expected("a statement or `}`")
                    .with_note("`else` must directly follow the `}` of an `if`"))
            }
            "param" | "buffer" | "shared" | "kernel" | "func" => {
                return Err(self
                    .expected("a statement or `}`")
                    .with_note("module items cannot appear inside a function; is a `}` missing?"))
            }
            _ => SynStmt::Inst(self.inst()?),
        };
        Ok(stmt)
    }

    /// An instruction. Its operand list is optional: how many operands an
    /// op takes is the verifier's business, as are the result count and types.
    fn inst(&mut self) -> PResult<SynInst<'s>> {
        let start = self.tok.start;
        let mut results = Vec::new();
        if matches!(self.tok.kind, TokKind::Value | TokKind::Var) {
            loop {
                let place_start = self.tok.start;
                results.push(self.place()?);
                match self.tok.kind {
                    TokKind::Comma => {
                        self.bump()?;
                        if !matches!(self.tok.kind, TokKind::Value | TokKind::Var) {
                            return Err(self.expected("a result like `%x` or `$x` after `,`"));
                        }
                    }
                    TokKind::Equals => {
                        self.bump()?;
                        break;
                    }
                    _ => {
                        let what = format!(
                            "`,` or `=` after the result `{}`",
                            shorten(&self.src[place_start..self.prev_end])
                        );
                        return Err(self.expected(&what));
                    }
                }
            }
        }
        if !self.at(TokKind::Word) {
            return Err(self.expected("an instruction"));
        }
        let mnemonic_tok = self.tok;
        let mnemonic = self.text(mnemonic_tok);
        if KEYWORDS.contains(&mnemonic) {
            let what = if results.is_empty() {
                "a statement or `}`"
            } else {
                "an instruction after `=`"
            };
            return Err(self.expected(what));
        }
        self.bump()?;
        let (op, args) = if mnemonic == "call" {
            let callee = self.name(TokKind::Global, "a function name like `@f` after `call`")?;
            self.expect(TokKind::LParen, "`(` and the call's arguments")?;
            let mut args = Vec::new();
            if !self.at(TokKind::RParen) {
                loop {
                    args.push(self.operand("an argument")?);
                    if !self.at(TokKind::Comma) {
                        break;
                    }
                    self.bump()?;
                }
            }
            self.expect(TokKind::RParen, "`,` or `)`")?;
            (SynOp::Call { callee }, args)
        } else if Op::is_memory_mnemonic(mnemonic) && self.is_memory_mnemonic(mnemonic) {
            let what = format!("a buffer, shared or private array like `@data` after `{mnemonic}`");
            let mem = self.name(TokKind::Global, &what)?;
            let mut args = Vec::new();
            if self.at(TokKind::Comma) {
                self.bump()?;
                args = self.unlabeled_operands(mnemonic)?;
            } else if self.continues_operands() {
                return Err(self.expected("`,` and the address"));
            } else {
                self.reject_stray_word()?;
            }
            (SynOp::Memory { mnemonic, mem }, args)
        } else if let Some(op) = self.plain_op(mnemonic) {
            if self.continues_operands() {
                let (op, args) = self.plain_operands(op, mnemonic)?;
                (SynOp::Plain(op), args)
            } else if matches!(op, Op::Shuffle { .. }) {
                return Err(self.expected(&format!(
                    "the operands of `{mnemonic}` (`data, index, width w` or `data, index, mask m`)"
                )));
            } else {
                self.reject_stray_word()?;
                (SynOp::Plain(op), Vec::new())
            }
        } else {
            let mut message = format!("unknown instruction `{}`", shorten(mnemonic));
            if let Some(s) = suggest(mnemonic) {
                message.push_str(&format!("; did you mean {s}?"));
            }
            return Err(Diagnostic::new(mnemonic_tok.span(), message));
        };
        Ok(SynInst {
            results,
            op,
            args,
            span: Span::new(start, self.prev_end),
        })
    }

    /// `Op::from_mnemonic`, remembered: programs repeat a few mnemonics.
    fn plain_op(&self, mnemonic: &'s str) -> Option<Op> {
        if let Some(op) = self.known_ops.borrow().get(mnemonic) {
            return Some(op.clone());
        }
        let op = Op::from_mnemonic(mnemonic)?;
        self.known_ops.borrow_mut().insert(mnemonic, op.clone());
        Some(op)
    }

    fn is_memory_mnemonic(&self, mnemonic: &str) -> bool {
        Op::is_memory_mnemonic(mnemonic)
            && Op::from_memory_mnemonic(mnemonic, crate::ops::MemRef::Buffer(0)).is_some()
    }

    fn place(&mut self) -> PResult<SynPlace<'s>> {
        let t = self.bump()?;
        let name = Name {
            text: &self.src[t.start + 1..t.end],
            span: t.span(),
        };
        Ok(match t.kind {
            TokKind::Value => SynPlace::Value(name),
            _ => SynPlace::Var(name),
        })
    }

    /// Operands of an op without memory operand or callee, with the labels
    /// that select the shuffle form and the vote guard.
    fn plain_operands(&mut self, mut op: Op, mnemonic: &str) -> PResult<(Op, Vec<SynOperand<'s>>)> {
        let mut args = Vec::new();
        loop {
            let position = args.len() + 1;
            let label = self.label()?;
            match (&mut op, label) {
                (_, None) => {
                    if matches!(op, Op::Shuffle { .. }) && position == 3 {
                        return Err(self.expected(&format!(
                            "`width` or `mask` before the third operand of `{mnemonic}`"
                        )));
                    }
                }
                (Op::Shuffle { form, .. }, Some((Label::Width, _))) if position == 3 => {
                    *form = ShuffleForm::Width;
                }
                (Op::Shuffle { form, .. }, Some((Label::Mask, _))) if position == 3 => {
                    *form = ShuffleForm::Mask;
                }
                (Op::Vote { guarded, .. }, Some((Label::Guard, _))) if position == 2 => {
                    *guarded = true;
                }
                (_, Some((label, span))) => {
                    let rule = match op {
                        Op::Shuffle { .. } => format!(
                            "only the third operand of `{mnemonic}` takes a label, `width` or `mask`"
                        ),
                        Op::Vote { .. } => format!(
                            "only the second operand of `{mnemonic}` takes a label, `guard`"
                        ),
                        _ => format!("`{mnemonic}` takes no operand labels"),
                    };
                    return Err(Diagnostic::new(
                        span,
                        format!(
                            "expected an operand, found the label `{}`; {rule}",
                            label.name()
                        ),
                    ));
                }
            }
            args.push(self.operand("an operand")?);
            if !self.at(TokKind::Comma) {
                break;
            }
            self.bump()?;
        }
        if matches!(op, Op::Shuffle { .. }) && args.len() < 3 {
            return Err(self.expected(&format!(
                "`,` and the third operand of `{mnemonic}` (`width w` or `mask m`)"
            )));
        }
        Ok((op, args))
    }

    fn unlabeled_operands(&mut self, mnemonic: &str) -> PResult<Vec<SynOperand<'s>>> {
        let mut args = Vec::new();
        loop {
            if let Some((label, span)) = self.label()? {
                return Err(Diagnostic::new(
                    span,
                    format!(
                        "expected an operand, found the label `{}`; `{mnemonic}` takes no operand labels",
                        label.name()
                    ),
                ));
            }
            args.push(self.operand("an operand")?);
            if !self.at(TokKind::Comma) {
                return Ok(args);
            }
            self.bump()?;
        }
    }

    fn label(&mut self) -> PResult<Option<(Label, Span)>> {
        if self.at(TokKind::Word) {
            if let Some(label) = Label::from_word(self.text(self.tok)) {
                return Ok(Some((label, self.bump()?.span())));
            }
        }
        Ok(None)
    }

    fn starts_operand(&self) -> bool {
        match self.tok.kind {
            TokKind::Value | TokKind::Var | TokKind::Int | TokKind::Hex | TokKind::Float => true,
            TokKind::Word => matches!(self.text(self.tok), "true" | "false"),
            _ => false,
        }
    }

    /// After an instruction without operands: a word on the same line that
    /// is no statement was meant as an operand (`add x, 1`), so say that
    /// rather than "unknown instruction".
    fn reject_stray_word(&self) -> PResult<()> {
        if !self.at(TokKind::Word) || self.src[self.prev_end..self.tok.start].contains('\n') {
            return Ok(());
        }
        let word = self.text(self.tok);
        let known = KEYWORDS.contains(&word)
            || word == "call"
            || self.plain_op(word).is_some()
            || self.is_memory_mnemonic(word);
        if known {
            return Ok(());
        }
        Err(self.expected("an operand (a value, variable or literal)"))
    }

    /// True when the current token is an operand (or an operand label) of
    /// the instruction just read, not the start of the next one.
    fn continues_operands(&self) -> bool {
        let label = self.at(TokKind::Word) && Label::from_word(self.text(self.tok)).is_some();
        (label || self.starts_operand()) && !self.starts_instruction()
    }

    /// True when the current token starts a run `%a, $b, ... =`, the results
    /// of the next instruction.
    fn starts_instruction(&self) -> bool {
        if !matches!(self.tok.kind, TokKind::Value | TokKind::Var) {
            return false;
        }
        if self.tok.start < self.plain_run_end.get() {
            return false;
        }
        let mut lexer = self.lexer.clone();
        let run_end = loop {
            let next = match lexer.next_token() {
                Ok(t) => t,
                Err(d) => break d.span.start as usize,
            };
            match next.kind {
                TokKind::Equals => return true,
                TokKind::Comma => match lexer.next_token() {
                    Ok(place) if matches!(place.kind, TokKind::Value | TokKind::Var) => {}
                    Ok(other) => break other.start,
                    Err(d) => break d.span.start as usize,
                },
                _ => break next.start,
            }
        };
        self.plain_run_end.set(run_end);
        false
    }

    /// One operand; `what` names it in the error when there is none.
    fn operand(&mut self, what: &str) -> PResult<SynOperand<'s>> {
        let t = self.tok;
        let form = match t.kind {
            TokKind::Value | TokKind::Var => {
                if self.starts_instruction() {
                    return Err(Diagnostic::new(
                        t.span(),
                        format!(
                            "expected {what}, found `{}`, which starts the next instruction",
                            shorten(self.text(t))
                        ),
                    ));
                }
                self.bump()?;
                let name = Name {
                    text: &self.src[t.start + 1..t.end],
                    span: t.span(),
                };
                let kind = if t.kind == TokKind::Value {
                    SynOperandKind::Value(name)
                } else {
                    SynOperandKind::Var(name)
                };
                return Ok(SynOperand {
                    kind,
                    span: t.span(),
                });
            }
            TokKind::Int => LitForm::Int(self.text(t)),
            TokKind::Hex => LitForm::Hex(self.text(t)),
            TokKind::Float => LitForm::Float(self.text(t)),
            TokKind::Word if self.text(t) == "true" => LitForm::Bool(true),
            TokKind::Word if self.text(t) == "false" => LitForm::Bool(false),
            _ => return Err(self.expected(&format!("{what} (a value, variable or literal)"))),
        };
        self.bump()?;
        let mut ty = None;
        if self.at(TokKind::Colon) {
            self.bump()?;
            ty = Some(self.ty()?);
        }
        Ok(SynOperand {
            kind: SynOperandKind::Literal(Literal {
                form,
                ty,
                span: t.span(),
            }),
            span: Span::new(t.start, self.prev_end),
        })
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, ..., `11th`, ..., `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
