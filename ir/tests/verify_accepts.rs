//! Verifier: valid programs pass, and every error of a module is reported.

mod verify_support;

use verify_support::*;
use warpjit_ir::*;

#[test]
fn every_error_is_reported_in_source_order() {
    let mut f = Fb::func("f", vec![Type::I32]).span(50);
    let a = f.value("a", Type::I32);
    let f = f.body(vec![
        add(51, def(a), f32c(1.0), i32c(1)),
        brk(52),
        // No final return: reported at the function.
    ]);
    let mut k = Fb::kernel("main").span(10);
    let x = k.value("x", Type::I32);
    let y = k.value("y", Type::I32);
    let k = k.body(vec![
        add(11, def(y), v(x), i32c(1)),
        builtin(12, x, Builtin::LaneId),
        if_(13, v(x), vec![], vec![]),
        call(14, 0, vec![], vec![]),
    ]);
    let m = Module {
        buffers: vec![
            BufferDecl {
                name: "a".into(),
                binding: 3,
                elem: NumFormat::U32,
                span: sp(1),
            },
            BufferDecl {
                name: "b".into(),
                binding: 3,
                elem: NumFormat::U32,
                span: sp(2),
            },
        ],
        functions: vec![f, k],
        ..Module::default()
    };
    let expected = [
        (2, "buffer @b uses binding 3, which buffer @a already uses"),
        (11, "%x is used before its definition"),
        (13, "the condition of `if` (%x) has type i32, expected bool"),
        (14, "`call @f` defines 1 result, found 0"),
        (50, "@f returns i32 but its body does not end with `return`"),
        (
            51,
            "operand 2 of `add` (literal 1:i32) has type i32, expected f32 (the type of operand 1)",
        ),
        (
            51,
            "result 1 of `add` (%a) has type i32, expected f32 (the type of operand 1)",
        ),
        (52, "`break` outside a loop"),
    ];
    expect_errors(&m, &expected);
    let err = VerifiedModule::new(m).expect_err("invalid module");
    assert_eq!(err.0.len(), expected.len());
    let source = "x".repeat(6000);
    assert!(err
        .render("m.warp", &source)
        .ends_with("8 errors in m.warp\n"));
}

