//! Across a fixed seed range the generator uses every op variant, every
//! type its class allows, every `cvt` pair and rounding mode, every memory
//! format on every kind of memory, and every statement kind.

use std::collections::BTreeSet;
use warpjit_ir::generate::{generate, GenConfig, SplitMix64};
use warpjit_ir::*;

const SEEDS: u64 = 1500;

fn mem_kind(m: &MemRef) -> &'static str {
    match m {
        MemRef::Buffer(_) => "buffer",
        MemRef::Shared(_) => "shared",
        MemRef::Private(_) => "private",
    }
}

fn operand_form(o: &Operand) -> &'static str {
    match o {
        Operand::Const(_) => "const",
        _ => "varying",
    }
}

/// The coverage keys of one instruction.
fn inst_keys(m: &Module, f: &Function, i: &Inst, keys: &mut BTreeSet<String>) {
    let ty = |k: usize| m.operand_type(f, &i.args[k]);
    let key = match &i.op {
        Op::Unary(_) | Op::Binary(_) | Op::Cmp(_) | Op::Mov | Op::Fma | Op::Tg(_) => {
            format!("{} {}", i.op.mnemonic(), ty(0))
        }
        Op::Select => format!("select {}", ty(1)),
        Op::Bfe { .. } | Op::Bfi => format!("{} {}", i.op.mnemonic(), ty(0)),
        Op::Bitcast(to) => format!("bitcast {} {}", ty(0), to),
        Op::Vote { .. } => format!(
            "{} guarded={} results={}",
            i.op.mnemonic(),
            matches!(i.op, Op::Vote { guarded: true, .. }),
            i.results.len()
        ),
        Op::Shuffle { form, .. } => {
            keys.insert(format!("shuffle index {}", operand_form(&i.args[1])));
            keys.insert(format!("shuffle {form:?} {}", operand_form(&i.args[2])));
            format!(
                "{} {form:?} {} results={}",
                i.op.mnemonic(),
                ty(0),
                i.results.len()
            )
        }
        Op::Quad(_) => format!("{} operands={}", i.op.mnemonic(), i.args.len()),
        Op::Load { mem, .. } => format!("{} {}", i.op.mnemonic(), mem_kind(mem)),
        Op::Store { mem, format } => {
            if i.args[1..]
                .iter()
                .any(|a| m.operand_type(f, a) != format.elem.register_type())
            {
                keys.insert(format!("store exact {}", format.elem.name()));
            }
            format!("{} {}", i.op.mnemonic(), mem_kind(mem))
        }
        Op::Atom { mem, .. } => format!("{} {}", i.op.mnemonic(), mem_kind(mem)),
        Op::Call(callee) => {
            if has_barrier(&m.functions[*callee as usize]) {
                keys.insert("call of a function with barriers".into());
            }
            format!("call results={}", i.results.len().min(1))
        }
        Op::Barrier if !matches!(f.kind, FuncKind::Kernel { .. }) => "barrier in a function".into(),
        _ => i.op.mnemonic(),
    };
    keys.insert(key);
    if let Op::Load { mem, .. } | Op::Store { mem, .. } | Op::Atom { mem, .. } = &i.op {
        if *mem == MemRef::Shared(1) {
            keys.insert(format!("{} second shared array", i.op.mnemonic()));
        }
    }
    if i.args.iter().any(|a| matches!(a, Operand::Param(_))) {
        keys.insert("module parameter operand".into());
    }
    if i.results.iter().any(|r| matches!(r, Place::Var(_))) {
        keys.insert("variable result".into());
    }
}

fn has_barrier(f: &Function) -> bool {
    let mut found = false;
    walk_block(&f.body, &mut |s| {
        found |= matches!(
            s,
            Stmt::Inst(Inst {
                op: Op::Barrier,
                ..
            })
        );
    });
    found
}

fn stmt_key(s: &Stmt) -> Option<String> {
    Some(match s {
        Stmt::Inst(_) => return None,
        Stmt::If { else_body, .. } => format!("if else={}", !else_body.stmts.is_empty()),
        Stmt::Loop { .. } => "loop".into(),
        Stmt::Break { .. } => "break".into(),
        Stmt::Continue { .. } => "continue".into(),
        Stmt::Return { values, .. } => format!("return values={}", !values.is_empty()),
        Stmt::Kill { .. } => "kill".into(),
        Stmt::Ordered { .. } => "ordered".into(),
    })
}

