//! Checks of one instruction: references, op-specific rules and typing
//! against [`Op::signature`].

use super::{Effect, FnChecker};
use crate::module::{Inst, Operand, Place};
use crate::ops::{AtomOp, FuncSig, MemFormat, MemRef, NumFormat, Op, Slot, TypeClass};
use crate::span::Span;
use crate::types::Type;

/// One operand or result position being typed.
struct Position {
    slot: Slot,
    ty: Option<Type>,
    /// How the message names the position ("operand 2 of `add` (%y)").
    label: String,
}

impl FnChecker<'_> {
    pub(super) fn inst(&mut self, inst: &Inst) {
        let span = inst.span;
        let mnemonic = self.mnemonic(&inst.op);
        let mut typable = true;
        let mut callee: Option<FuncSig> = None;
        match &inst.op {
            Op::Call(c) => {
                callee = self.callee(*c as usize, span);
                typable = callee.is_some();
            }
            Op::Load { mem, format } | Op::Store { mem, format } => {
                self.mem_ref(*mem, &mnemonic, span);
                self.mem_format(*format, &mnemonic, span);
            }
            Op::Atom { mem, op, format } => {
                if self.mem_ref(*mem, &mnemonic, span) {
                    if let MemRef::Private(_) = mem {
                        let name = self.mem_name(*mem);
                        self.error(
                            span,
                            format!(
                                "`{mnemonic}` on private array {name}: atomics work on buffers and shared memory only"
                            ),
                        );
                    }
                }
                self.atom_format(*op, *format, &mnemonic, span);
            }
            Op::Barrier => {
                self.note_effect(Effect::Barrier);
                if self.in_ordered() {
                    self.error(span, "`barrier` inside an ordered section".into());
                }
            }
            _ => {}
        }

        let arg_types: Vec<Option<Type>> =
            inst.args.iter().map(|a| self.operand(a, span)).collect();
        let result_types: Vec<Option<Type>> =
            inst.results.iter().map(|p| self.place(p, span)).collect();
        self.check_assigned_once(&inst.results, &mnemonic, span);

        if typable {
            let sig = inst.op.signature(callee.as_ref());
            self.check_counts(inst, &sig, &mnemonic);
            let mut positions = Vec::new();
            for (i, (slot, ty)) in sig.operands.iter().zip(&arg_types).enumerate() {
                positions.push(Position {
                    slot: *slot,
                    ty: *ty,
                    label: format!(
                        "{} of `{mnemonic}` ({})",
                        operand_label(&inst.op, i),
                        self.operand_name(&inst.args[i])
                    ),
                });
            }
            for (i, (slot, ty)) in sig.results.iter().zip(&result_types).enumerate() {
                positions.push(Position {
                    slot: *slot,
                    ty: *ty,
                    label: format!(
                        "result {} of `{mnemonic}` ({})",
                        i + 1,
                        self.place_name(&inst.results[i])
                    ),
                });
            }
            self.check_positions(&positions, sig.t_class, span);
        }

        if let Op::Bitcast(to) = inst.op {
            if let (Some(Some(from)), Some(arg)) = (arg_types.first(), inst.args.first()) {
                self.check_bitcast(*from, to, arg, span);
            }
        }

        for p in &inst.results {
            if let Place::Value(v) = p {
                if (v.0 as usize) < self.f.values.len() {
                    self.define_value(*v, span);
                }
            }
        }
    }

    /// The mnemonic as messages show it (`add`, `load.f32`, `call @f`).
    fn mnemonic(&self, op: &Op) -> String {
        match op {
            Op::Call(c) => match self.m.functions.get(*c as usize) {
                Some(g) => format!("call @{}", g.name),
                None => "call".into(),
            },
            _ => op.mnemonic(),
        }
    }

    /// Checks the callee; returns its signature when the call can be typed.
    fn callee(&mut self, c: usize, span: Span) -> Option<FuncSig> {
        let Some(g) = self.m.functions.get(c) else {
            self.error(
                span,
                format!(
                    "`call` of function #{c}, but the module has {} functions",
                    self.m.functions.len()
                ),
            );
            return None;
        };
        if g.is_kernel() {
            self.error(
                span,
                format!(
                    "`call @{}`: @{} is a kernel; only `func`s can be called",
                    g.name, g.name
                ),
            );
            return None;
        }
        self.facts.calls.push((c, span));
        if self.in_ordered() {
            self.facts.ordered_calls.push((c, span));
        }
        self.sigs.get(c).cloned().flatten()
    }

    fn mem_name(&self, mem: MemRef) -> String {
        match self.m.memory_name(self.f, mem) {
            Some(n) => format!("@{n}"),
            None => "a missing array".into(),
        }
    }

    /// Checks that the memory reference is in range.
    fn mem_ref(&mut self, mem: MemRef, mnemonic: &str, span: Span) -> bool {
        let (what, index, count, owner) = match mem {
            MemRef::Buffer(i) => ("buffer", i, self.m.buffers.len(), "the module"),
            MemRef::Shared(i) => ("shared array", i, self.m.shared.len(), "the module"),
            MemRef::Private(i) => ("private array", i, self.f.privates.len(), "the function"),
        };
        if (index as usize) < count {
            return true;
        }
        self.error(
            span,
            format!("`{mnemonic}` refers to {what} #{index}, but {owner} declares {count}"),
        );
        false
    }

    fn mem_format(&mut self, format: MemFormat, mnemonic: &str, span: Span) {
        if format.is_valid() {
            return;
        }
        let msg = if matches!(format.count, 2 | 4) {
            format!(
                "`{mnemonic}`: x2 and x4 accesses need 32- or 64-bit elements, not {}",
                format.elem.name()
            )
        } else {
            format!(
                "`{mnemonic}`: a memory access has 1, 2 or 4 components, not {}",
                format.count
            )
        };
        self.error(span, msg);
    }

    fn atom_format(&mut self, op: AtomOp, format: NumFormat, mnemonic: &str, span: Span) {
        if op.allows(format) {
            return;
        }
        let allowed: Vec<&str> = NumFormat::ALL
            .into_iter()
            .filter(|f| op.allows(*f))
            .map(|f| f.name())
            .collect();
        self.error(
            span,
            format!(
                "`{mnemonic}`: NV_gpu_program5's ATOM table allows `{}` only with {}",
                op.name(),
                join_or(&allowed)
            ),
        );
    }

    /// An instruction may not write the same variable twice: which write
    /// would win is not worth defining.
    fn check_assigned_once(&mut self, results: &[Place], mnemonic: &str, span: Span) {
        for (i, p) in results.iter().enumerate() {
            let Place::Var(v) = p else { continue };
            let earlier = results[..i].iter().filter(|q| *q == p).count();
            if earlier == 1 && (v.0 as usize) < self.f.vars.len() {
                let name = self.place_name(p);
                self.error(span, format!("`{mnemonic}` assigns {name} more than once"));
            }
        }
    }

    fn check_counts(&mut self, inst: &Inst, sig: &crate::ops::Signature, mnemonic: &str) {
        let memory = matches!(
            inst.op,
            Op::Load { .. } | Op::Store { .. } | Op::Atom { .. }
        );
        let n = inst.args.len();
        if n < sig.min_operands || n > sig.operands.len() {
            let expected = count_range(sig.min_operands, sig.operands.len());
            let after = if memory { " after the memory name" } else { "" };
            let noun = if sig.operands.len() == 1 {
                "operand"
            } else {
                "operands"
            };
            self.error(
                inst.span,
                format!("`{mnemonic}` takes {expected} {noun}{after}, found {n}"),
            );
        }
        let n = inst.results.len();
        if n < sig.min_results || n > sig.results.len() {
            let msg = if sig.results.is_empty() {
                format!("`{mnemonic}` defines no results, found {n}")
            } else {
                let expected = count_range(sig.min_results, sig.results.len());
                let noun = if sig.results.len() == 1 {
                    "result"
                } else {
                    "results"
                };
                format!("`{mnemonic}` defines {expected} {noun}, found {n}")
            };
            self.error(inst.span, msg);
        }
    }

    /// Types every position against its slot; the first `T` position whose
    /// type is in the class fixes `T` for the others.
    fn check_positions(&mut self, positions: &[Position], class: TypeClass, span: Span) {
        let mut t: Option<(Type, &str)> = None;
        for p in positions {
            let Some(ty) = p.ty else { continue };
            let expected = match p.slot {
                Slot::T => match t {
                    Some((bound, origin)) => (ty != bound).then(|| {
                        let origin = origin.split(" of `").next().unwrap_or(origin);
                        format!("{bound} (the type of {origin})")
                    }),
                    None if class.contains(ty) => {
                        t = Some((ty, &p.label));
                        None
                    }
                    None => Some(class.describe()),
                },
                Slot::Fixed(f) => (ty != f).then(|| f.to_string()),
                Slot::Addr => {
                    (ty != Type::I32 && ty != Type::I64).then(|| "i32 or i64".to_string())
                }
                Slot::Stored(format) => {
                    let register = format.register_type();
                    let exact = format.ir_type();
                    (ty != register && ty != exact).then(|| {
                        if register == exact {
                            register.to_string()
                        } else {
                            format!("{register} or {exact}")
                        }
                    })
                }
            };
            if let Some(expected) = expected {
                self.error(
                    span,
                    format!("{} has type {ty}, expected {expected}", p.label),
                );
            }
        }
    }

    fn check_bitcast(&mut self, from: Type, to: Type, arg: &Operand, span: Span) {
        let name = self.operand_name(arg);
        if from == Type::Bool || to == Type::Bool {
            self.error(
                span,
                format!("`bitcast.{to}` of {name} ({from}): bool values cannot be bitcast"),
            );
        } else if from.bits() != to.bits() {
            self.error(
                span,
                format!(
                    "`bitcast.{to}` needs a {}-bit operand, found {name} of type {from} ({} bits)",
                    to.bits(),
                    from.bits()
                ),
            );
        }
    }
}

/// How position `i` (0-based) of an op's operands is named in messages.
fn operand_label(op: &Op, i: usize) -> String {
    match op {
        Op::Load { .. } | Op::Store { .. } | Op::Atom { .. } if i == 0 => "the address".into(),
        Op::Store { .. } => format!("stored value {i}"),
        Op::Atom {
            op: AtomOp::Cswap, ..
        } => {
            if i == 1 {
                "the compare value".into()
            } else {
                "the new value".into()
            }
        }
        Op::Atom { .. } => "the operand".into(),
        Op::Call(_) => format!("argument {}", i + 1),
        _ => format!("operand {}", i + 1),
    }
}

fn count_range(min: usize, max: usize) -> String {
    match max - min {
        0 => max.to_string(),
        1 => format!("{min} or {max}"),
        _ => format!("{min} to {max}"),
    }
}

/// "a", "a or b", "a, b or c".
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
