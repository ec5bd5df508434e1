//! The verifier on damaged modules: it never panics (RELIABILITY.md: "random
//! modules into the verifier: 0 panics"), and it notices damage that must
//! be an error.

use warpjit_ir::generate::{generate, GenConfig, RngLike, SplitMix64};
use warpjit_ir::verify::verify;
use warpjit_ir::*;

/// Every instruction of a block, depth first.
fn insts_mut<'a>(block: &'a mut Block, out: &mut Vec<&'a mut Inst>) {
    for s in &mut block.stmts {
        match s {
            Stmt::Inst(i) => out.push(i),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                insts_mut(then_body, out);
                insts_mut(else_body, out);
            }
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => insts_mut(body, out),
            _ => {}
        }
    }
}

fn count_blocks(block: &Block) -> usize {
    let mut n = 1;
    walk_block(block, &mut |s| {
        n += match s {
            Stmt::If { .. } => 2,
            Stmt::Loop { .. } | Stmt::Ordered { .. } => 1,
            _ => 0,
        }
    });
    n
}

/// Block number `n` in depth-first order (the block itself is number 0).
fn nth_block<'a>(block: &'a mut Block, n: &mut usize) -> Option<&'a mut Block> {
    if *n == 0 {
        return Some(block);
    }
    *n -= 1;
    for s in &mut block.stmts {
        match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                if let Some(b) = nth_block(then_body, n) {
                    return Some(b);
                }
                if let Some(b) = nth_block(else_body, n) {
                    return Some(b);
                }
            }
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => {
                if let Some(b) = nth_block(body, n) {
                    return Some(b);
                }
            }
            _ => {}
        }
    }
    None
}

fn random_type(rng: &mut SplitMix64) -> Type {
    Type::ALL[rng.below(8) as usize]
}

fn random_operand(rng: &mut SplitMix64, f: &Function, m: &Module) -> Operand {
    match rng.below(4) {
        0 => Operand::Value(ValueId(rng.below(f.values.len() as u64 + 3) as u32)),
        1 => Operand::Var(VarId(rng.below(f.vars.len() as u64 + 2) as u32)),
        2 => Operand::Param(ParamId(rng.below(m.params.len() as u64 + 2) as u32)),
        _ => Operand::Const(Const {
            ty: random_type(rng),
            bits: if rng.chance(80) {
                rng.below(4)
            } else {
                rng.next_u64()
            },
        }),
    }
}

fn random_op(rng: &mut SplitMix64, m: &Module) -> Op {
    let mem = match rng.below(3) {
        0 => MemRef::Buffer(rng.below(5) as u32),
        1 => MemRef::Shared(rng.below(3) as u32),
        _ => MemRef::Private(rng.below(3) as u32),
    };
    let format = MemFormat {
        elem: NumFormat::ALL[rng.below(11) as usize],
        count: rng.below(6) as u8,
    };
    match rng.below(10) {
        0 => Op::Call(rng.below(m.functions.len() as u64 + 2) as u32),
        1 => Op::Load { mem, format },
        2 => Op::Store { mem, format },
        3 => Op::Atom {
            mem,
            op: AtomOp::ALL[rng.below(10) as usize],
            format: format.elem,
        },
        4 => Op::Bitcast(random_type(rng)),
        5 => Op::Barrier,
        6 => Op::Shuffle {
            mode: ShuffleMode::Up,
            form: ShuffleForm::Mask,
        },
        7 => Op::Vote {
            op: VoteOp::Eq,
            guarded: rng.chance(50),
        },
        8 => Op::Unary(
            all_unary()
                .nth(rng.below(21) as usize)
                .expect("21 unary ops"),
        ),
        _ => Op::Quad(QuadSel::Y),
    }
}

fn random_stmt(rng: &mut SplitMix64, m: &Module, f: &Function) -> Stmt {
    let span = Span::NONE;
    match rng.below(7) {
        0 => Stmt::Break { span },
        1 => Stmt::Continue { span },
        2 => Stmt::Return {
            values: (0..rng.below(3))
                .map(|_| random_operand(rng, f, m))
                .collect(),
            span,
        },
        3 => Stmt::Kill { span },
        4 => Stmt::Ordered {
            key: random_operand(rng, f, m),
            body: Block {
                stmts: vec![Stmt::Kill { span }],
            },
            span,
        },
        5 => Stmt::Loop {
            body: Block::default(),
            span,
        },
        _ => Stmt::If {
            cond: random_operand(rng, f, m),
            then_body: Block::default(),
            else_body: Block::default(),
            span,
        },
    }
}

