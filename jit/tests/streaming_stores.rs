//! Non-temporal stores: a whole warp's run into a large buffer that the
//! module only stores to is written with `!nontemporal` stores, which must
//! give the same memory as masked stores, partial and misaligned runs and
//! small buffers included, and be fenced before buffer atomics.

mod direct;
mod support;

use support::*;
use warpjit_jit::{JitOptions, Target};

/// `@out` is only stored to, `@both` also loaded, `@count` updated.
const STORES: &str = "
buffer @data[0]: u32
buffer @out[1]: u32
buffer @both[2]: u32
buffer @count[3]: u32
kernel @main workgroup(64) {
  %i = global_id.x
  %a = shl %i, 2
  %x = load.u32 @data, %a
  store.u32 @out, %a, %x
  %y = load.u32 @both, %a
  %z = add %x, %y
  store.u32 @both, %a, %z
  ATOMIC
}";

const FENCE: &str = "call void @llvm.x86.sse.sfence()";

fn ir(atomic: &str, target: Target) -> String {
    let m = direct::module(&STORES.replace("ATOMIC", atomic));
    let opts = JitOptions {
        target,
        ..JitOptions::default()
    };
    direct::kernel_part(&direct::optimised_ir(&m, &opts)).to_string()
}

#[test]
fn only_buffers_the_module_only_stores_to_are_streamed() {
    let atomic = "%c = atom.add.u32 @count, 0, 1";
    for target in direct::TARGETS {
        let with_atomic = ir(atomic, target);
        // `@out`'s store only; `@both` is read too.
        let streamed = with_atomic
            .lines()
            .filter(|l| l.contains("store <32 x i32>") && l.contains("!nontemporal"))
            .count();
        assert_eq!(streamed, 1, "{target:?}: {with_atomic}");
        // What was streamed is fenced before the atomic.
        assert!(with_atomic.contains(FENCE), "{target:?}: {with_atomic}");
        let without = ir("", target);
        assert!(!without.contains(FENCE), "{target:?}: {without}");
    }
    // Stores to `@out` that are not one run are not streamed, and then
    // nothing needs a fence.
    let scattered = direct::module(
        "buffer @out[0]: u32
buffer @count[1]: u32
kernel @main workgroup(64) {
  %i = global_id.x
  %a = mul %i, 12
  store.u32 @out, %a, %i
  %c = atom.add.u32 @count, 0, 1
}",
    );
    let scattered = direct::optimised_ir(&scattered, &JitOptions::default());
    assert!(!scattered.contains(FENCE), "{scattered}");
    // Once `@out` is read back, nothing is streamed or fenced.
    let read_back = ir(
        "%back = load.u32 @out, %a\n  %c = atom.add.u32 @count, 0, %back",
        Target::Native,
    );
    assert!(!read_back.contains("!nontemporal"), "{read_back}");
    assert!(!read_back.contains(FENCE), "{read_back}");
}

/// Each lane stores its value at `offset + i` for `i` below `n`.
const COPY: &str = "
param %n: i32
param %offset: i32
buffer @data[0]: u32
buffer @out[1]: u32
kernel @main workgroup(256) {
  %i = global_id.x
  %in_range = cmp.lt.u %i, %n
  if %in_range {
    %a = shl %i, 2
    %x = load.u32 @data, %a
    %y = mul %x, 3
    %at = add %i, %offset
    %b = shl %at, 2
    store.u32 @out, %b, %y
  }
}";

/// A 16 MiB output (where streaming starts) and a smaller one, runs on and
/// off cache lines, the last warp partial: the memory is what the stores
/// say, on two SMs on every target (streamed) and on one (not streamed).
#[test]
fn streamed_runs_store_what_masked_stores_would() {
    let data: Vec<u32> = (0..1u32 << 22)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    for (target, sms) in [
        (Target::Native, 1),
        (Target::Native, 2),
        (Target::Avx2, 2),
        (Target::Sse42, 2),
    ] {
        let options = JitOptions {
            target,
            ..JitOptions::default()
        };
        let backend = std::sync::Arc::new(warpjit_jit::JitBackend::new(options));
        let runtime = runtime_on(backend, sms, 64);
        let kernel = kernel(&runtime, COPY);
        for (elements, offset) in [(1u32 << 22, 0u32), (1 << 22, 1), (1 << 20, 0)] {
            // The last warp has 27 lanes in range.
            let n = elements - offset - 5;
            // Lanes that do not store must leave what was there.
            let before = vec![0xdead_beef_u32; elements as usize];
            let mut buffers = vec![u32s(&data), u32s(&before)];
            let groups = n.div_ceil(256);
            run(
                &runtime,
                &kernel,
                [groups, 1, 1],
                [256, 1, 1],
                &[u64::from(n), u64::from(offset)],
                &mut buffers,
            );
            let mut expected = before;
            for i in 0..n as usize {
                expected[i + offset as usize] = data[i].wrapping_mul(3);
            }
            let out = buffers[1].to_vec::<u32>();
            let first_wrong = out.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(
                first_wrong, None,
                "{target:?} on {sms} SMs, {elements} elements from {offset}"
            );
        }
    }
}
