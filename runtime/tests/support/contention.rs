//! Atomics under contention from every SM, for any backend: no lost
//! updates, and each ATOM operation's result as the NV_gpu_program5
//! pseudo-code and HARDWARE.md 29 define it (`runtime/tests/atomics.rs`
//! runs them on the interpreter, `jit/tests/runtime_atomics.rs` on the JIT).
//!
//! The kernels start with a gate: each workgroup's first invocation checks
//! in on `@arrived`, then every invocation waits until all workgroups have.
//! With as many workgroups as SMs, each SM must take exactly one (an SM
//! runs its workgroup to completion, so it cannot take a second while the
//! first waits), and all SMs then hammer the same words at once.

use super::*;
use std::sync::Arc;
use std::time::Duration;
use warpjit_runtime::{Backend, Buffer, Runtime, RuntimeConfig};

const SMS: u32 = 4;

/// The gate, then the test's own statements.
fn gated(decls: &str, body: &str) -> String {
    format!(
        "{decls}
buffer @arrived[99]: u32
kernel @main {{
  var $i: i32
  %local = local_index
  %leader = cmp.eq %local, 0
  if %leader {{
    %checked_in = atom.add.u32 @arrived, 0, 1
  }}
  %groups = num_workgroups.x
  loop {{
    %arrived_now = load.u32 @arrived, 0
    %everyone = cmp.ge.u %arrived_now, %groups
    if %everyone {{
      break
    }}
  }}
  %gid = global_id.x
  %gaddr = shl %gid, 2
{body}
}}"
    )
}

fn gated_runtime(backend: Arc<dyn Backend>) -> Runtime {
    Runtime::with_backend(
        RuntimeConfig {
            sm_count: SMS,
            warps_per_sm: 64,
            fuel: None,
            // A broken gate fails the test instead of hanging it.
            watchdog: Some(Duration::from_secs(600)),
        },
        backend,
    )
    .expect("valid configuration")
}

/// Runs a gated kernel on SMS workgroups of `threads`; every SM must have
/// run exactly one.
fn run_gated(
    runtime: &Runtime,
    source: &str,
    threads: u32,
    params: &[u64],
    buffers: &mut Vec<Buffer>,
) {
    let kernel = runtime.prepare(module(source), "main").expect("prepares");
    buffers.push(zeros_u32(1));
    let report = run(
        runtime,
        &kernel,
        [SMS, 1, 1],
        [threads, 1, 1],
        params,
        buffers,
    );
    assert_eq!(report.workgroups_per_sm, vec![1; SMS as usize]);
    assert!(report.faults.is_empty(), "{}", report.faults);
    buffers.pop();
}

pub fn ten_million_increments_of_one_counter_are_all_counted(backend: Arc<dyn Backend>) {
    // 4 SMs x 1000 invocations (31 full warps and one of 8 lanes) x 2500.
    let source = gated(
        "param %iterations: i32\nbuffer @counter[0]: u32",
        "  loop {
    %done = cmp.ge.u $i, %iterations
    if %done {
      break
    }
    %old = atom.add.u32 @counter, 0, 1
    $i = add $i, 1
  }",
    );
    let runtime = gated_runtime(backend);
    let mut buffers = vec![zeros_u32(1)];
    run_gated(&runtime, &source, 1000, &[2500], &mut buffers);
    assert_eq!(buffers[0].to_vec::<u32>(), [10_000_000]);
}

pub fn u64_additions_carry_across_the_halves_without_losses(backend: Arc<dyn Backend>) {
    // 4000 invocations x 250 additions of 0xffffffff: every one carries
    // into the high word sooner or later.
    let source = gated(
        "param %iterations: i32\nbuffer @counter[0]: u64",
        "  loop {
    %done = cmp.ge.u $i, %iterations
    if %done {
      break
    }
    %old = atom.add.u64 @counter, 0, 0xffffffff:i64
    $i = add $i, 1
  }",
    );
    let runtime = gated_runtime(backend);
    let mut buffers = vec![Buffer::zeros(warpjit_ir::NumFormat::U64, 1).expect("small")];
    run_gated(&runtime, &source, 1000, &[250], &mut buffers);
    assert_eq!(buffers[0].to_vec::<u64>(), [1_000_000 * 0xffff_ffff]);
}

/// 4096 invocations on 128 cells: invocation `gid` works on cell
/// `gid % 128` as its `k = gid / 128`-th (0..31) user, so each cell's 32
/// users come from all four workgroups.
const CELLS: usize = 128;
const USERS: usize = 32;

