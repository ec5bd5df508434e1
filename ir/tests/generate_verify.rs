//! Generated programs: every one verifies, generation is deterministic, and
//! every feature switch and source of randomness works.

use warpjit_ir::generate::{
    generate, generate_case, ByteRng, Features, GenConfig, SplitMix64, ATOM_BINDING, IN_BINDING,
    OUT_BINDING, OUT_SLOT_BYTES,
};
use warpjit_ir::verify::verify;
use warpjit_ir::*;

#[track_caller]
fn assert_verifies(m: &Module, what: &str) {
    let errors = verify(m);
    assert!(
        errors.is_empty(),
        "{what}: {:#?}",
        &errors[..errors.len().min(5)]
    );
}

#[test]
fn six_hundred_seeds_verify() {
    let cfg = GenConfig::default();
    for seed in 0..600 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        assert_verifies(&m, &format!("seed {seed}"));
    }
}

#[test]
fn large_and_deep_programs_verify() {
    let cfg = GenConfig {
        max_stmts: 400,
        max_depth: 8,
        max_functions: 6,
        max_loop_trips: 6,
        ..GenConfig::default()
    };
    for seed in 0..40 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        assert_verifies(&m, &format!("seed {seed}"));
    }
}

#[test]
fn some_modules_have_a_second_kernel_before_main_and_narrow_results() {
    // `@main` is always the last function; one module in eight declares
    // `@other` just before it. Function results take the narrow types too,
    // and uniform conditions compare f32 and f16 parameters as well.
    let cfg = GenConfig::default();
    let (mut two_kernels, mut narrow_results) = (0, 0);
    let mut float_param_conditions = [0; 2];
    for seed in 0..400 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        let kernels: Vec<&str> = m
            .functions
            .iter()
            .filter(|f| f.is_kernel())
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(m.functions.last().map(|f| f.name.as_str()), Some("main"));
        match kernels.as_slice() {
            ["main"] => {}
            ["other", "main"] => two_kernels += 1,
            other => panic!("seed {seed}: kernels {other:?}"),
        }
        narrow_results += m
            .functions
            .iter()
            .flat_map(|f| &f.results)
            .filter(|t| matches!(t, Type::I8 | Type::I16 | Type::F16))
            .count();
        for f in &m.functions {
            walk_block(&f.body, &mut |s| {
                if let Stmt::Inst(Inst {
                    op: Op::Cmp(_),
                    args,
                    ..
                }) = s
                {
                    if let Some(Operand::Param(p)) = args.first() {
                        match m.params[p.0 as usize].ty {
                            Type::F32 => float_param_conditions[0] += 1,
                            Type::F16 => float_param_conditions[1] += 1,
                            _ => {}
                        }
                    }
                }
            });
        }
    }
    assert!((20..=90).contains(&two_kernels), "{two_kernels} of 400");
    assert!(narrow_results > 20, "{narrow_results} narrow results");
    assert!(
        float_param_conditions[0] > 40 && float_param_conditions[1] > 20,
        "f32 and f16 parameters compared: {float_param_conditions:?}"
    );
}

#[test]
fn same_seed_same_program() {
    let cfg = GenConfig::default();
    let a = generate_case(&mut SplitMix64::new(42), &cfg);
    let b = generate_case(&mut SplitMix64::new(42), &cfg);
    let c = generate_case(&mut SplitMix64::new(43), &cfg);
    assert_eq!(a, b);
    assert_ne!(a.module, c.module);
}

#[test]
fn split_mix_64_reference_values() {
    // First outputs of SplitMix64 seeded with 0 (the published reference
    // sequence, e.g. in Vigna's splitmix64.c test vectors).
    let mut rng = SplitMix64::new(0);
    assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
}

