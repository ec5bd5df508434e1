//! Verifier: loops, ordered sections (brief: no break/continue out of
//! them, no return/kill/barrier/nested ordered inside, no calls of
//! functions that reach kill/barrier/ordered) and recursion.

mod verify_support;

use verify_support::*;
use warpjit_ir::*;

#[test]
fn break_and_continue_only_inside_loops() {
    let k = Fb::kernel("main").body(vec![
        brk(1),
        if_(2, boolc(true), vec![cont(3)], vec![]),
        loop_(4, vec![if_(5, boolc(true), vec![cont(6)], vec![brk(7)])]),
    ]);
    expect_errors(
        &module(vec![k]),
        &[
            (1, "`break` outside a loop"),
            (3, "`continue` outside a loop"),
        ],
    );
}

#[test]
fn break_and_continue_may_not_leave_an_ordered_section() {
    let k = Fb::kernel("main").body(vec![loop_(
        1,
        vec![ordered(
            2,
            i32c(0),
            vec![
                if_(3, boolc(true), vec![brk(4)], vec![cont(5)]),
                // A loop inside the section may be left.
                loop_(6, vec![brk(7)]),
            ],
        )],
    )]);
    expect_errors(
        &module(vec![k]),
        &[
            (4, "`break` would leave the ordered section it is in; only loops inside the section may be left"),
            (5, "`continue` would leave the ordered section it is in; only loops inside the section may be left"),
        ],
    );
}

#[test]
fn return_kill_barrier_and_nesting_are_rejected_in_ordered_sections() {
    let k = Fb::kernel("main").body(vec![ordered(
        1,
        i32c(0),
        vec![
            if_(2, boolc(true), vec![ret(3, vec![])], vec![kill(4)]),
            inst(5, Op::Barrier, vec![], vec![]),
            ordered(6, i32c(1), vec![]),
            // demote and membar are fine.
            inst(7, Op::Demote, vec![], vec![]),
            inst(8, Op::MemBar, vec![], vec![]),
        ],
    )]);
    expect_errors(
        &module(vec![k]),
        &[
            (3, "`return` inside an ordered section"),
            (4, "`kill` inside an ordered section"),
            (5, "`barrier` inside an ordered section"),
            (
                6,
                "`ordered` inside an ordered section; ordered sections do not nest",
            ),
        ],
    );
}

#[test]
fn calls_in_ordered_sections_of_functions_reaching_kill_barrier_or_ordered() {
    // @leaf kills; @mid calls @leaf; @sync has a barrier; @ord an ordered
    // section; @pure does nothing of that kind.
    let leaf = Fb::func("leaf", vec![]).body(vec![kill(1)]);
    let mid = Fb::func("mid", vec![]).body(vec![call(2, 0, vec![], vec![])]);
    let sync = Fb::func("sync", vec![]).body(vec![inst(3, Op::Barrier, vec![], vec![])]);
    let ord = Fb::func("ord", vec![]).body(vec![ordered(4, i32c(0), vec![])]);
    let pure = Fb::func("pure", vec![]).body(vec![inst(5, Op::Demote, vec![], vec![])]);
    let k = Fb::kernel("main").body(vec![
        // Outside ordered sections all calls are fine.
        call(10, 1, vec![], vec![]),
        ordered(
            11,
            i32c(0),
            vec![
                call(12, 0, vec![], vec![]),
                call(13, 1, vec![], vec![]),
                call(14, 2, vec![], vec![]),
                call(15, 3, vec![], vec![]),
                call(16, 4, vec![], vec![]),
            ],
        ),
    ]);
    expect_errors(
        &module(vec![leaf, mid, sync, ord, pure, k]),
        &[
            (
                12,
                "`call @leaf` inside an ordered section: @leaf contains `kill`",
            ),
            (
                13,
                "`call @mid` inside an ordered section: @mid reaches `kill` through @mid -> @leaf",
            ),
            (
                14,
                "`call @sync` inside an ordered section: @sync contains `barrier`",
            ),
            (
                15,
                "`call @ord` inside an ordered section: @ord contains `ordered`",
            ),
        ],
    );
}

#[test]
fn self_recursion_is_reported_at_the_call() {
    let f = Fb::func("f", vec![]).body(vec![call(1, 0, vec![], vec![])]);
    expect_errors(&module(vec![f]), &[(1, "recursive call: @f -> @f")]);
}

#[test]
fn mutual_recursion_names_the_cycle() {
    // @a -> @b -> @c -> @a, plus @c -> @d (not on the cycle) and a
    // separate cycle @e <-> @g.
    let a = Fb::func("a", vec![]).body(vec![call(1, 1, vec![], vec![])]);
    let b = Fb::func("b", vec![]).body(vec![call(2, 2, vec![], vec![])]);
    let c =
        Fb::func("c", vec![]).body(vec![call(3, 3, vec![], vec![]), call(4, 0, vec![], vec![])]);
    let d = Fb::func("d", vec![]).body(vec![]);
    let e = Fb::func("e", vec![]).body(vec![call(5, 5, vec![], vec![])]);
    let g = Fb::func("g", vec![]).body(vec![call(6, 4, vec![], vec![])]);
    let k = Fb::kernel("main").body(vec![call(7, 0, vec![], vec![])]);
    expect_errors(
        &module(vec![a, b, c, d, e, g, k]),
        &[
            (1, "recursive call: @a -> @b -> @c -> @a"),
            (5, "recursive call: @e -> @g -> @e"),
        ],
    );
}

#[test]
fn a_long_cycle_is_named_by_its_ends() {
    // @f0 -> @f1 -> ... -> @f999 -> @f0: 1001 names, 16 shown.
    let n = 1000u32;
    let funcs: Vec<_> = (0..n)
        .map(|i| {
            Fb::func(&format!("f{i}"), vec![]).body(vec![call(i + 1, (i + 1) % n, vec![], vec![])])
        })
        .collect();
    let f = |i: usize| format!("@f{i}");
    let head: Vec<String> = (0..8).map(f).collect();
    let tail: Vec<String> = (993..1000).map(f).chain([f(0)]).collect();
    let message = format!(
        "recursive call: {} -> (985 more) -> {}",
        head.join(" -> "),
        tail.join(" -> ")
    );
    expect_errors(&module(funcs), &[(1, message.as_str())]);
}

#[test]
fn call_order_puts_callees_first() {
    let leaf = Fb::func("leaf", vec![]).body(vec![]);
    let k = Fb::kernel("main").body(vec![call(1, 2, vec![], vec![])]);
    let mid = Fb::func("mid", vec![]).body(vec![call(2, 0, vec![], vec![])]);
    let vm = VerifiedModule::new(module(vec![leaf, k, mid])).expect("valid");
    assert_eq!(vm.call_order(), &[FuncId(0), FuncId(2), FuncId(1)]);
}