/// One instruction of every shape the signatures allow, all accepted.
#[test]
fn every_op_with_valid_types_is_accepted() {
    let mut k = Fb::kernel("main");
    let mut stmts = Vec::new();
    let one =
        |k: &mut Fb, op: Op, results: Vec<Type>, args: Vec<Operand>, stmts: &mut Vec<Stmt>| {
            let places = results
                .iter()
                .enumerate()
                .map(|(i, t)| def(k.value(&format!("v{}_{i}", k.f.values.len()), *t)))
                .collect();
            stmts.push(inst(0, op, places, args));
        };
    let zero = |t: Type| Operand::Const(Const::zero(t));
    for u in all_unary() {
        for t in [Type::Bool, Type::I32, Type::I64, Type::F32, Type::F64] {
            let sig = Op::Unary(u).signature(None);
            if !sig.t_class.contains(t) {
                continue;
            }
            let r = match sig.results[0] {
                Slot::Fixed(f) => f,
                _ => t,
            };
            one(&mut k, Op::Unary(u), vec![r], vec![zero(t)], &mut stmts);
        }
    }
    for b in all_binary() {
        for t in [Type::Bool, Type::I32, Type::I64, Type::F32, Type::F64] {
            if Op::Binary(b).signature(None).t_class.contains(t) {
                one(
                    &mut k,
                    Op::Binary(b),
                    vec![t],
                    vec![zero(t), zero(t)],
                    &mut stmts,
                );
            }
        }
    }
    for c in all_cmp() {
        for t in Type::ALL {
            if Op::Cmp(c).signature(None).t_class.contains(t) {
                one(
                    &mut k,
                    Op::Cmp(c),
                    vec![Type::Bool],
                    vec![zero(t), zero(t)],
                    &mut stmts,
                );
            }
        }
    }
    for src in NumFormat::ALL {
        for dst in NumFormat::ALL {
            for round in [Round::Nearest, Round::Ceil, Round::Floor, Round::Trunc] {
                one(
                    &mut k,
                    Op::Cvt { dst, src, round },
                    vec![dst.ir_type()],
                    vec![zero(src.ir_type())],
                    &mut stmts,
                );
            }
        }
    }
    for from in Type::ALL {
        for to in Type::ALL {
            if from != Type::Bool && to != Type::Bool && from.bits() == to.bits() {
                one(
                    &mut k,
                    Op::Bitcast(to),
                    vec![to],
                    vec![zero(from)],
                    &mut stmts,
                );
            }
        }
    }
    for t in Type::ALL {
        one(&mut k, Op::Mov, vec![t], vec![zero(t)], &mut stmts);
        one(
            &mut k,
            Op::Select,
            vec![t],
            vec![boolc(true), zero(t), zero(t)],
            &mut stmts,
        );
    }
    for t in [Type::I32, Type::I64] {
        one(
            &mut k,
            Op::Bfe { signed: true },
            vec![t],
            vec![zero(t), i32c(1), i32c(2)],
            &mut stmts,
        );
        one(
            &mut k,
            Op::Bfi,
            vec![t],
            vec![zero(t), zero(t), i32c(1), i32c(2)],
            &mut stmts,
        );
    }
    one(
        &mut k,
        Op::Fma,
        vec![Type::F64],
        vec![f64c(1.0), f64c(2.0), f64c(3.0)],
        &mut stmts,
    );
    one(
        &mut k,
        Op::Pk64,
        vec![Type::I64],
        vec![i32c(1), i32c(2)],
        &mut stmts,
    );
    one(
        &mut k,
        Op::Up64,
        vec![Type::I32, Type::I32],
        vec![i64c(1)],
        &mut stmts,
    );
    for b in Builtin::all() {
        one(&mut k, Op::Builtin(b), vec![b.ty()], vec![], &mut stmts);
    }
    one(&mut k, Op::ActiveMask, vec![Type::I32], vec![], &mut stmts);
    one(
        &mut k,
        Op::Ballot,
        vec![Type::I32],
        vec![boolc(true)],
        &mut stmts,
    );
    for op in [VoteOp::All, VoteOp::Any, VoteOp::Eq] {
        let unguarded = Op::Vote { op, guarded: false };
        let guarded = Op::Vote { op, guarded: true };
        one(
            &mut k,
            unguarded.clone(),
            vec![Type::Bool],
            vec![boolc(true)],
            &mut stmts,
        );
        one(
            &mut k,
            unguarded,
            vec![Type::Bool, Type::I32],
            vec![boolc(true)],
            &mut stmts,
        );
        one(
            &mut k,
            guarded,
            vec![Type::Bool, Type::I32],
            vec![boolc(true), boolc(false)],
            &mut stmts,
        );
    }
    for t in [Type::Bool, Type::I32, Type::F32] {
        for tg in [TgOp::All, TgOp::Any, TgOp::Eq] {
            one(&mut k, Op::Tg(tg), vec![t], vec![zero(t)], &mut stmts);
        }
        one(
            &mut k,
            Op::Tg(TgOp::Ballot),
            vec![Type::I32],
            vec![zero(t)],
            &mut stmts,
        );
        for mode in [
            ShuffleMode::Idx,
            ShuffleMode::Up,
            ShuffleMode::Down,
            ShuffleMode::Xor,
        ] {
            for form in [ShuffleForm::Width, ShuffleForm::Mask] {
                let op = Op::Shuffle { mode, form };
                one(
                    &mut k,
                    op.clone(),
                    vec![t],
                    vec![zero(t), i32c(1), i32c(32)],
                    &mut stmts,
                );
                one(
                    &mut k,
                    op,
                    vec![t, Type::Bool],
                    vec![zero(t), i32c(1), i32c(32)],
                    &mut stmts,
                );
            }
        }
    }
    for q in [
        QuadSel::Member(0),
        QuadSel::Member(3),
        QuadSel::X,
        QuadSel::Y,
    ] {
        one(
            &mut k,
            Op::Quad(q),
            vec![Type::F32],
            vec![f32c(1.0)],
            &mut stmts,
        );
        one(
            &mut k,
            Op::Quad(q),
            vec![Type::F32],
            vec![f32c(1.0), f32c(2.0)],
            &mut stmts,
        );
    }
    for axis in [Axis::X, Axis::Y] {
        for fine in [true, false] {
            one(
                &mut k,
                Op::Deriv { axis, fine },
                vec![Type::F32],
                vec![f32c(1.0)],
                &mut stmts,
            );
        }
    }
    let private = k.private("stack", 64, 3);
    for mem in [
        MemRef::Buffer(0),
        MemRef::Shared(0),
        MemRef::Private(private),
    ] {
        for elem in NumFormat::ALL {
            for count in [1u8, 2, 4] {
                let format = MemFormat { elem, count };
                if !format.is_valid() {
                    continue;
                }
                let results = vec![elem.register_type(); count as usize];
                one(
                    &mut k,
                    Op::Load { mem, format },
                    results,
                    vec![i64c(8)],
                    &mut stmts,
                );
                let mut args = vec![i32c(0)];
                args.extend(std::iter::repeat_n(zero(elem.ir_type()), count as usize));
                one(&mut k, Op::Store { mem, format }, vec![], args, &mut stmts);
            }
        }
        if matches!(mem, MemRef::Private(_)) {
            continue;
        }
        for op in AtomOp::ALL {
            for format in NumFormat::ALL {
                if !op.allows(format) {
                    continue;
                }
                let t = format.ir_type();
                let mut args = vec![i32c(0), zero(t)];
                if op == AtomOp::Cswap {
                    args.push(zero(t));
                }
                one(
                    &mut k,
                    Op::Atom { mem, op, format },
                    vec![t],
                    args,
                    &mut stmts,
                );
            }
        }
    }
    for op in [Op::Demote, Op::MemBar, Op::Barrier] {
        one(&mut k, op, vec![], vec![], &mut stmts);
    }
    let k = k.body(stmts);
    let m = Module {
        buffers: vec![BufferDecl {
            name: "data".into(),
            binding: 0,
            elem: NumFormat::U32,
            span: sp(1),
        }],
        shared: vec![SharedDecl {
            name: "tile".into(),
            size: 256,
            span: sp(2),
        }],
        functions: vec![k],
        ..Module::default()
    };
    expect_valid(&m);
    let vm = VerifiedModule::new(m.clone()).expect("valid");
    assert_eq!(*vm.module(), m);
    assert_eq!(vm.functions.len(), 1, "Deref reaches the module");
    assert_eq!(vm.into_inner(), m);
}

