//! From the syntax tree to a [`Module`]: names become ids, every value gets
//! its type from its op's [`Signature`], and literals get their types.
//!
//! Type errors the verifier also reports (wrong operand types, operand or
//! result counts) do not stop the build: such an instruction still gets a
//! value declaration for each result, typed from the signature where it says
//! something and `i32` where it does not.

use super::literal::literal_const;
use super::syntax::*;
use crate::module::*;
use crate::ops::{FuncSig, MemRef, Op, Signature, Slot, TypeClass};
use crate::span::{line_col, Diagnostic, Span};
use crate::types::{Const, Type};
use std::collections::HashMap;

type RResult<T> = Result<T, Diagnostic>;

const CANNOT_INFER: &str =
    "cannot infer the type of this literal; write it with a type, e.g. 1:i32";

#[derive(Clone, Copy)]
enum Global {
    Buffer(u32),
    Shared(u32),
    Function(u32),
}

impl Global {
    fn describe(self) -> &'static str {
        match self {
            Global::Buffer(_) => "a buffer",
            Global::Shared(_) => "a shared array",
            Global::Function(_) => "a function",
        }
    }
}

struct ModuleScope<'s> {
    src: &'s str,
    params: HashMap<&'s str, ParamId>,
    globals: HashMap<&'s str, (Global, Span)>,
    sigs: Vec<FuncSig>,
    module: Module,
}

impl ModuleScope<'_> {
    fn location(&self, span: Span) -> String {
        let (line, col) = line_col(self.src, span.start as usize);
        format!("{line}:{col}")
    }
}

pub(crate) fn resolve(src: &str, syn: &SynModule<'_>) -> RResult<Module> {
    let mut scope = ModuleScope {
        src,
        params: HashMap::new(),
        globals: HashMap::new(),
        sigs: Vec::new(),
        module: Module::default(),
    };
    for item in &syn.items {
        declare_item(&mut scope, item)?;
    }
    let mut functions = Vec::new();
    for item in &syn.items {
        if let Item::Func(f) = item {
            functions.push(FuncBuilder::new(&scope, f)?.build()?);
        }
    }
    scope.module.functions = functions;
    Ok(scope.module)
}

fn declare_item<'s>(scope: &mut ModuleScope<'s>, item: &Item<'s>) -> RResult<()> {
    let m = &mut scope.module;
    let (name, global) = match item {
        Item::Param { name, ty, span } => {
            if let Some(&id) = scope.params.get(name.text) {
                let first = m.params[id.0 as usize].span;
                return Err(redeclared(scope, *name, "%", first));
            }
            scope
                .params
                .insert(name.text, ParamId(m.params.len() as u32));
            m.params.push(ParamDecl {
                name: name.text.to_string(),
                ty: *ty,
                span: *span,
            });
            return Ok(());
        }
        Item::Buffer {
            name,
            binding,
            elem,
            span,
        } => {
            m.buffers.push(BufferDecl {
                name: name.text.to_string(),
                binding: binding.value,
                elem: *elem,
                span: *span,
            });
            (name, Global::Buffer(m.buffers.len() as u32 - 1))
        }
        Item::Shared { name, size, span } => {
            m.shared.push(SharedDecl {
                name: name.text.to_string(),
                size: size.value,
                span: *span,
            });
            (name, Global::Shared(m.shared.len() as u32 - 1))
        }
        Item::Func(f) => {
            scope.sigs.push(FuncSig {
                params: f.params.iter().map(|p| p.ty).collect(),
                results: f.results.clone(),
            });
            (&f.name, Global::Function(scope.sigs.len() as u32 - 1))
        }
    };
    if let Some(&(_, first)) = scope.globals.get(name.text) {
        return Err(redeclared(scope, *name, "@", first));
    }
    scope.globals.insert(name.text, (global, name.span));
    Ok(())
}

