//! Verifier: typing of instructions against `Op::signature`, one test per
//! error kind, each asserting the exact message and span.

mod verify_support;

use verify_support::*;
use warpjit_ir::*;

#[test]
fn operand_type_must_equal_the_type_variable_fixed_by_operand_1() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::I32);
    let y = k.value("y", Type::F32);
    let z = k.value("z", Type::I32);
    let m = module(vec![k.body(vec![
        mov(1, def(x), i32c(1)),
        mov(2, def(y), f32c(1.0)),
        add(3, def(z), v(x), v(y)),
    ])]);
    expect_errors(
        &m,
        &[(
            3,
            "operand 2 of `add` (%y) has type f32, expected i32 (the type of operand 1)",
        )],
    );
}

#[test]
fn type_variable_outside_its_class() {
    let mut k = Fb::kernel("main");
    let b = k.value("b", Type::Bool);
    let r = k.value("r", Type::Bool);
    let m = module(vec![k.body(vec![
        mov(1, def(b), boolc(true)),
        add(2, def(r), v(b), v(b)),
    ])]);
    // `add` is defined on i32 i64 f32 f64 (docs/text-format.md); once the
    // first operand fails the class, the others are checked against it too.
    expect_errors(
        &m,
        &[
            (
                2,
                "operand 1 of `add` (%b) has type bool, expected i32, i64, f32 or f64",
            ),
            (
                2,
                "operand 2 of `add` (%b) has type bool, expected i32, i64, f32 or f64",
            ),
            (
                2,
                "result 1 of `add` (%r) has type bool, expected i32, i64, f32 or f64",
            ),
        ],
    );
}

#[test]
fn result_type_must_match_the_signature() {
    let mut k = Fb::kernel("main");
    let r = k.value("r", Type::I32);
    let m = module(vec![k.body(vec![inst(
        1,
        Op::Cmp(CmpOp::LtS),
        vec![def(r)],
        vec![i32c(1), i32c(2)],
    )])]);
    expect_errors(
        &m,
        &[(1, "result 1 of `cmp.lt.s` (%r) has type i32, expected bool")],
    );
}

#[test]
fn variable_result_is_typed_by_its_declaration() {
    let mut k = Fb::kernel("main");
    let s = k.var("s", Type::F64);
    let m = module(vec![k.body(vec![add(1, set(s), i32c(1), i32c(2))])]);
    expect_errors(
        &m,
        &[(
            1,
            "result 1 of `add` ($s) has type f64, expected i32 (the type of operand 1)",
        )],
    );
}

#[test]
fn fixed_operand_slot() {
    let mut k = Fb::kernel("main");
    let r = k.value("r", Type::I32);
    let m = module(vec![k.body(vec![inst(
        1,
        Op::Select,
        vec![def(r)],
        vec![i32c(1), i32c(2), i32c(3)],
    )])]);
    expect_errors(
        &m,
        &[(
            1,
            "operand 1 of `select` (literal 1:i32) has type i32, expected bool",
        )],
    );
}

#[test]
fn operand_and_result_counts() {
    let mut k = Fb::kernel("main");
    let r = k.value("r", Type::I32);
    let q = k.value("q", Type::F32);
    let a = k.value("a", Type::Bool);
    let b = k.value("b", Type::I32);
    let c = k.value("c", Type::Bool);
    let m = module(vec![k.body(vec![
        add(1, def(r), i32c(1), i32c(2)),
        inst(2, Op::Binary(BinaryOp::Sub), vec![], vec![i32c(1), i32c(2)]),
        inst(3, Op::Binary(BinaryOp::Mul), vec![], vec![i32c(1)]),
        // quad.N takes 1 or 2 operands (the add operand is optional).
        inst(
            4,
            Op::Quad(QuadSel::X),
            vec![def(q)],
            vec![f32c(1.0), f32c(2.0), f32c(3.0)],
        ),
        // vote gives the predicate and optionally the ballot.
        inst(
            5,
            Op::Vote {
                op: VoteOp::All,
                guarded: false,
            },
            vec![def(a), def(b), def(c)],
            vec![boolc(true)],
        ),
        inst(6, Op::Barrier, vec![], vec![v(r)]),
    ])]);
    expect_errors(
        &m,
        &[
            (2, "`sub` defines 1 result, found 0"),
            (3, "`mul` takes 2 operands, found 1"),
            (3, "`mul` defines 1 result, found 0"),
            (4, "`quad.x` takes 1 or 2 operands, found 3"),
            (5, "`vote.all` defines 1 or 2 results, found 3"),
            (6, "`barrier` takes 0 operands, found 1"),
        ],
    );
}