/// Applies one random kind of damage.
fn damage(rng: &mut SplitMix64, m: &mut Module) {
    let fi = rng.below(m.functions.len() as u64) as usize;
    let snapshot = m.clone();
    let f_snapshot = snapshot.functions[fi].clone();
    match rng.below(9) {
        0 | 1 => {
            let mut insts = Vec::new();
            insts_mut(&mut m.functions[fi].body, &mut insts);
            if insts.is_empty() {
                return;
            }
            let i = rng.below(insts.len() as u64) as usize;
            let inst = &mut insts[i];
            if !inst.args.is_empty() && rng.chance(60) {
                let k = rng.below(inst.args.len() as u64) as usize;
                inst.args[k] = random_operand(rng, &f_snapshot, &snapshot);
            } else if !inst.results.is_empty() && rng.chance(50) {
                let k = rng.below(inst.results.len() as u64) as usize;
                inst.results[k] = match random_operand(rng, &f_snapshot, &snapshot) {
                    Operand::Var(v) => Place::Var(v),
                    Operand::Value(v) => Place::Value(v),
                    _ => Place::Value(ValueId(u32::MAX)),
                };
            } else if rng.chance(50) {
                inst.args.push(random_operand(rng, &f_snapshot, &snapshot));
            } else {
                inst.args.pop();
            }
        }
        2 => {
            let mut insts = Vec::new();
            insts_mut(&mut m.functions[fi].body, &mut insts);
            if let Some(inst) = insts.into_iter().nth(rng.below(50) as usize) {
                inst.op = random_op(rng, &snapshot);
            }
        }
        3 => {
            let f = &mut m.functions[fi];
            if !f.values.is_empty() {
                let v = rng.below(f.values.len() as u64) as usize;
                f.values[v].ty = random_type(rng);
            }
        }
        4 | 5 => {
            let body = &mut m.functions[fi].body;
            let mut n = rng.below(count_blocks(body) as u64) as usize;
            let block = nth_block(body, &mut n).expect("n is below the block count");
            let at = rng.below(block.stmts.len() as u64 + 1) as usize;
            match rng.below(3) {
                0 if at < block.stmts.len() => {
                    block.stmts.remove(at);
                }
                1 if at < block.stmts.len() => {
                    let copy = block.stmts[at].clone();
                    block.stmts.insert(at, copy);
                }
                _ => block
                    .stmts
                    .insert(at, random_stmt(rng, &snapshot, &f_snapshot)),
            }
        }
        6 => {
            let f = &mut m.functions[fi];
            match rng.below(4) {
                0 => f
                    .params
                    .push(ValueId(rng.below(f.values.len() as u64 + 3) as u32)),
                1 => f.results.push(random_type(rng)),
                2 => {
                    f.kind = match f.kind {
                        FuncKind::Function => FuncKind::Kernel {
                            workgroup: Some([rng.below(40) as u32, u32::MAX, 0]),
                        },
                        FuncKind::Kernel { .. } => FuncKind::Function,
                    }
                }
                _ => f.privates.push(PrivateDecl {
                    name: f.privates.first().map_or("p".into(), |p| p.name.clone()),
                    size: [0, 1, 20000][rng.below(3) as usize],
                    span: Span::NONE,
                }),
            }
        }
        7 => {
            if let Some(s) = m.shared.first_mut() {
                s.size = [0, 70000, u32::MAX][rng.below(3) as usize];
            }
            if let Some(b) = m.buffers.get_mut(1) {
                b.binding = 0;
                b.name = "out".into();
            }
        }
        _ => {
            // A call of the caller itself or of a later function: recursion.
            let target = rng.below(m.functions.len() as u64) as u32;
            let mut insts = Vec::new();
            insts_mut(&mut m.functions[fi].body, &mut insts);
            if let Some(inst) = insts.into_iter().find(|i| matches!(i.op, Op::Call(_))) {
                inst.op = Op::Call(target);
            }
        }
    }
}

#[test]
fn damaged_modules_never_make_the_verifier_panic() {
    let cfg = GenConfig {
        max_stmts: 40,
        ..GenConfig::default()
    };
    let mut rng = SplitMix64::new(0x5eed);
    let mut rejected = 0;
    for seed in 0..1500 {
        let mut m = generate(&mut SplitMix64::new(seed), &cfg);
        for _ in 0..=rng.below(4) {
            damage(&mut rng, &mut m);
        }
        // Must return, whatever the damage; rendering must not panic either.
        let errors = verify(&m);
        if !errors.is_empty() {
            rejected += 1;
            let _ = Diagnostics(errors).render("damaged.warp", "");
        }
    }
    // Most damage is an error; a test that never sees one tests nothing.
    assert!(
        rejected > 1000,
        "only {rejected} of 1500 damaged modules rejected"
    );
}

#[test]
fn changing_the_type_of_an_instruction_result_is_always_an_error() {
    for seed in 0..200 {
        let m = generate(&mut SplitMix64::new(seed), &GenConfig::default());
        let mut rng = SplitMix64::new(seed);
        let kernel = m.functions.len() - 1;
        let f = &m.functions[kernel];
        let v = rng.below(f.values.len() as u64) as usize;
        let old = f.values[v].ty;
        let new = Type::ALL
            .into_iter()
            .filter(|t| *t != old)
            .nth(rng.below(7) as usize)
            .expect("seven other types");
        let mut damaged = m.clone();
        damaged.functions[kernel].values[v].ty = new;
        assert!(
            !verify(&damaged).is_empty(),
            "seed {seed}: %{} changed from {old} to {new} unnoticed",
            f.values[v].name
        );
    }
}

#[test]
fn deleting_a_definition_is_always_an_error() {
    for seed in 0..200 {
        let mut m = generate(&mut SplitMix64::new(seed), &GenConfig::default());
        let kernel = m.functions.len() - 1;
        let body = &mut m.functions[kernel].body;
        let at = body
            .stmts
            .iter()
            .rposition(|s| matches!(s, Stmt::Inst(i) if i.results.iter().any(|r| matches!(r, Place::Value(_)))))
            .expect("the kernel prologue defines values");
        body.stmts.remove(at);
        assert!(!verify(&m).is_empty(), "seed {seed}");
    }
}