fn redeclared(scope: &ModuleScope<'_>, name: Name<'_>, sigil: &str, first: Span) -> Diagnostic {
    Diagnostic::new(
        name.span,
        format!("`{sigil}{}` is already declared", name.text),
    )
    .with_note(format!("first declared at {}", scope.location(first)))
}

struct FuncBuilder<'s, 'm> {
    scope: &'m ModuleScope<'s>,
    syn: &'m SynFunc<'s>,
    values: Vec<ValueDecl>,
    value_ids: HashMap<&'s str, ValueId>,
    vars: Vec<VarDecl>,
    var_ids: HashMap<&'s str, VarId>,
    privates: Vec<PrivateDecl>,
    private_ids: HashMap<&'s str, u32>,
}

/// A result place before its value is defined.
enum PendingPlace<'s> {
    Var(VarId, Type),
    Value(Name<'s>),
}

/// An operand whose type is known, or a bare literal still waiting for one.
enum Arg<'s> {
    Known(Operand, Type),
    Bare(Literal<'s>),
}

impl<'s, 'm> FuncBuilder<'s, 'm> {
    fn new(scope: &'m ModuleScope<'s>, syn: &'m SynFunc<'s>) -> RResult<FuncBuilder<'s, 'm>> {
        let mut b = FuncBuilder {
            scope,
            syn,
            values: Vec::new(),
            value_ids: HashMap::new(),
            vars: Vec::new(),
            var_ids: HashMap::new(),
            privates: Vec::new(),
            private_ids: HashMap::new(),
        };
        b.declare_locals(&syn.body)?;
        Ok(b)
    }

