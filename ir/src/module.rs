//! The warp IR: a module of uniform parameters, memory declarations and
//! functions whose bodies are structured statements.
//!
//! Values are per-lane SSA values (`%name`), each defined once by an
//! instruction or a function parameter. Variables (`$name`) are mutable
//! per-lane registers, zero at function entry; writing one in divergent code
//! changes only the active lanes. Control flow is structured (`if`, `loop`,
//! `break`, `continue`, `return`, `kill`, `ordered`), so every construct has
//! a single entry and exit and the execution mask is implied by the nesting.
//!
//! Entities are referred to by `u32` indices into the lists that own them;
//! their names are kept only for printing and diagnostics.

use crate::ops::{FuncSig, MemRef, Op};
use crate::span::Span;
use crate::types::{Const, Type};

/// Index of an SSA value in its function's `values`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);
/// Index of a variable in its function's `vars`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);
/// Index of a uniform parameter in the module's `params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);
/// Index of a function in the module's `functions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

/// What an instruction reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Value(ValueId),
    Var(VarId),
    Param(ParamId),
    Const(Const),
}

/// Where an instruction writes one of its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Defines a new SSA value.
    Value(ValueId),
    /// Assigns a variable in the active lanes.
    Var(VarId),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub args: Vec<Operand>,
    pub results: Vec<Place>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Inst(Inst),
    /// Runs `then_body` for the active lanes where `cond` is true and
    /// `else_body` for the others; a side with no lanes is skipped.
    If {
        cond: Operand,
        then_body: Block,
        else_body: Block,
        span: Span,
    },
    /// Repeats `body` while any lane is still in the loop.
    Loop {
        body: Block,
        span: Span,
    },
    /// The active lanes leave the innermost loop.
    Break {
        span: Span,
    },
    /// The active lanes skip to the next iteration of the innermost loop.
    Continue {
        span: Span,
    },
    /// The active lanes leave the function with these results.
    Return {
        values: Vec<Operand>,
        span: Span,
    },
    /// The active lanes end their invocation.
    Kill {
        span: Span,
    },
    /// Ordered section: lanes with equal `key` run `body` one after
    /// another in lane order; lanes with distinct keys run it together.
    Ordered {
        key: Operand,
        body: Block,
        span: Span,
    },
}

