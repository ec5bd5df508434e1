//! Verifier: ids in range, single definitions and structured dominance.

mod verify_support;

use verify_support::*;
use warpjit_ir::*;

#[test]
fn use_before_definition() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::I32);
    let y = k.value("y", Type::I32);
    let m = module(vec![k.body(vec![
        add(1, def(y), v(x), i32c(1)),
        builtin(2, x, Builtin::LaneId),
    ])]);
    expect_errors(&m, &[(1, "%x is used before its definition")]);
}

#[test]
fn an_instruction_cannot_read_its_own_result() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::I32);
    let m = module(vec![k.body(vec![add(1, def(x), v(x), i32c(1))])]);
    expect_errors(&m, &[(1, "%x is used before its definition")]);
}

#[test]
fn values_of_an_if_are_not_visible_after_it() {
    let mut k = Fb::kernel("main");
    let c = k.value("c", Type::Bool);
    let x = k.value("x", Type::I32);
    let e = k.value("e", Type::I32);
    let y = k.value("y", Type::I32);
    let z = k.value("z", Type::I32);
    let w = k.value("w", Type::I32);
    let m = module(vec![k.body(vec![
        builtin(1, c, Builtin::IsHelper),
        if_(
            2,
            v(c),
            vec![
                builtin(3, x, Builtin::LaneId),
                // Nested blocks see the enclosing block's values.
                if_(4, v(c), vec![add(5, def(y), v(x), i32c(1))], vec![]),
            ],
            vec![
                // The else branch does not see the then branch's values.
                add(6, def(e), v(x), i32c(1)),
            ],
        ),
        add(7, def(z), v(x), i32c(2)),
        add(8, def(w), v(y), i32c(2)),
    ])]);
    expect_errors(
        &m,
        &[
            (6, "%x is used outside the `if` that defines it"),
            (7, "%x is used outside the `if` that defines it"),
            (8, "%y is used outside the `if` that defines it"),
        ],
    );
}

#[test]
fn values_of_loops_and_ordered_sections_are_not_visible_after_them() {
    let mut k = Fb::kernel("main");
    let x = k.value("x", Type::I32);
    let y = k.value("y", Type::I32);
    let a = k.value("a", Type::I32);
    let b = k.value("b", Type::I32);
    let m = module(vec![k.body(vec![
        loop_(1, vec![builtin(2, x, Builtin::LaneId), brk(3)]),
        ordered(4, i32c(0), vec![builtin(5, y, Builtin::LaneId)]),
        add(6, def(a), v(x), i32c(1)),
        add(7, def(b), v(y), i32c(1)),
    ])]);
    expect_errors(
        &m,
        &[
            (6, "%x is used outside the `loop` that defines it"),
            (7, "%y is used outside the `ordered` that defines it"),
        ],
    );
}

#[test]
fn values_are_defined_exactly_once() {
    let mut f = Fb::func("f", vec![]).span(10);
    let p = f.param("p", Type::I32);
    let x = f.value("x", Type::I32);
    let never = f.value("never", Type::I32);
    let _ = never;
    let f = f.body(vec![
        builtin(1, x, Builtin::LaneId),
        builtin(2, x, Builtin::WarpId),
        mov(3, def(p), i32c(1)),
    ]);
    let m = module(vec![f]);
    expect_errors(
        &m,
        &[
            (2, "%x is defined more than once"),
            (3, "%p is defined more than once"),
            (9002, "%never is declared but never defined"),
        ],
    );
}

#[test]
fn ids_out_of_range() {
    let mut k = Fb::kernel("main").span(10);
    let x = k.value("x", Type::I32);
    let m = module(vec![k.body(vec![
        mov(1, def(x), v(ValueId(5))),
        mov(2, def(ValueId(6)), i32c(1)),
        mov(3, set(VarId(2)), i32c(1)),
        add(
            4,
            set(VarId(0)),
            Operand::Param(ParamId(3)),
            Operand::Var(VarId(1)),
        ),
        inst(
            5,
            Op::Load {
                mem: MemRef::Buffer(2),
                format: MemFormat {
                    elem: NumFormat::U32,
                    count: 1,
                },
            },
            vec![def(ValueId(7))],
            vec![i32c(0)],
        ),
        inst(
            6,
            Op::Store {
                mem: MemRef::Shared(0),
                format: MemFormat {
                    elem: NumFormat::U32,
                    count: 1,
                },
            },
            vec![],
            vec![i32c(0), i32c(1)],
        ),
        inst(
            7,
            Op::Store {
                mem: MemRef::Private(1),
                format: MemFormat {
                    elem: NumFormat::U32,
                    count: 1,
                },
            },
            vec![],
            vec![i32c(0), i32c(1)],
        ),
    ])]);
    expect_errors(
        &m,
        &[
            (1, "value #5 is out of range: @main declares 1 values"),
            (2, "value #6 is out of range: @main declares 1 values"),
            (3, "variable #2 is out of range: @main declares 0 variables"),
            (
                4,
                "parameter #3 is out of range: the module declares 0 parameters",
            ),
            (4, "variable #1 is out of range: @main declares 0 variables"),
            (4, "variable #0 is out of range: @main declares 0 variables"),
            (
                5,
                "`load.u32` refers to buffer #2, but the module declares 0",
            ),
            (5, "value #7 is out of range: @main declares 1 values"),
            (
                6,
                "`store.u32` refers to shared array #0, but the module declares 0",
            ),
            (
                7,
                "`store.u32` refers to private array #1, but the function declares 0",
            ),
        ],
    );
}

#[test]
fn function_parameters_are_visible_in_the_whole_body() {
    let mut f = Fb::func("f", vec![Type::I32]);
    let a = f.param("a", Type::I32);
    let r = f.value("r", Type::I32);
    let f = f.body(vec![
        loop_(1, vec![if_(2, boolc(true), vec![brk(3)], vec![])]),
        add(4, def(r), v(a), v(a)),
        ret(5, vec![v(r)]),
    ]);
    expect_valid(&module(vec![f]));
}

#[test]
fn nesting_deeper_than_256_is_reported_once() {
    let mut body = vec![kill(2)];
    for _ in 0..300 {
        body = vec![if_(1, boolc(true), body, vec![])];
    }
    let k = Fb::kernel("main").body(body);
    expect_errors(
        &module(vec![k]),
        &[(
            1,
            "blocks nest more than 256 deep (the function body is level 1); this `if` is not checked",
        )],
    );
}

#[test]
fn blocks_may_nest_exactly_256_deep_counting_the_body() {
    let nest = |levels: usize| {
        let mut body = vec![kill(2)];
        for level in (0..levels).rev() {
            body = vec![if_(3 + level as u32, boolc(true), body, vec![])];
        }
        module(vec![Fb::kernel("main").body(body)])
    };
    // docs/text-format.md: blocks nest at most 256 deep; the body is level
    // 1, so 255 nested `if`s reach level 256 and a 256th goes past it.
    expect_valid(&nest(255));
    expect_errors(
        &nest(256),
        &[(
            3 + 255,
            "blocks nest more than 256 deep (the function body is level 1); this `if` is not checked",
        )],
    );
}
