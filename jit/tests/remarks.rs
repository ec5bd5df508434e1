//! Remarks: what the lowering says it decided for each statement matches
//! the program's shapes (`CompiledModule::remarks`).

mod direct;

use direct::module;
use warpjit_jit::{compile, JitOptions, Remark, RemarkKind};

/// The remarks of `src` compiled with `opts`, each with the line it is on.
fn remarks(src: &str, opts: &JitOptions) -> Vec<(usize, Remark)> {
    let m = module(src);
    let compiled = compile(&m, opts).expect("compiles");
    let remarks = compiled.remarks().expect("remarks");
    remarks
        .into_iter()
        .map(|r| (src[..r.span.start as usize].matches('\n').count() + 1, r))
        .collect()
}

/// The one remark of `kind` on `line`.
fn at(all: &[(usize, Remark)], line: usize, kind: RemarkKind) -> &Remark {
    let found: Vec<&Remark> = all
        .iter()
        .filter(|(l, r)| *l == line && r.kind == kind)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind:?} remark on line {line}: {all:#?}"
    );
    found[0]
}

const SHAPES: &str = "param %n: i32
buffer @data[0]: u32
buffer @index[1]: u32
kernel @main workgroup(64) {
  private @p[16]
  %i = global_id.x
  %a = shl %i, 2
  %x = load.u32 @data, %a
  %k = load.u32 @index, %a
  %g = shl %k, 2
  %y = load.u32 @data, %g
  %z = load.u32 @data, 8
  %big = cmp.lt.u %n, 100
  if %big {
    store.u32 @data, 4, %x
  }
  %low = cmp.lt.u %x, 7
  if %low {
    store.u32 @data, %g, %y
  }
  store.u32 @p, 0, %z
}
";

#[test]
fn memory_accesses_are_named_by_their_address_shape() {
    let all = remarks(SHAPES, &JitOptions::default().for_workgroup([64, 1, 1]));
    let consecutive = at(&all, 8, RemarkKind::Memory);
    assert!(
        consecutive
            .message
            .starts_with("@data: consecutive addresses: one vector load of the warp's 128 bytes"),
        "{consecutive:?}"
    );
    assert!(!consecutive.lane_by_lane);
    let gather = at(&all, 11, RemarkKind::Memory);
    assert!(
        gather.message.contains("address shape unknown"),
        "{gather:?}"
    );
    assert!(gather.message.contains("a gather"), "{gather:?}");
    assert!(gather.lane_by_lane);
    let same = at(&all, 12, RemarkKind::Memory);
    assert!(
        same.message
            .contains("one address for the warp: one scalar load"),
        "{same:?}"
    );
    let store_same = at(&all, 15, RemarkKind::Memory);
    assert!(
        store_same.message.contains("highest active lane's value"),
        "{store_same:?}"
    );
    let scatter = at(&all, 19, RemarkKind::Memory);
    assert!(scatter.message.contains("a scatter"), "{scatter:?}");
    let private = at(&all, 21, RemarkKind::Memory);
    assert!(
        private.message.starts_with("@p: a private array"),
        "{private:?}"
    );
    assert!(private.lane_by_lane);
}

#[test]
fn conditions_are_uniform_or_divergent() {
    let all = remarks(SHAPES, &JitOptions::default().for_workgroup([64, 1, 1]));
    let uniform = at(&all, 14, RemarkKind::Branch);
    assert!(
        uniform.message.starts_with("uniform condition"),
        "{uniform:?}"
    );
    assert!(!uniform.lane_by_lane);
    let divergent = at(&all, 18, RemarkKind::Branch);
    assert!(
        divergent.message.starts_with("divergent condition"),
        "{divergent:?}"
    );
    assert!(divergent.lane_by_lane);
}

#[test]
fn the_kernel_says_which_code_it_is() {
    let kernel_remarks = |all: &[(usize, Remark)]| -> Vec<String> {
        all.iter()
            .filter(|(l, r)| *l == 4 && r.kind == RemarkKind::Kernel)
            .map(|(_, r)| r.message.clone())
            .collect()
    };
    let sized = remarks(SHAPES, &JitOptions::default().for_workgroup([64, 1, 1]));
    let kernel = kernel_remarks(&sized);
    assert!(
        kernel[0].starts_with("code for workgroups of 64x1x1"),
        "{kernel:?}"
    );
    let any = remarks(SHAPES, &JitOptions::default());
    let kernel = kernel_remarks(&any);
    assert!(
        kernel[0].starts_with("code for any workgroup size"),
        "{kernel:?}"
    );
    // Without a loop, one call of the entry runs many workgroups.
    assert!(
        kernel[1].starts_with("short and without loops"),
        "{kernel:?}"
    );
    // Without the size, global_id.x is consecutive only where each warp
    // lies in one row of its workgroup.
    let x = at(&any, 8, RemarkKind::Memory);
    assert!(
        x.message
            .contains("for launches whose warps each lie in one row"),
        "{x:?}"
    );
}

#[test]
fn remarks_come_in_program_order() {
    let all = remarks(SHAPES, &JitOptions::default());
    let starts: Vec<u32> = all.iter().map(|(_, r)| r.span.start).collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted);
    assert!(all.iter().all(|(_, r)| r.function == "main"));
}