#[test]
fn guarded_vote_takes_a_bool_guard() {
    let mut k = Fb::kernel("main");
    let a = k.value("a", Type::Bool);
    let bal = k.value("bal", Type::I32);
    let a2 = k.value("a2", Type::Bool);
    let guarded = Op::Vote {
        op: VoteOp::Eq,
        guarded: true,
    };
    let m = module(vec![k.body(vec![
        inst(
            1,
            guarded.clone(),
            vec![def(a), def(bal)],
            vec![boolc(true), boolc(false)],
        ),
        inst(2, guarded, vec![def(a2)], vec![boolc(true), i32c(1)]),
    ])]);
    expect_errors(
        &m,
        &[(
            2,
            "operand 2 of `vote.eq` (literal 1:i32) has type i32, expected bool",
        )],
    );
}

#[test]
fn memory_address_must_be_i32_or_i64() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::F32);
    let y = k.value("y", Type::F32);
    let mut m = module(vec![k.body(vec![
        inst(
            1,
            Op::Load {
                mem: MemRef::Buffer(0),
                format: MemFormat {
                    elem: NumFormat::F32,
                    count: 1,
                },
            },
            vec![def(x)],
            vec![f32c(4.0)],
        ),
        inst(
            2,
            Op::Load {
                mem: MemRef::Buffer(0),
                format: MemFormat {
                    elem: NumFormat::F32,
                    count: 1,
                },
            },
            vec![def(y)],
            vec![i64c(4)],
        ),
    ])]);
    m.buffers.push(BufferDecl {
        name: "data".into(),
        binding: 0,
        elem: NumFormat::F32,
        span: sp(80),
    });
    expect_errors(
        &m,
        &[(
            1,
            "the address of `load.f32` (literal 4.0:f32) has type f32, expected i32 or i64",
        )],
    );
}

#[test]
fn stored_value_takes_register_or_exact_narrow_type() {
    let store = |elem, count| Op::Store {
        mem: MemRef::Shared(0),
        format: MemFormat { elem, count },
    };
    let mut k = Fb::kernel("main");
    let h = k.value("h", Type::F16);
    let b = k.value("b", Type::I8);
    let m = Module {
        shared: vec![SharedDecl {
            name: "tile".into(),
            size: 64,
            span: sp(80),
        }],
        functions: vec![k.body(vec![
            inst(
                1,
                Op::Cvt {
                    dst: NumFormat::F16,
                    src: NumFormat::F32,
                    round: Round::Nearest,
                },
                vec![def(h)],
                vec![f32c(0.5)],
            ),
            inst(
                2,
                Op::Cvt {
                    dst: NumFormat::S8,
                    src: NumFormat::S32,
                    round: Round::Nearest,
                },
                vec![def(b)],
                vec![i32c(-3)],
            ),
            // Accepted: register type f32 and exact type f16 for store.f16,
            // i32 and i8 for store.s8 (NV_gpu_program5 stores narrow registers).
            inst(
                3,
                store(NumFormat::F16, 1),
                vec![],
                vec![i32c(0), f32c(1.0)],
            ),
            inst(4, store(NumFormat::F16, 1), vec![], vec![i32c(0), v(h)]),
            inst(5, store(NumFormat::S8, 1), vec![], vec![i32c(0), v(b)]),
            inst(6, store(NumFormat::S8, 1), vec![], vec![i32c(0), i32c(7)]),
            // Rejected.
            inst(7, store(NumFormat::U16, 1), vec![], vec![i32c(0), v(b)]),
            inst(
                8,
                store(NumFormat::F32, 2),
                vec![],
                vec![i32c(0), f32c(1.0), i32c(2)],
            ),
        ])],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[
            (
                7,
                "stored value 1 of `store.u16` (%b) has type i8, expected i32 or i16",
            ),
            (
                8,
                "stored value 2 of `store.f32x2` (literal 2:i32) has type i32, expected f32",
            ),
        ],
    );
}

#[test]
fn bitcast_needs_equal_widths_and_no_bool() {
    let mut k = Fb::kernel("main");
    let a = k.value("a", Type::F32);
    let b = k.value("b", Type::I32);
    let c = k.value("c", Type::F16);
    let d = k.value("d", Type::I16);
    let m = module(vec![k.body(vec![
        inst(1, Op::Bitcast(Type::F32), vec![def(a)], vec![i64c(1)]),
        inst(2, Op::Bitcast(Type::I32), vec![def(b)], vec![boolc(true)]),
        inst(
            3,
            Op::Bitcast(Type::F16),
            vec![def(c)],
            vec![Operand::Const(Const::new(Type::I16, 5))],
        ),
        inst(4, Op::Bitcast(Type::I16), vec![def(d)], vec![v(c)]),
    ])]);
    expect_errors(
        &m,
        &[
            (
                1,
                "`bitcast.f32` needs a 32-bit operand, found literal 1:i64 of type i64 (64 bits)",
            ),
            (
                2,
                "`bitcast.i32` of literal true (bool): bool values cannot be bitcast",
            ),
        ],
    );
}