fn expected_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let register = [Type::Bool, Type::I32, Type::I64, Type::F32, Type::F64];
    let typed_ops: Vec<Op> = all_unary()
        .map(Op::Unary)
        .chain(all_binary().map(Op::Binary))
        .chain(all_cmp().map(Op::Cmp))
        .chain([
            Op::Mov,
            Op::Fma,
            Op::Select,
            Op::Bfe { signed: true },
            Op::Bfe { signed: false },
            Op::Bfi,
        ])
        .chain([TgOp::All, TgOp::Any, TgOp::Eq, TgOp::Ballot].map(Op::Tg))
        .collect();
    for op in typed_ops {
        let class = op.signature(None).t_class;
        // Narrow types only where any type goes (mov, select, cmp.eq/ne).
        let types: &[Type] = if class == TypeClass::Any {
            &Type::ALL
        } else {
            &register
        };
        for t in types.iter().filter(|t| class.contains(**t)) {
            let name = if op == Op::Select {
                "select".into()
            } else {
                op.mnemonic()
            };
            keys.insert(format!("{name} {t}"));
        }
    }
    for src in NumFormat::ALL {
        for dst in NumFormat::ALL {
            for round in [Round::Nearest, Round::Ceil, Round::Floor, Round::Trunc] {
                keys.insert(Op::Cvt { dst, src, round }.mnemonic());
            }
        }
    }
    for from in Type::ALL {
        for to in Type::ALL {
            if from != Type::Bool && to != Type::Bool && from.bits() == to.bits() {
                keys.insert(format!("bitcast {from} {to}"));
            }
        }
    }
    for t in Type::ALL {
        keys.insert(format!("param {t}"));
        keys.insert(format!("function parameter {t}"));
    }
    for b in Builtin::all() {
        keys.insert(b.name());
    }
    for name in [
        "pk64",
        "up64",
        "active_mask",
        "ballot",
        "demote",
        "membar",
        "barrier",
    ] {
        keys.insert(name.into());
    }
    for op in ["all", "any", "eq"] {
        for guarded in [false, true] {
            for results in [1, 2] {
                keys.insert(format!("vote.{op} guarded={guarded} results={results}"));
            }
        }
    }
    for mode in [
        ShuffleMode::Idx,
        ShuffleMode::Up,
        ShuffleMode::Down,
        ShuffleMode::Xor,
    ] {
        for form in [ShuffleForm::Width, ShuffleForm::Mask] {
            for t in [Type::Bool, Type::I32, Type::F32] {
                for results in [1, 2] {
                    keys.insert(format!(
                        "shuffle.{} {form:?} {t} results={results}",
                        mode.name()
                    ));
                }
            }
            for operand in ["const", "varying"] {
                keys.insert(format!("shuffle {form:?} {operand}"));
            }
        }
    }
    keys.insert("shuffle index const".into());
    keys.insert("shuffle index varying".into());
    for q in ["0", "1", "2", "3", "x", "y"] {
        for operands in [1, 2] {
            keys.insert(format!("quad.{q} operands={operands}"));
        }
    }
    for d in ["ddx.fine", "ddx.coarse", "ddy.fine", "ddy.coarse"] {
        keys.insert(d.into());
    }
    for mem in ["buffer", "shared", "private"] {
        for elem in NumFormat::ALL {
            for count in [1u8, 2, 4] {
                let format = MemFormat { elem, count };
                if format.is_valid() {
                    keys.insert(format!("load.{} {mem}", format.name()));
                    keys.insert(format!("store.{} {mem}", format.name()));
                }
            }
        }
        if mem != "private" {
            for op in AtomOp::ALL {
                for f in NumFormat::ALL.into_iter().filter(|f| op.allows(*f)) {
                    keys.insert(format!("atom.{}.{} {mem}", op.name(), f.name()));
                }
            }
        }
    }
    for elem in [
        NumFormat::S8,
        NumFormat::U8,
        NumFormat::S16,
        NumFormat::U16,
        NumFormat::F16,
    ] {
        keys.insert(format!("store exact {}", elem.name()));
    }
    for k in [
        "if else=false",
        "if else=true",
        "loop",
        "break",
        "continue",
        "return values=false",
        "return values=true",
        "kill",
        "ordered",
        "call results=0",
        "call results=1",
        "module parameter operand",
        "variable result",
        "barrier in a function",
        "call of a function with barriers",
        "load.u32 second shared array",
        "store.u32 second shared array",
        "atom.add.u32 second shared array",
    ] {
        keys.insert(k.into());
    }
    keys
}

#[test]
fn every_op_variant_appears_across_the_seed_range() {
    let cfg = GenConfig::default();
    let expected = expected_keys();
    let mut seen = BTreeSet::new();
    for seed in 0..SEEDS {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        for p in &m.params {
            seen.insert(format!("param {}", p.ty));
        }
        for f in &m.functions {
            for p in &f.params {
                seen.insert(format!("function parameter {}", f.values[p.0 as usize].ty));
            }
            walk_block(&f.body, &mut |s| {
                if let Stmt::Inst(i) = s {
                    inst_keys(&m, f, i, &mut seen);
                }
                if let Some(k) = stmt_key(s) {
                    seen.insert(k);
                }
            });
        }
    }
    let missing: Vec<&String> = expected.difference(&seen).collect();
    assert!(
        missing.is_empty(),
        "{} of {} never generated: {missing:#?}",
        missing.len(),
        expected.len()
    );
}
