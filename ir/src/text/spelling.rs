//! Literal spellings: how the source wrote each literal (`0x1f`, `nan`,
//! `1.00048828125`, `0:i32`). Like comments they are trivia of the text:
//! the IR keeps only the constant, and this side table keeps the text so
//! that `warpjit fmt` can write each number the way it was written.
//!
//! A spelling is keyed by the span start of the statement or declaration
//! it belongs to (a span the IR keeps) and its position there: the
//! operand index of an instruction, `return`, `if` or `ordered`, or the
//! index of a number of a declaration (a binding, a size in bytes, a
//! workgroup size).

use super::literal::literal_const;
use super::syntax::*;
use crate::span::Span;
use crate::types::{Const, Type};
use std::collections::HashMap;
use std::fmt;

/// One literal as written, its whitespace dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spelling {
    kind: LitKind,
    /// The literal's token.
    text: Box<str>,
    /// The `:type` suffix.
    suffix: Option<Type>,
}

/// Which token a literal is; with the text, this gives back its `LitForm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LitKind {
    Bool,
    Int,
    Hex,
    Float,
}

impl Spelling {
    fn of_literal(lit: &Literal<'_>) -> Spelling {
        let (kind, text) = match lit.form {
            LitForm::Bool(true) => (LitKind::Bool, "true"),
            LitForm::Bool(false) => (LitKind::Bool, "false"),
            LitForm::Int(text) => (LitKind::Int, text),
            LitForm::Hex(text) => (LitKind::Hex, text),
            LitForm::Float(text) => (LitKind::Float, text),
        };
        Spelling {
            kind,
            text: text.into(),
            suffix: lit.ty,
        }
    }

    fn of_number(number: &Number<'_>) -> Spelling {
        let kind = if number.text.starts_with("0x") || number.text.starts_with("0X") {
            LitKind::Hex
        } else {
            LitKind::Int
        };
        Spelling {
            kind,
            text: number.text.into(),
            suffix: None,
        }
    }

    pub fn form(&self) -> LitForm<'_> {
        match self.kind {
            LitKind::Bool => LitForm::Bool(&*self.text == "true"),
            LitKind::Int => LitForm::Int(&self.text),
            LitKind::Hex => LitForm::Hex(&self.text),
            LitKind::Float => LitForm::Float(&self.text),
        }
    }

    /// The literal without its suffix.
    pub fn value_text(&self) -> &str {
        &self.text
    }

    /// The type the literal has wherever it stands: its suffix's, or bool
    /// for `true` and `false`. None for a bare number, which takes the
    /// type of its position.
    pub fn own_type(&self) -> Option<Type> {
        match (self.suffix, self.kind) {
            (Some(ty), _) => Some(ty),
            (None, LitKind::Bool) => Some(Type::Bool),
            (None, _) => None,
        }
    }

    /// True when the literal, as a `ty`, is `c`.
    pub fn denotes(&self, c: Const, ty: Type) -> bool {
        literal_const(self.form(), ty).ok() == Some(c)
    }
}

impl fmt::Display for Spelling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        match self.suffix {
            Some(ty) => write!(f, ":{ty}"),
            None => Ok(()),
        }
    }
}

/// Where a spelling stands: the span start of its statement or
/// declaration and its position there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Position {
    start: u32,
    index: u32,
}

/// The literal spellings of a source text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spellings {
    by_position: HashMap<Position, Spelling>,
}

impl Spellings {
    /// The spelling of literal `index` of the statement or declaration
    /// whose span starts at `start`.
    pub fn get(&self, start: u32, index: usize) -> Option<&Spelling> {
        let index = u32::try_from(index).ok()?;
        self.by_position.get(&Position { start, index })
    }

    /// Number `index` of the declaration starting at `start`, as written
    /// if that still reads as `value`, else in decimal.
    pub fn number(&self, start: u32, index: usize, value: u32) -> String {
        let as_written = self.get(start, index).filter(|s| {
            s.suffix.is_none()
                && matches!(s.kind, LitKind::Int | LitKind::Hex)
                && s.denotes(Const::new(Type::I64, value.into()), Type::I64)
        });
        match as_written {
            Some(s) => s.value_text().to_string(),
            None => value.to_string(),
        }
    }

    fn add(&mut self, span: Span, index: usize, spelling: Spelling) {
        let position = Position {
            start: span.start,
            index: index as u32,
        };
        self.by_position.insert(position, spelling);
    }

    fn literals(&mut self, span: Span, operands: &[SynOperand<'_>]) {
        for (i, operand) in operands.iter().enumerate() {
            if let SynOperandKind::Literal(lit) = &operand.kind {
                self.add(span, i, Spelling::of_literal(lit));
            }
        }
    }

    fn numbers(&mut self, span: Span, numbers: &[Number<'_>]) {
        for (i, number) in numbers.iter().enumerate() {
            self.add(span, i, Spelling::of_number(number));
        }
    }

    /// `block` recurses once per nesting level, so its frame stays small.
    fn block(&mut self, block: &SynBlock<'_>) {
        for stmt in &block.stmts {
            match stmt {
                SynStmt::Inst(inst) => self.literals(inst.span, &inst.args),
                SynStmt::Return { values, span } => self.literals(*span, values),
                SynStmt::Private { size, span, .. } => {
                    self.numbers(*span, std::slice::from_ref(size))
                }
                SynStmt::If {
                    cond,
                    then_body,
                    else_body,
                    span,
                } => {
                    self.literals(*span, std::slice::from_ref(cond));
                    self.block(then_body);
                    self.block(else_body);
                }
                SynStmt::Ordered { key, body, span } => {
                    self.literals(*span, std::slice::from_ref(key));
                    self.block(body);
                }
                SynStmt::Loop { body, .. } => self.block(body),
                SynStmt::Var { .. }
                | SynStmt::Break { .. }
                | SynStmt::Continue { .. }
                | SynStmt::Kill { .. } => {}
            }
        }
    }
}

/// The spellings of the literals and declared numbers of a module's text.
pub(crate) fn collect(syntax: &SynModule<'_>) -> Spellings {
    let mut spellings = Spellings::default();
    for item in &syntax.items {
        match item {
            Item::Param { .. } => {}
            Item::Buffer { binding, span, .. } => {
                spellings.numbers(*span, std::slice::from_ref(binding))
            }
            Item::Shared { size, span, .. } => spellings.numbers(*span, std::slice::from_ref(size)),
            Item::Func(f) => {
                if let Some(Some(sizes)) = &f.kernel {
                    spellings.numbers(f.span, sizes);
                }
                spellings.block(&f.body);
            }
        }
    }
    spellings
}