#[test]
fn every_feature_switch_alone_off_and_alone_on() {
    let all = Features::all();
    let none = Features::none();
    let flips: Vec<fn(&mut Features, bool)> = vec![
        |f, v| f.floats = v,
        |f, v| f.wide = v,
        |f, v| f.narrow = v,
        |f, v| f.ifs = v,
        |f, v| f.loops = v,
        |f, v| f.calls = v,
        |f, v| f.early_returns = v,
        |f, v| f.kill = v,
        |f, v| f.demote = v,
        |f, v| f.ordered = v,
        |f, v| f.barriers = v,
        |f, v| f.buffers = v,
        |f, v| f.out_of_bounds = v,
        |f, v| f.atomics = v,
        |f, v| f.shared = v,
        |f, v| f.private = v,
        |f, v| f.votes = v,
        |f, v| f.shuffles = v,
        |f, v| f.quads = v,
        |f, v| f.machine_ids = v,
    ];
    for (i, flip) in flips.iter().enumerate() {
        for (base, value) in [(all, false), (none, true)] {
            let mut features = base;
            flip(&mut features, value);
            let cfg = GenConfig {
                features,
                ..GenConfig::default()
            };
            for seed in 0..15 {
                let m = generate(&mut SplitMix64::new(seed * 31 + i as u64), &cfg);
                assert_verifies(&m, &format!("switch {i} = {value}, seed {seed}"));
            }
        }
    }
}

#[test]
fn switches_remove_their_constructs() {
    let mut features = Features::all();
    features.floats = false;
    features.loops = false;
    features.barriers = false;
    features.shared = false;
    features.calls = false;
    let cfg = GenConfig {
        features,
        ..GenConfig::default()
    };
    for seed in 0..50 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        assert!(m.shared.is_empty());
        assert_eq!(m.functions.len(), 1, "only the kernel");
        let f = &m.functions[0];
        assert!(f.values.iter().all(|v| !v.ty.is_float()));
        assert!(f.vars.iter().all(|v| !v.ty.is_float()));
        walk_block(&f.body, &mut |s| {
            assert!(!matches!(s, Stmt::Loop { .. }));
            if let Stmt::Inst(i) = s {
                assert!(!matches!(i.op, Op::Barrier | Op::Call(_)));
            }
        });
    }
}

#[test]
fn fuzzer_bytes_drive_the_generator() {
    let cfg = GenConfig::default();
    // Exhausted input: every later choice is the first option.
    assert_verifies(&generate(&mut ByteRng::new(&[]), &cfg), "empty input");
    assert_verifies(&generate(&mut ByteRng::new(&[0xff; 64]), &cfg), "all ones");
    let mut source = SplitMix64::new(7);
    for len in [1usize, 7, 100, 1000, 5000] {
        let bytes: Vec<u8> = (0..len).map(|_| source.next_u64() as u8).collect();
        assert_verifies(
            &generate(&mut ByteRng::new(&bytes), &cfg),
            &format!("{len} bytes"),
        );
    }
}

#[test]
fn case_describes_the_launch() {
    let cfg = GenConfig::default();
    let (mut declared, mut layers) = ([0; 2], [0; 2]);
    for seed in 0..100 {
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        let m = &case.module;
        let kernel = m.functions.last().expect("the kernel comes last");
        assert_eq!(kernel.name, "main");
        // The declared size is a default: mostly the launch's, sometimes
        // none or another.
        let FuncKind::Kernel { workgroup } = kernel.kind else {
            panic!("@main is a kernel")
        };
        declared[usize::from(workgroup == Some(case.workgroup))] += 1;
        let invocations: u32 =
            case.workgroup.iter().product::<u32>() * case.grid.iter().product::<u32>();
        assert!(case.workgroup.iter().product::<u32>() <= cfg.max_workgroup);
        assert!(case.grid.iter().product::<u32>() <= cfg.max_workgroups);
        assert!(case.grid[2] <= 2);
        layers[case.grid[2] as usize - 1] += 1;
        assert_eq!(
            case.buffer_sizes[OUT_BINDING as usize],
            (invocations * OUT_SLOT_BYTES) as usize
        );
        assert!(case.buffer_sizes[IN_BINDING as usize] > 0);
        assert!(case.buffer_sizes[ATOM_BINDING as usize] > 0);
        assert_eq!(case.buffer_data.len(), 3);
        for (size, data) in case.buffer_sizes.iter().zip(&case.buffer_data) {
            assert_eq!(*size, data.len());
        }
        assert_eq!(case.params.len(), m.params.len());
        for (bits, p) in case.params.iter().zip(&m.params) {
            assert_eq!(bits & !p.ty.bit_mask(), 0, "parameter bits fit {}", p.ty);
        }
        let bindings: Vec<u32> = m.buffers.iter().map(|b| b.binding).collect();
        assert_eq!(bindings, [OUT_BINDING, IN_BINDING, ATOM_BINDING]);
    }
    assert!(
        declared[1] > 60 && declared[0] > 3,
        "declared as launched: {declared:?}"
    );
    assert!(
        layers[0] > 50 && layers[1] > 3,
        "grids of 1 and 2 layers: {layers:?}"
    );
}