    /// Variables and private arrays are function-scoped wherever they are
    /// declared, so they are all declared before the body is read.
    fn declare_locals(&mut self, block: &SynBlock<'s>) -> RResult<()> {
        for stmt in &block.stmts {
            match stmt {
                SynStmt::Var { name, ty, span } => {
                    if let Some(&id) = self.var_ids.get(name.text) {
                        let first = self.vars[id.0 as usize].span;
                        return Err(redeclared(self.scope, *name, "$", first));
                    }
                    self.var_ids
                        .insert(name.text, VarId(self.vars.len() as u32));
                    self.vars.push(VarDecl {
                        name: name.text.to_string(),
                        ty: *ty,
                        span: *span,
                    });
                }
                SynStmt::Private { name, size, span } => {
                    if let Some(&id) = self.private_ids.get(name.text) {
                        let first = self.privates[id as usize].span;
                        return Err(redeclared(self.scope, *name, "@", first));
                    }
                    if let Some(&(_, first)) = self.scope.globals.get(name.text) {
                        return Err(redeclared(self.scope, *name, "@", first));
                    }
                    self.private_ids
                        .insert(name.text, self.privates.len() as u32);
                    self.privates.push(PrivateDecl {
                        name: name.text.to_string(),
                        size: size.value,
                        span: *span,
                    });
                }
                SynStmt::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.declare_locals(then_body)?;
                    self.declare_locals(else_body)?;
                }
                SynStmt::Loop { body, .. } | SynStmt::Ordered { body, .. } => {
                    self.declare_locals(body)?
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn build(mut self) -> RResult<Function> {
        let syn = self.syn;
        let mut params = Vec::new();
        for p in &syn.params {
            params.push(self.define_value(p.name, p.ty, p.span)?);
        }
        let body = self.block(&syn.body)?;
        let kind = match &syn.kernel {
            Some(sizes) => FuncKind::Kernel {
                workgroup: sizes.as_ref().map(|sizes| {
                    let mut dims = [1; 3];
                    for (dim, size) in dims.iter_mut().zip(sizes) {
                        *dim = size.value;
                    }
                    dims
                }),
            },
            None => FuncKind::Function,
        };
        Ok(Function {
            name: syn.name.text.to_string(),
            kind,
            params,
            results: syn.results.clone(),
            values: self.values,
            vars: self.vars,
            privates: self.privates,
            body,
            span: syn.span,
        })
    }

    fn define_value(&mut self, name: Name<'s>, ty: Type, span: Span) -> RResult<ValueId> {
        if let Some(&p) = self.scope.params.get(name.text) {
            let decl = &self.scope.module.params[p.0 as usize];
            return Err(Diagnostic::new(
                name.span,
                format!(
                    "`%{}` is a module parameter; a function value may not reuse its name",
                    name.text
                ),
            )
            .with_note(format!(
                "the parameter is declared at {}",
                self.scope.location(decl.span)
            )));
        }
        if let Some(&id) = self.value_ids.get(name.text) {
            let first = self.values[id.0 as usize].span;
            return Err(
                Diagnostic::new(name.span, format!("`%{}` is already defined", name.text))
                    .with_note(format!("first defined at {}", self.scope.location(first))),
            );
        }
        let id = ValueId(self.values.len() as u32);
        self.value_ids.insert(name.text, id);
        self.values.push(ValueDecl {
            name: name.text.to_string(),
            ty,
            span,
        });
        Ok(id)
    }

    // `block` and `stmt` recurse once per nesting level, so they stay small;
    // statements without blocks are built in `flat_stmt`.

    fn block(&mut self, block: &SynBlock<'s>) -> RResult<Block> {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for stmt in &block.stmts {
            if let Some(s) = self.stmt(stmt)? {
                stmts.push(s);
            }
        }
        Ok(Block { stmts })
    }

    /// The statement, or None for a declaration (already made).
    fn stmt(&mut self, stmt: &SynStmt<'s>) -> RResult<Option<Stmt>> {
        Ok(Some(match stmt {
            SynStmt::If {
                cond,
                then_body,
                else_body,
                span,
            } => Stmt::If {
                cond: self.operand_of_type(cond, Some(Type::Bool))?,
                then_body: self.block(then_body)?,
                else_body: self.block(else_body)?,
                span: *span,
            },
            SynStmt::Loop { body, span } => Stmt::Loop {
                body: self.block(body)?,
                span: *span,
            },
            SynStmt::Ordered { key, body, span } => Stmt::Ordered {
                key: self.operand_of_type(key, Some(Type::I32))?,
                body: self.block(body)?,
                span: *span,
            },
            flat => return self.flat_stmt(flat),
        }))
    }

    fn flat_stmt(&mut self, stmt: &SynStmt<'s>) -> RResult<Option<Stmt>> {
        Ok(Some(match stmt {
            SynStmt::Var { .. } | SynStmt::Private { .. } => return Ok(None),
            SynStmt::Inst(inst) => Stmt::Inst(self.inst(inst)?),
            SynStmt::Break { span } => Stmt::Break { span: *span },
            SynStmt::Continue { span } => Stmt::Continue { span: *span },
            SynStmt::Kill { span } => Stmt::Kill { span: *span },
            SynStmt::Return { values, span } => {
                let mut operands = Vec::with_capacity(values.len());
                for (i, v) in values.iter().enumerate() {
                    let ty = self.syn.results.get(i).copied();
                    operands.push(self.operand_of_type(v, ty)?);
                }
                Stmt::Return {
                    values: operands,
                    span: *span,
                }
            }
            SynStmt::If { .. } | SynStmt::Loop { .. } | SynStmt::Ordered { .. } => {
                return self.stmt(stmt)
            }
        }))
    }

    /// An operand where a bare literal takes type `bare` (or cannot be typed).
    fn operand_of_type(&self, o: &SynOperand<'s>, bare: Option<Type>) -> RResult<Operand> {
        match self.arg(o)? {
            Arg::Known(operand, _) => Ok(operand),
            Arg::Bare(lit) => self.type_literal(lit, bare),
        }
    }

    fn type_literal(&self, lit: Literal<'s>, ty: Option<Type>) -> RResult<Operand> {
        let ty = ty.ok_or_else(|| Diagnostic::new(lit.span, CANNOT_INFER))?;
        literal_const(lit.form, ty)
            .map(Operand::Const)
            .map_err(|m| Diagnostic::new(lit.span, m))
    }

    fn arg(&self, o: &SynOperand<'s>) -> RResult<Arg<'s>> {
        let scope = self.scope;
        Ok(match o.kind {
            SynOperandKind::Value(name) => {
                if let Some(&id) = self.value_ids.get(name.text) {
                    Arg::Known(Operand::Value(id), self.values[id.0 as usize].ty)
                } else if let Some(&p) = scope.params.get(name.text) {
                    let ty = scope.module.params[p.0 as usize].ty;
                    Arg::Known(Operand::Param(p), ty)
                } else {
                    return Err(self.unknown_value(name));
                }
            }
            SynOperandKind::Var(name) => match self.var_ids.get(name.text) {
                Some(&id) => Arg::Known(Operand::Var(id), self.vars[id.0 as usize].ty),
                None => return Err(self.unknown_var(name)),
            },
            SynOperandKind::Literal(lit) => match (lit.ty, lit.form) {
                (Some(ty), form) => {
                    let c = literal_const(form, ty).map_err(|m| Diagnostic::new(o.span, m))?;
                    Arg::Known(Operand::Const(c), ty)
                }
                (None, LitForm::Bool(b)) => Arg::Known(Operand::Const(Const::bool(b)), Type::Bool),
                (None, _) => Arg::Bare(lit),
            },
        })
    }

    fn unknown_value(&self, name: Name<'s>) -> Diagnostic {
        let message = match find_definition(&self.syn.body, name.text) {
            Some(def) => format!(
                "`%{}` is used before its definition at {}; a value must be defined before its uses",
                name.text,
                self.scope.location(def)
            ),
            None => format!("unknown value `%{}`", name.text),
        };
        Diagnostic::new(name.span, message)
    }

    fn unknown_var(&self, name: Name<'s>) -> Diagnostic {
        Diagnostic::new(name.span, format!("unknown variable `${}`", name.text))
            .with_note(format!("declare it with `var ${}: TYPE`", name.text))
    }

    fn mem_ref(&self, name: Name<'s>) -> RResult<MemRef> {
        if let Some(&i) = self.private_ids.get(name.text) {
            return Ok(MemRef::Private(i));
        }
        match self.scope.globals.get(name.text) {
            Some((Global::Buffer(i), _)) => Ok(MemRef::Buffer(*i)),
            Some((Global::Shared(i), _)) => Ok(MemRef::Shared(*i)),
            Some((g, _)) => Err(Diagnostic::new(
                name.span,
                format!(
                    "expected a buffer, shared or private array, found `@{}`, which is {}",
                    name.text,
                    g.describe()
                ),
            )),
            None => Err(Diagnostic::new(
                name.span,
                format!(
                    "unknown memory `@{}`; expected a buffer, shared or private array",
                    name.text
                ),
            )),
        }
    }

    fn callee(&self, name: Name<'s>) -> RResult<u32> {
        match self.scope.globals.get(name.text) {
            Some((Global::Function(i), _)) => Ok(*i),
            Some((g, _)) => Err(Diagnostic::new(
                name.span,
                format!(
                    "expected a function, found `@{}`, which is {}",
                    name.text,
                    g.describe()
                ),
            )),
            None if self.private_ids.contains_key(name.text) => Err(Diagnostic::new(
                name.span,
                format!(
                    "expected a function, found `@{}`, which is a private array",
                    name.text
                ),
            )),
            None => Err(Diagnostic::new(
                name.span,
                format!("unknown function `@{}`", name.text),
            )),
        }
    }

    fn inst(&mut self, inst: &SynInst<'s>) -> RResult<Inst> {
        let op = match &inst.op {
            SynOp::Plain(op) => op.clone(),
            SynOp::Memory { mnemonic, mem } => {
                let mem = self.mem_ref(*mem)?;
                Op::from_memory_mnemonic(mnemonic, mem)
                    .expect("the parser accepts only valid memory mnemonics")
            }
            SynOp::Call { callee } => Op::Call(self.callee(*callee)?),
        };
        let sig = match op {
            Op::Call(i) => op.signature(Some(&self.scope.sigs[i as usize])),
            _ => op.signature(None),
        };
        let mut args = Vec::with_capacity(inst.args.len());
        for a in &inst.args {
            args.push(self.arg(a)?);
        }
        let mut places = Vec::with_capacity(inst.results.len());
        for p in &inst.results {
            places.push(match *p {
                SynPlace::Var(name) => match self.var_ids.get(name.text) {
                    Some(&id) => PendingPlace::Var(id, self.vars[id.0 as usize].ty),
                    None => return Err(self.unknown_var(name)),
                },
                SynPlace::Value(name) => PendingPlace::Value(name),
            });
        }
        let var_results: Vec<Option<Type>> = places
            .iter()
            .map(|p| match p {
                PendingPlace::Var(_, ty) => Some(*ty),
                PendingPlace::Value(_) => None,
            })
            .collect();
        let t = infer_t(&sig, &args, &var_results);
        let mut operands = Vec::with_capacity(args.len());
        for (i, arg) in args.into_iter().enumerate() {
            operands.push(match arg {
                Arg::Known(o, _) => o,
                Arg::Bare(lit) => {
                    let ty = sig.operands.get(i).and_then(|slot| bare_type(*slot, t));
                    self.type_literal(lit, ty)?
                }
            });
        }
        let mut results = Vec::with_capacity(places.len());
        for (i, place) in places.into_iter().enumerate() {
            results.push(match place {
                PendingPlace::Var(id, _) => Place::Var(id),
                PendingPlace::Value(name) => {
                    let ty = sig
                        .results
                        .get(i)
                        .and_then(|slot| bare_type(*slot, t))
                        .unwrap_or_else(|| class_default(sig.t_class));
                    Place::Value(self.define_value(name, ty, name.span)?)
                }
            });
        }
        Ok(Inst {
            op,
            args: operands,
            results,
            span: inst.span,
        })
    }
}

/// The type `T` of an instruction: from the first operand in a `T` slot that
/// is not a bare literal, else from a variable assigned from a `T` result,
/// else from a class of exactly one type.
fn infer_t(sig: &Signature, args: &[Arg<'_>], var_results: &[Option<Type>]) -> Option<Type> {
    let known: Vec<Option<Type>> = args
        .iter()
        .map(|a| match a {
            Arg::Known(_, ty) => Some(*ty),
            _ => None,
        })
        .collect();
    sig.infer_t(&known, var_results)
}

/// The type a bare literal (or a new value) in `slot` takes when `T` is `t`.
pub(crate) fn bare_type(slot: Slot, t: Option<Type>) -> Option<Type> {
    match slot {
        Slot::T => t,
        Slot::Fixed(ty) => Some(ty),
        Slot::Addr => Some(Type::I32),
        Slot::Stored(format) => Some(format.register_type()),
    }
}

/// A value type for a `T` result when nothing fixes `T` (the instruction is
/// then ill-typed and the verifier says so).
pub(crate) fn class_default(class: TypeClass) -> Type {
    match class {
        TypeClass::Float => Type::F32,
        TypeClass::Exact(ty) => ty,
        _ => Type::I32,
    }
}

/// Where `%name` is defined in `block`, if anywhere.
fn find_definition(block: &SynBlock<'_>, name: &str) -> Option<Span> {
    block.stmts.iter().find_map(|s| match s {
        SynStmt::Inst(inst) => inst.results.iter().find_map(|p| match p {
            SynPlace::Value(n) if n.text == name => Some(n.span),
            _ => None,
        }),
        SynStmt::If {
            then_body,
            else_body,
            ..
        } => find_definition(then_body, name).or_else(|| find_definition(else_body, name)),
        SynStmt::Loop { body, .. } | SynStmt::Ordered { body, .. } => find_definition(body, name),
        _ => None,
    })
}