#[test]
fn memory_formats_must_be_valid() {
    let mut k = Fb::kernel("main");
    let a = k.value("a", Type::I32);
    let b = k.value("b", Type::I32);
    let x = k.value("x", Type::I32);
    let y = k.value("y", Type::I32);
    let z = k.value("z", Type::I32);
    let load = |elem, count| Op::Load {
        mem: MemRef::Buffer(0),
        format: MemFormat { elem, count },
    };
    let mut m = module(vec![k.body(vec![
        // NV_gpu_program5: vector forms exist for 32- and 64-bit elements only.
        inst(
            1,
            load(NumFormat::U8, 2),
            vec![def(a), def(b)],
            vec![i32c(0)],
        ),
        inst(
            2,
            load(NumFormat::U32, 3),
            vec![def(x), def(y), def(z)],
            vec![i32c(0)],
        ),
    ])]);
    m.buffers.push(BufferDecl {
        name: "data".into(),
        binding: 0,
        elem: NumFormat::U32,
        span: sp(80),
    });
    expect_errors(
        &m,
        &[
            (
                1,
                "`load.u8x2`: x2 and x4 accesses need 32- or 64-bit elements, not u8",
            ),
            (
                2,
                "`load.u32x3`: a memory access has 1, 2 or 4 components, not 3",
            ),
        ],
    );
}

#[test]
fn atomics_follow_the_nv_gpu_program5_atom_table() {
    let atom = |mem, op, format| Op::Atom { mem, op, format };
    let mut k = Fb::kernel("main");
    let p = k.private("stack", 16, 81);
    let a = k.value("a", Type::I64);
    let b = k.value("b", Type::I32);
    let c = k.value("c", Type::I32);
    let d = k.value("d", Type::I64);
    let e = k.value("e", Type::I32);
    let m = Module {
        buffers: vec![BufferDecl {
            name: "data".into(),
            binding: 0,
            elem: NumFormat::U32,
            span: sp(80),
        }],
        functions: vec![k.body(vec![
            // MIN: U32, S32 only.
            inst(
                1,
                atom(MemRef::Buffer(0), AtomOp::Min, NumFormat::U64),
                vec![def(a)],
                vec![i32c(0), i64c(1)],
            ),
            // IWRAP: U32 only.
            inst(
                2,
                atom(MemRef::Buffer(0), AtomOp::Iwrap, NumFormat::S32),
                vec![def(b)],
                vec![i32c(0), i32c(1)],
            ),
            // Private memory has no atomics.
            inst(
                3,
                atom(MemRef::Private(p), AtomOp::Add, NumFormat::U32),
                vec![def(c)],
                vec![i32c(0), i32c(1)],
            ),
            // Accepted: CSWAP.U64 with compare and new value.
            inst(
                4,
                atom(MemRef::Buffer(0), AtomOp::Cswap, NumFormat::U64),
                vec![def(d)],
                vec![i32c(0), i64c(1), i64c(2)],
            ),
            // CSWAP needs both values.
            inst(
                5,
                atom(MemRef::Buffer(0), AtomOp::Cswap, NumFormat::U32),
                vec![def(e)],
                vec![i32c(0), i32c(1)],
            ),
        ])],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[
            (1, "`atom.min.u64`: NV_gpu_program5's ATOM table allows `min` only with s32 or u32"),
            (2, "`atom.iwrap.s32`: NV_gpu_program5's ATOM table allows `iwrap` only with u32"),
            (3, "`atom.add.u32` on private array @stack: atomics work on buffers and shared memory only"),
            (5, "`atom.cswap.u32` takes 3 operands after the memory name, found 2"),
        ],
    );
}

#[test]
fn warp_operand_classes() {
    let mut k = Fb::kernel("main");
    let q = k.value("q", Type::F64);
    let d = k.value("d", Type::I32);
    let s = k.value("s", Type::I64);
    let t = k.value("t", Type::F64);
    let m = module(vec![k.body(vec![
        // quadSwizzle*NV and the derivatives work on f32 only.
        inst(
            1,
            Op::Quad(QuadSel::Member(2)),
            vec![def(q)],
            vec![f64c(1.0)],
        ),
        inst(
            2,
            Op::Deriv {
                axis: Axis::X,
                fine: true,
            },
            vec![def(d)],
            vec![i32c(1)],
        ),
        // Shuffles and thread-group votes move bool, i32 or f32 data.
        inst(
            3,
            Op::Shuffle {
                mode: ShuffleMode::Xor,
                form: ShuffleForm::Width,
            },
            vec![def(s)],
            vec![i64c(1), i32c(1), i32c(32)],
        ),
        inst(4, Op::Tg(TgOp::Any), vec![def(t)], vec![f64c(1.0)]),
    ])]);
    expect_errors(
        &m,
        &[
            (1, "operand 1 of `quad.2` (literal 1.0:f64) has type f64, expected f32"),
            (1, "result 1 of `quad.2` (%q) has type f64, expected f32"),
            (2, "operand 1 of `ddx.fine` (literal 1:i32) has type i32, expected f32"),
            (2, "result 1 of `ddx.fine` (%d) has type i32, expected f32"),
            (3, "operand 1 of `shuffle.xor` (literal 1:i64) has type i64, expected bool, i32 or f32"),
            (3, "result 1 of `shuffle.xor` (%s) has type i64, expected bool, i32 or f32"),
            (4, "operand 1 of `tgany` (literal 1.0:f64) has type f64, expected bool, i32 or f32"),
            (4, "result 1 of `tgany` (%t) has type f64, expected bool, i32 or f32"),
        ],
    );
}