/// Whether `bound` is provably at most `max`: a literal, or the result of
/// `rem.u x, max + 1` or `min.u x, max`.
fn bound_at_most(f: &Function, bound: &Operand, max: u32) -> bool {
    let limit = |o: &Operand, k: u32| matches!(o, Operand::Const(c) if c.ty == Type::I32 && c.bits <= u64::from(k));
    match bound {
        Operand::Const(_) => limit(bound, max),
        Operand::Value(v) => {
            let mut ok = false;
            walk_block(&f.body, &mut |s| {
                if let Stmt::Inst(i) = s {
                    if i.results.first() == Some(&Place::Value(*v)) {
                        ok = match i.op {
                            Op::Binary(BinaryOp::RemU) => limit(&i.args[1], max + 1),
                            Op::Binary(BinaryOp::MinU) => limit(&i.args[1], max),
                            _ => false,
                        };
                    }
                }
            });
            ok
        }
        _ => false,
    }
}

/// The `i32` constant `o`, if it is one.
fn const_i32(o: &Operand) -> Option<i64> {
    match o {
        Operand::Const(c) if c.ty == Type::I32 => Some(i64::from(c.bits as u32 as i32)),
        _ => None,
    }
}

/// `v` is `mul b, k` of a bound `b` at most `max` and the constant `k`.
fn scaled_bound_at_most(f: &Function, v: &Operand, max: u32, k: i64) -> bool {
    let Operand::Value(v) = v else { return false };
    let mut ok = false;
    walk_block(&f.body, &mut |s| {
        if let Stmt::Inst(i) = s {
            if i.results.first() == Some(&Place::Value(*v)) {
                ok = i.op == Op::Binary(BinaryOp::Mul)
                    && const_i32(&i.args[1]) == Some(k)
                    && bound_at_most(f, &i.args[0], max);
            }
        }
    });
    ok
}

/// The `continue`s of `block` that restart the loop whose body it is.
fn own_continues(block: &Block) -> usize {
    block
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Continue { .. } => 1,
            Stmt::If {
                then_body,
                else_body,
                ..
            } => own_continues(then_body) + own_continues(else_body),
            Stmt::Ordered { body, .. } => own_continues(body),
            _ => 0,
        })
        .sum()
}