impl Stmt {
    /// The operands the statement itself reads (not those of nested blocks).
    pub fn operands(&self) -> &[Operand] {
        match self {
            Stmt::Inst(i) => &i.args,
            Stmt::If { cond, .. } => std::slice::from_ref(cond),
            Stmt::Ordered { key, .. } => std::slice::from_ref(key),
            Stmt::Return { values, .. } => values,
            Stmt::Loop { .. } | Stmt::Break { .. } | Stmt::Continue { .. } | Stmt::Kill { .. } => {
                &[]
            }
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Stmt::Inst(i) => i.span,
            Stmt::If { span, .. }
            | Stmt::Loop { span, .. }
            | Stmt::Break { span }
            | Stmt::Continue { span }
            | Stmt::Return { span, .. }
            | Stmt::Kill { span }
            | Stmt::Ordered { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValueDecl {
    pub name: String,
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub name: String,
    pub ty: Type,
    pub span: Span,
}

/// A private per-lane byte array, zero at function entry.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivateDecl {
    pub name: String,
    pub size: u32,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FuncKind {
    /// An entry point; `workgroup` is the default workgroup size for launches.
    Kernel {
        workgroup: Option<[u32; 3]>,
    },
    Function,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FuncKind,
    /// Parameter values (indices into `values`).
    pub params: Vec<ValueId>,
    pub results: Vec<Type>,
    pub values: Vec<ValueDecl>,
    pub vars: Vec<VarDecl>,
    pub privates: Vec<PrivateDecl>,
    pub body: Block,
    pub span: Span,
}

impl Function {
    pub fn is_kernel(&self) -> bool {
        matches!(self.kind, FuncKind::Kernel { .. })
    }
    pub fn value_type(&self, v: ValueId) -> Type {
        self.values[v.0 as usize].ty
    }
    pub fn var_type(&self, v: VarId) -> Type {
        self.vars[v.0 as usize].ty
    }
    pub fn sig(&self) -> FuncSig {
        FuncSig {
            params: self.params.iter().map(|p| self.value_type(*p)).collect(),
            results: self.results.clone(),
        }
    }
}

/// A uniform kernel parameter: one scalar for the whole launch.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub name: String,
    pub ty: Type,
    pub span: Span,
}

/// A global-memory buffer bound at launch by its binding number.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferDecl {
    pub name: String,
    pub binding: u32,
    /// Element type for tools (the CLI prints and fills with it); memory
    /// instructions choose their own format.
    pub elem: crate::ops::NumFormat,
    pub span: Span,
}

/// Workgroup shared memory: `size` bytes per workgroup, zero at start.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedDecl {
    pub name: String,
    pub size: u32,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub params: Vec<ParamDecl>,
    pub buffers: Vec<BufferDecl>,
    pub shared: Vec<SharedDecl>,
    pub functions: Vec<Function>,
}

impl Module {
    /// The function `id`. Panics when `id` is not one of this module's, as
    /// slice indexing does: ids come from [`Module::find_function`],
    /// [`Module::kernels`] or a module's own calls.
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }
    /// The function or kernel named `name`, with or without its `@`.
    pub fn find_function(&self, name: &str) -> Option<FuncId> {
        let name = name.strip_prefix('@').unwrap_or(name);
        self.functions
            .iter()
            .position(|f| f.name == name)
            .map(|i| FuncId(i as u32))
    }
    /// The kernels, in declaration order, with their ids.
    pub fn kernels(&self) -> impl Iterator<Item = (FuncId, &Function)> {
        self.functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_kernel())
            .map(|(i, f)| (FuncId(i as u32), f))
    }
    /// The name (without `@`) of memory `mem` as function `f` sees it: a
    /// buffer, a shared array or one of `f`'s private arrays; `None` when
    /// there is no such memory.
    pub fn memory_name<'m>(&'m self, f: &'m Function, mem: MemRef) -> Option<&'m str> {
        let name = match mem {
            MemRef::Buffer(i) => self.buffers.get(i as usize).map(|d| &d.name),
            MemRef::Shared(i) => self.shared.get(i as usize).map(|d| &d.name),
            MemRef::Private(i) => f.privates.get(i as usize).map(|d| &d.name),
        };
        name.map(String::as_str)
    }

    /// The position of buffer `name` (with or without its `@`) in
    /// declaration order, which is the order launches take buffers in
    /// (not its binding number).
    pub fn find_buffer(&self, name: &str) -> Option<u32> {
        let name = name.strip_prefix('@').unwrap_or(name);
        self.buffers
            .iter()
            .position(|b| b.name == name)
            .map(|i| i as u32)
    }
    /// The position of parameter `name` (with or without its `%`) in
    /// declaration order, which is the order launches take parameters in.
    pub fn find_param(&self, name: &str) -> Option<ParamId> {
        let name = name.strip_prefix('%').unwrap_or(name);
        self.params
            .iter()
            .position(|p| p.name == name)
            .map(|i| ParamId(i as u32))
    }

    /// The type an operand has inside function `f`.
    pub fn operand_type(&self, f: &Function, o: &Operand) -> Type {
        match o {
            Operand::Value(v) => f.value_type(*v),
            Operand::Var(v) => f.var_type(*v),
            Operand::Param(p) => self.params[p.0 as usize].ty,
            Operand::Const(c) => c.ty,
        }
    }
}

/// Calls `visit` for every statement of `block`, depth first, in order.
pub fn walk_block<'a>(block: &'a Block, visit: &mut dyn FnMut(&'a Stmt)) {
    for s in &block.stmts {
        walk_stmt(s, visit);
    }
}

/// Calls `visit` for `stmt` and every statement nested in it, depth first,
/// in order.
pub fn walk_stmt<'a>(stmt: &'a Stmt, visit: &mut dyn FnMut(&'a Stmt)) {
    visit(stmt);
    match stmt {
        Stmt::If {
            then_body,
            else_body,
            ..
        } => {
            walk_block(then_body, visit);
            walk_block(else_body, visit);
        }
        Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => walk_block(body, visit),
        _ => {}
    }
}