#[test]
fn structured_control_flow_with_values_and_variables() {
    // A lane-dependent loop with break/continue, an ordered section with
    // its own loop, a function with an early return, and kill.
    let mut f = Fb::func("clamp", vec![Type::I32]).span(60);
    let a = f.param("a", Type::I32);
    let big = f.value("big", Type::Bool);
    let f = f.body(vec![
        inst(
            61,
            Op::Cmp(CmpOp::GtS),
            vec![def(big)],
            vec![v(a), i32c(10)],
        ),
        if_(62, v(big), vec![ret(63, vec![i32c(10)])], vec![]),
        ret(64, vec![v(a)]),
    ]);
    let mut k = Fb::kernel("main").span(1);
    let i = k.var("i", Type::I32);
    let lane = k.value("lane", Type::I32);
    let next = k.value("next", Type::I32);
    let done = k.value("done", Type::Bool);
    let odd_bit = k.value("odd_bit", Type::I32);
    let odd = k.value("odd", Type::Bool);
    let c = k.value("c", Type::I32);
    let kl = k.value("kl", Type::Bool);
    let k = k.body(vec![
        builtin(2, lane, Builtin::LaneId),
        loop_(
            3,
            vec![
                add(4, def(next), var(i), i32c(1)),
                mov(5, set(i), v(next)),
                inst(
                    6,
                    Op::Cmp(CmpOp::GtU),
                    vec![def(done)],
                    vec![var(i), v(lane)],
                ),
                if_(7, v(done), vec![brk(8)], vec![]),
                inst(
                    9,
                    Op::Binary(BinaryOp::And),
                    vec![def(odd_bit)],
                    vec![var(i), i32c(1)],
                ),
                inst(
                    10,
                    Op::Cmp(CmpOp::Ne),
                    vec![def(odd)],
                    vec![v(odd_bit), i32c(0)],
                ),
                if_(11, v(odd), vec![cont(12)], vec![]),
                ordered(
                    13,
                    v(lane),
                    vec![
                        loop_(14, vec![brk(15)]),
                        call(16, 0, vec![def(c)], vec![v(next)]),
                    ],
                ),
            ],
        ),
        inst(
            17,
            Op::Cmp(CmpOp::Eq),
            vec![def(kl)],
            vec![v(lane), i32c(3)],
        ),
        if_(18, v(kl), vec![kill(19)], vec![ret(20, vec![])]),
    ]);
    expect_valid(&module(vec![f, k]));
}