#[test]
fn loops_count_a_reserved_variable_and_functions_call_only_earlier_ones() {
    // Termination by construction: every loop starts by stepping a
    // variable that nothing else in the function assigns, and leaves when
    // it passes a bound, tested before any `continue` can restart the loop;
    // calls go only to lower-numbered functions.
    let cfg = GenConfig {
        max_stmts: 200,
        ..GenConfig::default()
    };
    let max = cfg.max_loop_trips;
    let mut forms = [0usize; 3];
    let mut tests_later = 0;
    for seed in 0..100 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        for (fi, f) in m.functions.iter().enumerate() {
            let mut assigned: Vec<Vec<&Inst>> = vec![Vec::new(); f.vars.len()];
            walk_block(&f.body, &mut |s| {
                if let Stmt::Inst(i) = s {
                    for r in &i.results {
                        if let Place::Var(v) = r {
                            assigned[v.0 as usize].push(i);
                        }
                    }
                    if let Op::Call(callee) = i.op {
                        assert!(
                            (callee as usize) < fi,
                            "seed {seed}: @{} calls a later function",
                            f.name
                        );
                    }
                }
            });
            walk_block(&f.body, &mut |s| {
                let Stmt::Loop { body, .. } = s else { return };
                let [Stmt::Inst(step), Stmt::Inst(set), rest @ ..] = body.stmts.as_slice() else {
                    panic!("seed {seed}: loop without the counting prologue");
                };
                let Operand::Var(counter) = step.args[0] else {
                    panic!("counter is a variable")
                };
                assert_eq!(set.results, vec![Place::Var(counter)]);
                let Some(Place::Value(next)) = step.results.first().copied() else {
                    panic!("seed {seed}: the step is a value");
                };
                assert_eq!(set.args, vec![Operand::Value(next)]);
                // Reset before the loop and stepped in it: nothing else.
                let writes = &assigned[counter.0 as usize];
                assert_eq!(writes.len(), 2, "seed {seed}");
                let reset = writes
                    .iter()
                    .find(|i| !std::ptr::eq(**i, set))
                    .expect("a reset");
                assert_eq!(reset.op, Op::Mov);
                // The exit test: a compare of the step and right after it an
                // `if` on it, one side only a `break`, the other empty.
                let is_exit_test = |pair: &[Stmt]| match pair {
                    [Stmt::Inst(test), Stmt::If {
                        cond: Operand::Value(c),
                        then_body,
                        else_body,
                        ..
                    }] => {
                        let only_break =
                            |b: &Block| matches!(b.stmts.as_slice(), [Stmt::Break { .. }]);
                        test.results.first() == Some(&Place::Value(*c))
                            && test.args.first() == Some(&Operand::Value(next))
                            && matches!(test.op, Op::Cmp(_))
                            && ((only_break(then_body) && else_body.stmts.is_empty())
                                || (only_break(else_body) && then_body.stmts.is_empty()))
                    }
                    _ => false,
                };
                let at = rest
                    .windows(2)
                    .position(is_exit_test)
                    .unwrap_or_else(|| panic!("seed {seed}: no exit test"));
                let (
                    Stmt::Inst(test),
                    Stmt::If {
                        then_body,
                        else_body,
                        ..
                    },
                ) = (&rest[at], &rest[at + 1])
                else {
                    unreachable!()
                };
                let before = Block {
                    stmts: rest[..at].to_vec(),
                };
                assert_eq!(
                    own_continues(&before),
                    0,
                    "seed {seed}: a continue before the exit test"
                );
                tests_later += usize::from(at > 0);
                let k = const_i32(&step.args[1]).expect("a constant step");
                let (exits_when_true, bounded) = match (&step.op, &test.op) {
                    (Op::Binary(BinaryOp::Add), Op::Cmp(cmp @ (CmpOp::GtU | CmpOp::LeU))) => {
                        assert_eq!(const_i32(&reset.args[0]), Some(0), "seed {seed}");
                        forms[usize::from(k > 1)] += 1;
                        let bounded = if k == 1 {
                            bound_at_most(f, &test.args[1], max)
                        } else {
                            scaled_bound_at_most(f, &test.args[1], max, k)
                        };
                        (*cmp == CmpOp::GtU, bounded)
                    }
                    (Op::Binary(BinaryOp::Sub), Op::Cmp(cmp @ (CmpOp::LtS | CmpOp::GeS))) => {
                        assert_eq!(k, 1);
                        assert_eq!(const_i32(&test.args[1]), Some(0), "seed {seed}");
                        forms[2] += 1;
                        (*cmp == CmpOp::LtS, bound_at_most(f, &reset.args[0], max))
                    }
                    other => panic!("seed {seed}: a loop counting by {other:?}"),
                };
                assert!(bounded, "seed {seed}: unbounded loop");
                let exit = if exits_when_true {
                    then_body
                } else {
                    else_body
                };
                assert!(matches!(exit.stmts.as_slice(), [Stmt::Break { .. }]));
            });
        }
    }
    assert!(
        forms.iter().all(|n| *n > 10) && tests_later > 10,
        "loops up by 1, by more, down: {forms:?}; tests after statements: {tests_later}"
    );
}

