//! The canonical text of a module.
//!
//! A literal gets a `:type` suffix exactly when the parser would not give it
//! its type back from context, so the printed text parses to the same
//! module. The printer never panics: ids that point nowhere print as `?N`
//! (such a module does not parse back, but it can still be looked at).

use super::literal::format_const;
use super::resolve::bare_type;
use crate::module::*;
use crate::ops::{FuncSig, Op, ShuffleForm, Signature, Slot};
use crate::types::Type;
use std::fmt::Write;

/// The canonical text of `module` (see docs/text-format.md).
///
/// `parse(&print(m)) == Ok(m)` holds for every module `parse` returns. A
/// module built another way round-trips when it looks like one the parser
/// could have built: valid names, unique in their scope; values numbered in
/// order of definition (parameters first, then results in text order); each
/// value typed as its op's signature says; constants made with
/// [`Const::new`](crate::types::Const::new); shuffles with three operands.
pub fn print(module: &Module) -> String {
    let mut out = String::new();
    for p in &module.params {
        let _ = writeln!(out, "param %{}: {}", p.name, p.ty);
    }
    for b in &module.buffers {
        let _ = writeln!(out, "buffer @{}[{}]: {}", b.name, b.binding, b.elem.name());
    }
    for s in &module.shared {
        let _ = writeln!(out, "shared @{}[{}]", s.name, s.size);
    }
    for f in &module.functions {
        if !out.is_empty() {
            out.push('\n');
        }
        FunctionPrinter {
            module,
            func: f,
            out: &mut out,
        }
        .function();
    }
    out
}

struct FunctionPrinter<'a> {
    module: &'a Module,
    func: &'a Function,
    out: &'a mut String,
}

/// What the suffix rule needs to know about an operand.
#[derive(Clone, Copy)]
enum ArgKind {
    /// A value, variable, parameter or bool literal: its type is evident.
    SelfTyped(Type),
    /// A literal of another type: bare, it takes the type of its position.
    Literal(Type),
}

