//! The library API as an embedding program uses it: prepare a kernel once,
//! launch it many times with different buffers, parameters and sizes, read
//! typed results back; share one runtime between host threads.

mod support;
use std::sync::Arc;
use support::*;
use warpjit_ir::NumFormat;
use warpjit_runtime::{param, Buffer};

/// y[i] = a * x[i] + y[i] for i < n (f32, no fma: two roundings).
const SAXPY: &str = "
param %n: i32
param %a: f32
buffer @x[0]: f32
buffer @y[1]: f32
kernel @main workgroup(64) {
  %i = global_id.x
  %inside = cmp.lt.u %i, %n
  if %inside {
    %addr = shl %i, 2
    %xi = load.f32 @x, %addr
    %yi = load.f32 @y, %addr
    %scaled = mul %a, %xi
    %sum = add %scaled, %yi
    store.f32 @y, %addr, %sum
  }
}";

#[test]
fn one_prepared_kernel_runs_many_launches_of_different_sizes() {
    let runtime = runtime(3);
    let saxpy = runtime.prepare(module(SAXPY), "main").expect("prepares");
    assert_eq!(saxpy.declared_workgroup(), Some([64, 1, 1]));
    for (n, a, workgroup) in [
        (1u32, 2.0f32, 64u32),
        (100, -0.5, 64),
        (1000, 3.25, 32),
        (4099, 1e-3, 1000),
    ] {
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let y: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
        let mut buffers = vec![
            Buffer::from_slice(&x).expect("small"),
            Buffer::from_slice(&y).expect("small"),
        ];
        let groups = n.div_ceil(workgroup);
        let report = run(
            &runtime,
            &saxpy,
            [groups, 1, 1],
            [workgroup, 1, 1],
            &[param(n), param(a)],
            &mut buffers,
        );
        assert_eq!(report.workgroups, u64::from(groups));
        assert!(report.faults.is_empty());
        let expected: Vec<f32> = x.iter().zip(&y).map(|(xi, yi)| a * xi + yi).collect();
        assert_eq!(buffers[1].to_vec::<f32>(), expected, "n = {n}");
        assert_eq!(buffers[0].to_vec::<f32>(), x, "x is only read");
    }
}

#[test]
fn an_empty_grid_runs_nothing_and_succeeds() {
    let runtime = runtime(2);
    let saxpy = runtime.prepare(module(SAXPY), "main").expect("prepares");
    let mut buffers = vec![
        Buffer::from_slice(&[1.0f32]).expect("small"),
        Buffer::from_slice(&[2.0f32]).expect("small"),
    ];
    let report = run(
        &runtime,
        &saxpy,
        [0, 4, 1],
        [64, 1, 1],
        &[param(1u32), param(1.0f32)],
        &mut buffers,
    );
    assert_eq!(
        (report.workgroups, report.statements, report.sms_used()),
        (0, 0, 0)
    );
    assert_eq!(report.workgroups_per_sm, [0, 0]);
    assert_eq!(buffers[1].to_vec::<f32>(), [2.0]);
}

#[test]
fn a_finished_launch_holds_none_of_its_buffers() {
    // Once `launch` returns, the buffers are the caller's alone: a refill
    // in place succeeds at once, whatever the SM threads still do.
    let runtime = runtime(4);
    let saxpy = runtime.prepare(module(SAXPY), "main").expect("prepares");
    let n = 300u32;
    let x = vec![2.0f32; n as usize];
    let y = vec![1.0f32; n as usize];
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let (x_bytes, y_bytes) = (bytes(&x), bytes(&y));
    let mut buffers = vec![
        Buffer::from_slice(&x).expect("small"),
        Buffer::from_slice(&y).expect("small"),
    ];
    for launch in 0..300 {
        run(
            &runtime,
            &saxpy,
            [n.div_ceil(64), 1, 1],
            [64, 1, 1],
            &[param(n), param(0.5f32)],
            &mut buffers,
        );
        assert_eq!(buffers[1].to_vec::<f32>(), vec![2.0f32; n as usize]);
        assert!(
            buffers[0].refill(&x_bytes),
            "x refilled after launch {launch}"
        );
        assert!(
            buffers[1].refill(&y_bytes),
            "y refilled after launch {launch}"
        );
    }
}

#[test]
fn host_threads_may_share_one_runtime() {
    let runtime = Arc::new(runtime(2));
    let saxpy = runtime.prepare(module(SAXPY), "main").expect("prepares");
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let (runtime, saxpy) = (Arc::clone(&runtime), saxpy.clone());
            std::thread::spawn(move || {
                for round in 0..10u32 {
                    let n = 50 + 37 * t + round;
                    let mut buffers = vec![
                        Buffer::from_slice(&vec![1.0f32; n as usize]).expect("small"),
                        Buffer::zeros(NumFormat::F32, u64::from(n)).expect("small"),
                    ];
                    run(
                        &runtime,
                        &saxpy,
                        [n.div_ceil(64), 1, 1],
                        [64, 1, 1],
                        &[param(n), param(t as f32)],
                        &mut buffers,
                    );
                    assert_eq!(buffers[1].to_vec::<f32>(), vec![t as f32; n as usize]);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("no launch failed");
    }
}

#[test]
fn buffers_keep_every_byte_of_narrow_and_wide_elements() {
    // Stores of single bytes from many lanes land in shared words without
    // disturbing their neighbours.
    let source = "
buffer @bytes[0]: u8
buffer @halves[1]: u16
buffer @wide[2]: u64
kernel @main workgroup(256) {
  %i = global_id.x
  %b = xor %i, 0x5a
  store.u8 @bytes, %i, %b
  %h = shl %i, 1
  %hv = mul %i, 257
  store.u16 @halves, %h, %hv
  %w = shl %i, 3
  %hi = not %i
  %wv = pk64 %i, %hi
  store.u64 @wide, %w, %wv
}";
    let runtime = runtime(3);
    let kernel = kernel(&runtime, source);
    let mut buffers = vec![
        Buffer::zeros(NumFormat::U8, 1024).expect("small"),
        Buffer::zeros(NumFormat::U16, 1024).expect("small"),
        Buffer::zeros(NumFormat::U64, 1024).expect("small"),
    ];
    run(&runtime, &kernel, [4, 1, 1], [256, 1, 1], &[], &mut buffers);
    let bytes: Vec<u8> = (0..1024u32).map(|i| (i ^ 0x5a) as u8).collect();
    assert_eq!(buffers[0].to_vec::<u8>(), bytes);
    let halves: Vec<u16> = (0..1024u32).map(|i| (i * 257) as u16).collect();
    assert_eq!(buffers[1].to_vec::<u16>(), halves);
    let wide: Vec<u64> = (0..1024u64).map(|i| i | (!i & 0xffff_ffff) << 32).collect();
    assert_eq!(buffers[2].to_vec::<u64>(), wide);
    assert_eq!(buffers[0].to_bytes(), bytes);
}