const ATOMICS_AND_LOOPS: &str = "param %n: i32
buffer @bins[0]: u32
buffer @out[1]: u32
shared @local[1024]
func @twice(%v: i32) -> i32 {
  %r = add %v, %v
  return %r
}
kernel @main workgroup(32) {
  var $i: i32
  var $sum: i32
  %lane = lane_id
  $i = mov 0
  loop {
    %done = cmp.ge.u $i, %n
    if %done {
      break
    }
    %slot = and $sum, 255
    %at = shl %slot, 2
    %old = atom.add.u32 @local, %at, 1
    $sum = add $sum, %lane
    $i = add $i, 1
  }
  %w = call @twice($sum)
  %o = shl %lane, 2
  %prev = atom.add.u32 @bins, %o, %w
  store.u32 @out, %o, %prev
}
";

#[test]
fn atomics_loops_and_calls_say_what_they_became() {
    let all = remarks(
        ATOMICS_AND_LOOPS,
        &JitOptions::default().for_workgroup([32, 1, 1]),
    );
    let shared = at(&all, 21, RemarkKind::Atomic);
    assert!(
        shared.message.starts_with("@local: plain loads and stores"),
        "{shared:?}"
    );
    assert!(shared.lane_by_lane);
    // Its result is read: real atomic instructions, not posted ones.
    let buffer = at(&all, 27, RemarkKind::Atomic);
    assert!(
        buffer.message.starts_with("@bins: atomic instructions"),
        "{buffer:?}"
    );
    let lp = at(&all, 14, RemarkKind::Loop);
    assert_eq!(
        lp.message,
        "$i the same in every active lane: kept as scalars"
    );
    let exit = at(&all, 16, RemarkKind::Branch);
    assert!(
        exit.message.contains("the warp leaves the loop at once"),
        "{exit:?}"
    );
    let call = at(&all, 25, RemarkKind::Call);
    assert_eq!(call.message, "@twice is inlined");
    // Level 1 leaves inlining to LLVM and says nothing of calls.
    let o1 = JitOptions {
        opt_level: 1,
        ..JitOptions::default()
    };
    assert!(remarks(ATOMICS_AND_LOOPS, &o1)
        .iter()
        .all(|(_, r)| r.kind != RemarkKind::Call));
}

const ONE_ADDRESS_ATOMICS: &str = "buffer @count[0]: u32
shared @local[64]
kernel @main workgroup(64) {
  %l = local_index
  %w = shr.u %l, 5
  %at = shl %w, 2
  %a = atom.add.u32 @local, %at, 1
  %b = atom.max.u32 @count, 4, %a
  %c = atom.exch.u32 @local, 0, %a
  %d = atom.cswap.u32 @count, 0, 1, 2
}
";

#[test]
fn atomics_on_one_address_known_when_compiling_are_not_lane_by_lane() {
    let all = remarks(ONE_ADDRESS_ATOMICS, &JitOptions::default());
    let shared = at(&all, 7, RemarkKind::Atomic);
    // `(local_index >> 5) << 2`, the warp's own word.
    assert_eq!(
        shared.message,
        "@local: one address in every active lane: one update, a plain load and store, as \
         only this workgroup's warps touch shared memory, with the lanes' values combined"
    );
    assert!(!shared.lane_by_lane);
    let buffer = at(&all, 8, RemarkKind::Atomic);
    assert!(
        buffer
            .message
            .starts_with("@count: one address in every active lane: one update, an atomic"),
        "{buffer:?}"
    );
    assert!(!buffer.lane_by_lane);
    // The lanes' values do not combine: one update each, in lane order.
    for line in [9, 10] {
        let each = at(&all, line, RemarkKind::Atomic);
        assert!(each.lane_by_lane, "{each:?}");
        assert!(each.message.contains("other lanes one each"), "{each:?}");
    }
}

#[test]
fn a_compile_cache_hit_gives_the_same_remarks() {
    let opts = JitOptions::default();
    let first: Vec<String> = remarks(ATOMICS_AND_LOOPS, &opts)
        .iter()
        .map(|(l, r)| format!("{l} {r}"))
        .collect();
    let again: Vec<String> = remarks(ATOMICS_AND_LOOPS, &opts)
        .iter()
        .map(|(l, r)| format!("{l} {r}"))
        .collect();
    assert_eq!(first, again);
}

/// The differential fuzzer's programs reach the lowering's paths that only
/// known shapes, barriers in loops and undeclared sizes take: were the
/// generator to stop making them, its campaigns would stop testing them.
#[test]
fn generated_programs_reach_the_known_shape_and_coroutine_paths() {
    use warpjit_jit::ir::generate::{generate_case, GenConfig, SplitMix64};
    use warpjit_jit::ir::VerifiedModule;
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    let wanted = [
        "consecutive addresses: one vector store",
        "consecutive addresses: one vector load",
        "one scalar store of the highest active lane's value",
        "one address for the warp: one scalar load",
        "repeated across the warp",
        "address shape unknown",
        "a run per group of 8 lanes",
        "code for workgroups of whole warps",
        "split at its barriers",
        "coroutine of its own",
        "uniform condition",
        "divergent condition",
        "kept as scalars",
        "is inlined",
        "is posted on the SM",
    ];
    for seed in 0..300 {
        let case = generate_case(&mut SplitMix64::new(seed), &GenConfig::default());
        let module = VerifiedModule::new(case.module).expect("generated programs verify");
        let opts = JitOptions::default().for_declared(&module);
        for r in warpjit_jit::remarks(&module, &opts).expect("lowers") {
            for w in wanted {
                if r.message.contains(w) {
                    *seen.entry(w).or_default() += 1;
                }
            }
        }
    }
    for w in wanted {
        assert!(
            seen.get(w).copied().unwrap_or(0) > 0,
            "no {w:?} in 300 programs: {seen:?}"
        );
    }
}