impl FunctionPrinter<'_> {
    fn function(&mut self) {
        let f = self.func;
        match f.kind {
            FuncKind::Kernel { workgroup } => {
                let _ = write!(self.out, "kernel @{}", f.name);
                if let Some([x, y, z]) = workgroup {
                    let dims = match (y, z) {
                        (1, 1) => format!("{x}"),
                        (_, 1) => format!("{x}, {y}"),
                        _ => format!("{x}, {y}, {z}"),
                    };
                    let _ = write!(self.out, " workgroup({dims})");
                }
            }
            FuncKind::Function => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| format!("%{}: {}", self.value_name(*p), self.value_type(*p)))
                    .collect();
                let _ = write!(self.out, "func @{}({})", f.name, params.join(", "));
                match f.results.as_slice() {
                    [] => {}
                    [t] => {
                        let _ = write!(self.out, " -> {t}");
                    }
                    many => {
                        let names: Vec<&str> = many.iter().map(|t| t.name()).collect();
                        let _ = write!(self.out, " -> ({})", names.join(", "));
                    }
                }
            }
        }
        self.out.push_str(" {\n");
        for v in &f.vars {
            let _ = writeln!(self.out, "  var ${}: {}", v.name, v.ty);
        }
        for p in &f.privates {
            let _ = writeln!(self.out, "  private @{}[{}]", p.name, p.size);
        }
        self.stmts(&f.body, 1);
        self.out.push_str("}\n");
    }

    fn stmts(&mut self, block: &Block, indent: usize) {
        for s in &block.stmts {
            self.out.push_str(&"  ".repeat(indent));
            self.stmt(s, indent);
            self.out.push('\n');
        }
    }

    /// `{ ... }` with the closing brace at `indent`.
    fn block(&mut self, block: &Block, indent: usize) {
        if block.stmts.is_empty() {
            self.out.push_str("{}");
            return;
        }
        self.out.push_str("{\n");
        self.stmts(block, indent + 1);
        self.out.push_str(&"  ".repeat(indent));
        self.out.push('}');
    }

    fn stmt(&mut self, stmt: &Stmt, indent: usize) {
        match stmt {
            Stmt::Inst(inst) => self.inst(inst),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let cond = self.fixed_operand(cond, Some(Type::Bool));
                let _ = write!(self.out, "if {cond} ");
                self.block(then_body, indent);
                match else_body.stmts.as_slice() {
                    [] => {}
                    [nested @ Stmt::If { .. }] => {
                        self.out.push_str(" else ");
                        self.stmt(nested, indent);
                    }
                    _ => {
                        self.out.push_str(" else ");
                        self.block(else_body, indent);
                    }
                }
            }
            Stmt::Loop { body, .. } => {
                self.out.push_str("loop ");
                self.block(body, indent);
            }
            Stmt::Break { .. } => self.out.push_str("break"),
            Stmt::Continue { .. } => self.out.push_str("continue"),
            Stmt::Kill { .. } => self.out.push_str("kill"),
            Stmt::Return { values, .. } => {
                self.out.push_str("return");
                let texts: Vec<String> = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.fixed_operand(v, self.func.results.get(i).copied()))
                    .collect();
                if !texts.is_empty() {
                    let _ = write!(self.out, " {}", texts.join(", "));
                }
            }
            Stmt::Ordered { key, body, .. } => {
                let key = self.fixed_operand(key, Some(Type::I32));
                let _ = write!(self.out, "ordered {key} ");
                self.block(body, indent);
            }
        }
    }

    fn inst(&mut self, inst: &Inst) {
        if !inst.results.is_empty() {
            let places: Vec<String> = inst.results.iter().map(|p| self.place(*p)).collect();
            let _ = write!(self.out, "{} = ", places.join(", "));
        }
        let sig = self.signature(&inst.op);
        let kinds: Vec<ArgKind> = inst.args.iter().map(|a| self.arg_kind(a)).collect();
        let var_results: Vec<Option<Type>> = inst
            .results
            .iter()
            .map(|p| match p {
                Place::Var(v) => Some(self.var_type(*v)),
                Place::Value(_) => None,
            })
            .collect();
        let suffixes = literal_suffixes(sig.as_ref(), &kinds, &var_results);
        let mut args: Vec<String> = inst
            .args
            .iter()
            .zip(&suffixes)
            .map(|(a, suffix)| self.operand(a, *suffix))
            .collect();
        match inst.op {
            Op::Shuffle { form, .. } if args.len() > 2 => {
                let label = match form {
                    ShuffleForm::Width => "width",
                    ShuffleForm::Mask => "mask",
                };
                args[2] = format!("{label} {}", args[2]);
            }
            Op::Vote { guarded: true, .. } if args.len() > 1 => {
                args[1] = format!("guard {}", args[1]);
            }
            _ => {}
        }
        let mnemonic = inst.op.mnemonic();
        match &inst.op {
            Op::Call(callee) => {
                let name = match self.module.functions.get(*callee as usize) {
                    Some(f) => f.name.clone(),
                    None => format!("?{callee}"),
                };
                let _ = write!(self.out, "call @{name}({})", args.join(", "));
            }
            Op::Load { mem, .. } | Op::Store { mem, .. } | Op::Atom { mem, .. } => {
                let name = self.mem_name(*mem);
                args.insert(0, format!("@{name}"));
                let _ = write!(self.out, "{mnemonic} {}", args.join(", "));
            }
            _ if args.is_empty() => self.out.push_str(&mnemonic),
            _ => {
                let _ = write!(self.out, "{mnemonic} {}", args.join(", "));
            }
        }
    }

    fn signature(&self, op: &Op) -> Option<Signature> {
        match op {
            Op::Call(i) => {
                let callee = self.module.functions.get(*i as usize)?;
                let sig = FuncSig {
                    params: callee
                        .params
                        .iter()
                        .map(|p| match callee.values.get(p.0 as usize) {
                            Some(d) => d.ty,
                            None => Type::I32,
                        })
                        .collect(),
                    results: callee.results.clone(),
                };
                Some(op.signature(Some(&sig)))
            }
            _ => Some(op.signature(None)),
        }
    }

    fn arg_kind(&self, o: &Operand) -> ArgKind {
        match o {
            Operand::Const(c) if c.ty != Type::Bool => ArgKind::Literal(c.ty),
            _ => ArgKind::SelfTyped(self.operand_type(o)),
        }
    }

    /// An operand in a position of fixed type `bare` (if, ordered, return).
    fn fixed_operand(&self, o: &Operand, bare: Option<Type>) -> String {
        let suffix = match self.arg_kind(o) {
            ArgKind::Literal(ty) => bare != Some(ty),
            ArgKind::SelfTyped(_) => false,
        };
        self.operand(o, suffix)
    }

    fn operand(&self, o: &Operand, suffix: bool) -> String {
        match o {
            Operand::Value(v) => format!("%{}", self.value_name(*v)),
            Operand::Var(v) => match self.func.vars.get(v.0 as usize) {
                Some(d) => format!("${}", d.name),
                None => format!("$?{}", v.0),
            },
            Operand::Param(p) => match self.module.params.get(p.0 as usize) {
                Some(d) => format!("%{}", d.name),
                None => format!("%?{}", p.0),
            },
            Operand::Const(c) if suffix => format!("{}:{}", format_const(*c), c.ty),
            Operand::Const(c) => format_const(*c),
        }
    }

    fn place(&self, p: Place) -> String {
        match p {
            Place::Value(v) => format!("%{}", self.value_name(v)),
            Place::Var(v) => self.operand(&Operand::Var(v), false),
        }
    }

    fn value_name(&self, v: ValueId) -> String {
        match self.func.values.get(v.0 as usize) {
            Some(d) => d.name.clone(),
            None => format!("?{}", v.0),
        }
    }

    fn value_type(&self, v: ValueId) -> Type {
        self.func
            .values
            .get(v.0 as usize)
            .map_or(Type::I32, |d| d.ty)
    }

    fn var_type(&self, v: VarId) -> Type {
        self.func.vars.get(v.0 as usize).map_or(Type::I32, |d| d.ty)
    }

    fn operand_type(&self, o: &Operand) -> Type {
        match o {
            Operand::Value(v) => self.value_type(*v),
            Operand::Var(v) => self.var_type(*v),
            Operand::Param(p) => self
                .module
                .params
                .get(p.0 as usize)
                .map_or(Type::I32, |d| d.ty),
            Operand::Const(c) => c.ty,
        }
    }

    fn mem_name(&self, mem: crate::ops::MemRef) -> String {
        use crate::ops::MemRef;
        let name = match mem {
            MemRef::Buffer(i) => self.module.buffers.get(i as usize).map(|d| &d.name),
            MemRef::Shared(i) => self.module.shared.get(i as usize).map(|d| &d.name),
            MemRef::Private(i) => self.func.privates.get(i as usize).map(|d| &d.name),
        };
        match (name, mem) {
            (Some(n), _) => n.clone(),
            (None, MemRef::Buffer(i) | MemRef::Shared(i) | MemRef::Private(i)) => format!("?{i}"),
        }
    }
}