pub fn every_atomic_operation_gives_its_defined_result(backend: Arc<dyn Backend>) {
    let source = gated(
        "buffer @add_cells[0]: u32
buffer @add_returns[1]: u32
buffer @exch_cells[2]: u32
buffer @exch_returns[3]: u32
buffer @cswap_cells[4]: u32
buffer @cswap_returns[5]: u32
buffer @min_s[6]: s32
buffer @max_s[7]: s32
buffer @min_u[8]: u32
buffer @max_u[9]: u32
buffer @and_cells[10]: u32
buffer @or_cells[11]: u32
buffer @xor_cells[12]: u32
buffer @wide_returns[13]: u64
buffer @wide_cells[14]: u64",
        "  %cell = and %gid, 127
  %k = shr.u %gid, 7
  %caddr = shl %cell, 2
  %gid1 = add %gid, 1
  %r_add = atom.add.u32 @add_cells, %caddr, 1
  store.u32 @add_returns, %gaddr, %r_add
  %r_exch = atom.exch.u32 @exch_cells, %caddr, %gid1
  store.u32 @exch_returns, %gaddr, %r_exch
  %r_cswap = atom.cswap.u32 @cswap_cells, %caddr, 0, %gid1
  store.u32 @cswap_returns, %gaddr, %r_cswap
  %centred = sub %k, 16
  %scaled = mul %centred, 1000
  %value = add %scaled, %cell
  %m1 = atom.min.s32 @min_s, %caddr, %value
  %m2 = atom.max.s32 @max_s, %caddr, %value
  %m3 = atom.min.u32 @min_u, %caddr, %value
  %m4 = atom.max.u32 @max_u, %caddr, %value
  %bit = shl 1, %k
  %clear = not %bit
  %b1 = atom.and.u32 @and_cells, %caddr, %clear
  %b2 = atom.or.u32 @or_cells, %caddr, %bit
  %hash = mul %gid1, 0x9e3779b9
  %b3 = atom.xor.u32 @xor_cells, %caddr, %hash
  %waddr = shl %gid, 3
  %cell8 = shl %cell, 3
  %wide = pk64 %gid1, %gid1
  %r_wide = atom.exch.u64 @wide_cells, %cell8, %wide
  store.u64 @wide_returns, %waddr, %r_wide",
    );
    let n = CELLS * USERS;
    let cells = |fill: u32| u32s(&vec![fill; CELLS]);
    let mut buffers = vec![
        cells(0),
        zeros_u32(n as u64),
        cells(0),
        zeros_u32(n as u64),
        cells(0),
        zeros_u32(n as u64),
        cells(0x7fff_ffff),
        cells(0x8000_0000),
        cells(u32::MAX),
        cells(0),
        cells(u32::MAX),
        cells(0),
        cells(0),
        Buffer::zeros(warpjit_ir::NumFormat::U64, n as u64).expect("small"),
        Buffer::zeros(warpjit_ir::NumFormat::U64, CELLS as u64).expect("small"),
    ];
    let runtime = gated_runtime(backend);
    run_gated(&runtime, &source, 1024, &[], &mut buffers);
    let get = |i: usize| buffers[i].to_vec::<u32>();
    let users = |c: usize| (0..USERS).map(move |k| c + CELLS * k);

    let (add_cells, add_returns) = (get(0), get(1));
    let (exch_cells, exch_returns) = (get(2), get(3));
    let (cswap_cells, cswap_returns) = (get(4), get(5));
    let (min_s, max_s, min_u, max_u) = (
        buffers[6].to_vec::<i32>(),
        buffers[7].to_vec::<i32>(),
        get(8),
        get(9),
    );
    let (and_cells, or_cells, xor_cells) = (get(10), get(11), get(12));
    let wide_returns = buffers[13].to_vec::<u64>();
    let wide_cells = buffers[14].to_vec::<u64>();
    for c in 0..CELLS {
        // ADD returns old: the 32 users see 0..31 in some order.
        let mut seen: Vec<u32> = users(c).map(|g| add_returns[g]).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..USERS as u32).collect::<Vec<_>>(), "add, cell {c}");
        assert_eq!(add_cells[c], USERS as u32);

        // EXCH: the returns and the final value are the initial 0 and each
        // user's value exactly once.
        let mut chain: Vec<u32> = users(c).map(|g| exch_returns[g]).collect();
        chain.push(exch_cells[c]);
        chain.sort_unstable();
        let mut expected: Vec<u32> = users(c).map(|g| g as u32 + 1).collect();
        expected.push(0);
        expected.sort_unstable();
        assert_eq!(chain, expected, "exch, cell {c}");

        // CSWAP(0 -> own value): exactly one winner sees 0, the others see
        // the winner's value, which stays.
        let winners: Vec<usize> = users(c).filter(|&g| cswap_returns[g] == 0).collect();
        assert_eq!(winners.len(), 1, "cswap, cell {c}");
        let winner_value = winners[0] as u32 + 1;
        assert_eq!(cswap_cells[c], winner_value);
        assert!(users(c)
            .filter(|&g| g != winners[0])
            .all(|g| cswap_returns[g] == winner_value));

        // MIN/MAX: signed for s32, unsigned for u32 (HARDWARE.md 29).
        let values: Vec<i32> = (0..USERS as i32)
            .map(|k| (k - 16) * 1000 + c as i32)
            .collect();
        assert_eq!(
            min_s[c],
            *values.iter().min().expect("users"),
            "min.s32 {c}"
        );
        assert_eq!(
            max_s[c],
            *values.iter().max().expect("users"),
            "max.s32 {c}"
        );
        assert_eq!(
            min_u[c],
            values.iter().map(|&v| v as u32).min().expect("users")
        );
        assert_eq!(
            max_u[c],
            values.iter().map(|&v| v as u32).max().expect("users")
        );

        // AND/OR: each user clears / sets its own bit: a lost update leaves
        // a bit behind.
        assert_eq!(and_cells[c], 0, "and, cell {c}");
        assert_eq!(or_cells[c], u32::MAX, "or, cell {c}");
        let xor = users(c).fold(0u32, |x, g| x ^ (g as u32 + 1).wrapping_mul(0x9e37_79b9));
        assert_eq!(xor_cells[c], xor, "xor, cell {c}");

        // u64 EXCH: whole 64-bit values move, never half of one.
        let mut wide: Vec<u64> = users(c).map(|g| wide_returns[g]).collect();
        wide.push(wide_cells[c]);
        wide.sort_unstable();
        let mut expected: Vec<u64> = users(c).map(|g| (g as u64 + 1) * 0x1_0000_0001).collect();
        expected.push(0);
        expected.sort_unstable();
        assert_eq!(wide, expected, "exch.u64, cell {c}");
    }
}

