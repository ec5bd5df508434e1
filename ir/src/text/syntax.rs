//! The syntax tree: the program as written, names not yet resolved and
//! literals not yet typed. Names borrow from the source text.

use crate::ops::{NumFormat, Op};
use crate::span::Span;
use crate::types::Type;

/// A name without its sigil, and the span of the whole token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Name<'s> {
    pub text: &'s str,
    pub span: Span,
}

pub(crate) struct SynModule<'s> {
    pub items: Vec<Item<'s>>,
}

pub(crate) enum Item<'s> {
    Param {
        name: Name<'s>,
        ty: Type,
        span: Span,
    },
    Buffer {
        name: Name<'s>,
        binding: Number<'s>,
        elem: NumFormat,
        span: Span,
    },
    Shared {
        name: Name<'s>,
        size: Number<'s>,
        span: Span,
    },
    Func(SynFunc<'s>),
}

/// A number of a declaration (a binding, a size in bytes, a workgroup
/// size) and its text.
#[derive(Clone, Copy)]
pub(crate) struct Number<'s> {
    pub value: u32,
    pub text: &'s str,
}

pub(crate) struct SynFunc<'s> {
    pub name: Name<'s>,
    /// `Some(workgroup)` for kernels: the one to three sizes written.
    pub kernel: Option<Option<Vec<Number<'s>>>>,
    pub params: Vec<SynParam<'s>>,
    pub results: Vec<Type>,
    pub body: SynBlock<'s>,
    pub span: Span,
}

pub(crate) struct SynParam<'s> {
    pub name: Name<'s>,
    pub ty: Type,
    pub span: Span,
}

#[derive(Default)]
pub(crate) struct SynBlock<'s> {
    pub stmts: Vec<SynStmt<'s>>,
}

pub(crate) enum SynStmt<'s> {
    Var {
        name: Name<'s>,
        ty: Type,
        span: Span,
    },
    Private {
        name: Name<'s>,
        size: Number<'s>,
        span: Span,
    },
    Inst(SynInst<'s>),
    If {
        cond: SynOperand<'s>,
        then_body: SynBlock<'s>,
        /// `else if` is already an else block holding one `If`.
        else_body: SynBlock<'s>,
        span: Span,
    },
    Loop {
        body: SynBlock<'s>,
        span: Span,
    },
    Break {
        span: Span,
    },
    Continue {
        span: Span,
    },
    Return {
        values: Vec<SynOperand<'s>>,
        span: Span,
    },
    Kill {
        span: Span,
    },
    Ordered {
        key: SynOperand<'s>,
        body: SynBlock<'s>,
        span: Span,
    },
}

pub(crate) struct SynInst<'s> {
    pub results: Vec<SynPlace<'s>>,
    pub op: SynOp<'s>,
    pub args: Vec<SynOperand<'s>>,
    pub span: Span,
}

#[derive(Clone, Copy)]
pub(crate) enum SynPlace<'s> {
    Value(Name<'s>),
    Var(Name<'s>),
}

pub(crate) enum SynOp<'s> {
    /// Any op without a memory operand or callee; shuffle form and vote
    /// guard are already set from the operand labels.
    Plain(Op),
    /// `load.`/`store.`/`atom.` with the memory symbol (the mnemonic is
    /// known to be valid).
    Memory {
        mnemonic: &'s str,
        mem: Name<'s>,
    },
    Call {
        callee: Name<'s>,
    },
}

#[derive(Clone, Copy)]
pub(crate) struct SynOperand<'s> {
    pub kind: SynOperandKind<'s>,
    pub span: Span,
}

#[derive(Clone, Copy)]
pub(crate) enum SynOperandKind<'s> {
    /// `%name`: a value of the function or a module parameter.
    Value(Name<'s>),
    Var(Name<'s>),
    Literal(Literal<'s>),
}

#[derive(Clone, Copy)]
pub(crate) struct Literal<'s> {
    pub form: LitForm<'s>,
    /// The `:type` suffix.
    pub ty: Option<Type>,
    /// The literal without its suffix.
    pub span: Span,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum LitForm<'s> {
    Bool(bool),
    /// Decimal integer text, maybe with a leading `-`.
    Int(&'s str),
    /// Hex text including `0x`.
    Hex(&'s str),
    /// Decimal float text, `inf`, `-inf`, `nan` or `-nan`.
    Float(&'s str),
}