#[test]
fn barriers_stand_at_the_kernels_top_level_or_in_loops_and_ifs_there() {
    let cfg = GenConfig::default();
    let (mut in_loops, mut in_ifs) = (0, 0);
    for seed in 0..400 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        let is_barrier = |s: &Stmt| matches!(s, Stmt::Inst(i) if i.op == Op::Barrier);
        let count = |b: &Block| {
            let mut n = 0;
            walk_block(b, &mut |s| n += usize::from(is_barrier(s)));
            n
        };
        for f in &m.functions {
            let top = f.body.stmts.iter().filter(|s| is_barrier(s)).count();
            let mut looped = 0;
            for s in &f.body.stmts {
                // One on each side of an if: every warp takes the same side.
                if let Stmt::If {
                    then_body,
                    else_body,
                    ..
                } = s
                {
                    let sides = [then_body, else_body]
                        .map(|b| b.stmts.iter().filter(|s| is_barrier(s)).count());
                    assert!(
                        sides == [0, 0] || sides == [1, 1],
                        "seed {seed}: {sides:?} in an if"
                    );
                    looped += sides[0] + sides[1];
                    in_ifs += usize::from(sides == [1, 1]);
                }
                if let Stmt::Loop { body, .. } = s {
                    let here = body.stmts.iter().filter(|s| is_barrier(s)).count();
                    assert!(
                        here == 0 || here == 2,
                        "seed {seed}: {here} barriers in a loop"
                    );
                    // Nothing leaves such a loop but its test, which comes first.
                    if here == 2 {
                        assert_eq!(
                            own_exits(body),
                            1,
                            "seed {seed}: a way out of a barrier loop"
                        );
                    }
                    looped += here;
                }
            }
            assert_eq!(
                count(&f.body),
                top + looped,
                "seed {seed}: a barrier deeper down"
            );
            in_loops += usize::from(looped > 0);
        }
    }
    assert!(in_loops > 10, "kernels with barriers in loops: {in_loops}");
    assert!(in_ifs > 10, "barriers in ifs: {in_ifs}");
}

#[test]
fn functions_with_barriers_are_called_only_from_the_kernels_top_level() {
    // Every warp that has not finished calls them, and passes all their
    // barriers: no `return` before the end.
    let cfg = GenConfig::default();
    let mut called = 0;
    for seed in 0..400 {
        let m = generate(&mut SplitMix64::new(seed), &cfg);
        let has_barrier: Vec<bool> = m
            .functions
            .iter()
            .map(|f| {
                let mut found = false;
                walk_block(&f.body, &mut |s| {
                    found |= matches!(s, Stmt::Inst(i) if i.op == Op::Barrier);
                });
                found
            })
            .collect();
        for (fi, f) in m.functions.iter().enumerate() {
            let is_kernel = matches!(f.kind, FuncKind::Kernel { .. });
            if has_barrier[fi] && !is_kernel {
                let returns = |b: &Block| {
                    let mut n = 0;
                    walk_block(b, &mut |s| {
                        n += usize::from(matches!(s, Stmt::Return { .. }))
                    });
                    n
                };
                let last_returns = matches!(f.body.stmts.last(), Some(Stmt::Return { .. }));
                assert_eq!(
                    returns(&f.body),
                    usize::from(last_returns),
                    "seed {seed}: @{} returns before its end",
                    f.name
                );
            }
            let calls_here = |b: &Block| {
                let mut n = 0;
                walk_block(b, &mut |s| {
                    n += usize::from(matches!(s, Stmt::Inst(Inst { op: Op::Call(c), .. })
                        if has_barrier[*c as usize]));
                });
                n
            };
            let at_top = f
                .body
                .stmts
                .iter()
                .filter(|s| {
                    matches!(s, Stmt::Inst(Inst { op: Op::Call(c), .. })
                    if has_barrier[*c as usize])
                })
                .count();
            let all = calls_here(&f.body);
            if is_kernel {
                assert_eq!(all, at_top, "seed {seed}: a call with barriers deeper down");
                called += all;
            } else {
                assert_eq!(all, 0, "seed {seed}: @{} calls barriers", f.name);
            }
        }
    }
    assert!(called > 30, "calls of functions with barriers: {called}");
}

/// The `break`s and `continue`s of `block` that leave or restart the loop
/// whose body it is (not those of loops inside it).
fn own_exits(block: &Block) -> usize {
    block
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Break { .. } | Stmt::Continue { .. } => 1,
            Stmt::If {
                then_body,
                else_body,
                ..
            } => own_exits(then_body) + own_exits(else_body),
            Stmt::Ordered { body, .. } => own_exits(body),
            _ => 0,
        })
        .sum()
}