pub fn iwrap_and_dwrap_count_as_hardware_md_29_measured(backend: Arc<dyn Backend>) {
    // HARDWARE.md 29: "in parallel, 2048 IWRAP(9) leave 8 and each value
    // 0..9 is returned 204-205 times". Here two cells get 2048 of each.
    let source = gated(
        "buffer @wrap_cells[0]: u32\nbuffer @iwrap_returns[1]: u32\nbuffer @dwrap_returns[2]: u32",
        "  %cell = and %gid, 1
  %iaddr = shl %cell, 2
  %daddr = add %iaddr, 8
  %up = atom.iwrap.u32 @wrap_cells, %iaddr, 9
  store.u32 @iwrap_returns, %gaddr, %up
  %down = atom.dwrap.u32 @wrap_cells, %daddr, 9
  store.u32 @dwrap_returns, %gaddr, %down",
    );
    let mut buffers = vec![zeros_u32(4), zeros_u32(4096), zeros_u32(4096)];
    let runtime = gated_runtime(backend);
    run_gated(&runtime, &source, 1024, &[], &mut buffers);
    let cells = buffers[0].to_vec::<u32>();
    let (iwrap, dwrap) = (buffers[1].to_vec::<u32>(), buffers[2].to_vec::<u32>());
    for cell in 0..2 {
        let count = |returns: &[u32], value: u32| {
            returns
                .iter()
                .skip(cell)
                .step_by(2)
                .filter(|&&r| r == value)
                .count()
        };
        // From 0, IWRAP(9) returns 0, 1, ..., 9, 0, 1, ...: 2048 = 204 * 10
        // + 8, so 0..7 come 205 times, 8 and 9 204 times, and 8 remains.
        assert_eq!(cells[cell], 8, "iwrap final, cell {cell}");
        for value in 0..10 {
            let expected = if value < 8 { 205 } else { 204 };
            assert_eq!(count(&iwrap, value), expected, "iwrap returned {value}");
        }
        // DWRAP(9) from 0 stores 9 (old == 0), then counts down: returns
        // 0, 9, 8, ..., 1, 0, 9, ...; the first 8 of the cycle (0, 9..3)
        // come 205 times, 2 and 1 204 times, and 2 remains.
        assert_eq!(cells[cell + 2], 2, "dwrap final, cell {cell}");
        for value in 0..10 {
            let expected = if value == 1 || value == 2 { 204 } else { 205 };
            assert_eq!(count(&dwrap, value), expected, "dwrap returned {value}");
        }
    }
}