/// Which operands need a `:type` suffix. Mirrors the parser: `T` comes from
/// the first operand in a `T` slot that is not a bare literal, else from a
/// variable assigned from a `T` result, else from an exact type class; a
/// bare literal elsewhere takes its slot's type.
fn literal_suffixes(
    sig: Option<&Signature>,
    args: &[ArgKind],
    var_results: &[Option<Type>],
) -> Vec<bool> {
    let Some(sig) = sig else {
        return args
            .iter()
            .map(|a| matches!(a, ArgKind::Literal(_)))
            .collect();
    };
    let t_slots: Vec<usize> = (0..args.len())
        .filter(|i| sig.operands.get(*i) == Some(&Slot::T))
        .collect();
    let known: Vec<Option<Type>> = args
        .iter()
        .map(|a| match a {
            ArgKind::SelfTyped(ty) => Some(*ty),
            ArgKind::Literal(_) => None,
        })
        .collect();
    let context = sig.infer_t(&known, var_results);
    // With the literals that differ from the context suffixed, the first
    // operand that is not a bare literal must still have the context's type.
    let consistent = context.filter(|&t| {
        let first_fixed = t_slots.iter().find(|&&i| match args[i] {
            ArgKind::SelfTyped(_) => true,
            ArgKind::Literal(ty) => ty != t,
        });
        !matches!(first_fixed.map(|&i| args[i]), Some(ArgKind::Literal(_)))
    });
    let mut suffixes = vec![false; args.len()];
    let t = match (consistent, t_slots.first()) {
        (Some(t), _) => Some(t),
        // Otherwise the first literal of the T slots says the type.
        (None, Some(&first)) => match args[first] {
            ArgKind::Literal(ty) => {
                suffixes[first] = true;
                Some(ty)
            }
            ArgKind::SelfTyped(ty) => Some(ty),
        },
        (None, None) => None,
    };
    for (i, a) in args.iter().enumerate() {
        if let ArgKind::Literal(ty) = a {
            let bare = sig.operands.get(i).and_then(|slot| bare_type(*slot, t));
            suffixes[i] |= bare != Some(*ty);
        }
    }
    suffixes
}