#[test]
fn if_condition_must_be_bool() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::I32);
    let m = module(vec![k.body(vec![
        builtin(1, x, Builtin::LaneId),
        if_(2, v(x), vec![], vec![]),
    ])]);
    expect_errors(
        &m,
        &[(2, "the condition of `if` (%x) has type i32, expected bool")],
    );
}

#[test]
fn return_values_match_the_function_results() {
    let f = Fb::func("f", vec![Type::I32, Type::F32])
        .span(10)
        .body(vec![
            if_(1, boolc(true), vec![ret(2, vec![i32c(1)])], vec![]),
            ret(3, vec![i32c(1), i32c(2)]),
        ]);
    let g = Fb::func("g", vec![Type::I32]).span(11).body(vec![]);
    let h = Fb::func("h", vec![])
        .span(12)
        .body(vec![ret(4, vec![i32c(0)])]);
    let m = module(vec![f, g, h]);
    expect_errors(
        &m,
        &[
            (2, "`return` gives 1 value, but @f returns (i32, f32)"),
            (
                3,
                "value 2 of `return` (literal 2:i32) has type i32, expected f32 (result 2 of @f)",
            ),
            (4, "`return` gives 1 value, but @h returns nothing"),
            (11, "@g returns i32 but its body does not end with `return`"),
        ],
    );
}

#[test]
fn calls_are_typed_by_the_callee_signature() {
    let mut f = Fb::func("f", vec![Type::F32]).span(10);
    let a = f.param("a", Type::I32);
    let r = f.value("r", Type::F32);
    let f = f.body(vec![
        inst(
            1,
            Op::Cvt {
                dst: NumFormat::F32,
                src: NumFormat::S32,
                round: Round::Nearest,
            },
            vec![def(r)],
            vec![v(a)],
        ),
        ret(2, vec![v(r)]),
    ]);
    let mut k = Fb::kernel("main").span(20);
    let x = k.value("x", Type::I32);
    let y = k.value("y", Type::F32);
    let k = k.body(vec![
        call(3, 0, vec![def(x)], vec![f32c(1.0)]),
        call(4, 0, vec![def(y)], vec![]),
    ]);
    let m = module(vec![f, k]);
    expect_errors(
        &m,
        &[
            (
                3,
                "argument 1 of `call @f` (literal 1.0:f32) has type f32, expected i32",
            ),
            (3, "result 1 of `call @f` (%x) has type i32, expected f32"),
            (4, "`call @f` takes 1 operand, found 0"),
        ],
    );
}

#[test]
fn only_functions_are_called() {
    let other = Fb::kernel("other").span(10).body(vec![]);
    let k = Fb::kernel("main")
        .span(20)
        .body(vec![call(1, 0, vec![], vec![]), call(2, 7, vec![], vec![])]);
    let m = module(vec![other, k]);
    expect_errors(
        &m,
        &[
            (
                1,
                "`call @other`: @other is a kernel; only `func`s can be called",
            ),
            (2, "`call` of function #7, but the module has 2 functions"),
        ],
    );
}

#[test]
fn an_instruction_assigns_a_variable_once() {
    let mut k = Fb::kernel("main");
    let s = k.var("s", Type::I32);
    let m = module(vec![k.body(vec![inst(
        1,
        Op::Up64,
        vec![set(s), set(s)],
        vec![i64c(5)],
    )])]);
    expect_errors(&m, &[(1, "`up64` assigns $s more than once")]);
}

#[test]
fn literal_bits_fit_the_literal_type() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::I8);
    let m = module(vec![k.body(vec![mov(
        1,
        def(x),
        Operand::Const(Const {
            ty: Type::I8,
            bits: 0x1ff,
        }),
    )])]);
    expect_errors(&m, &[(1, "literal 0x1ff has bits outside its type i8")]);
}
