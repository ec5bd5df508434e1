//! Barriers and shared memory on the runtime: a tree reduction with a
//! barrier after every step gives the right sum for every workgroup size
//! from 1 to 1024 invocations (up to 32 warps, the last one partial).

mod support;
use support::*;
use warpjit_runtime::Runtime;

/// Sums each workgroup's slice of `@values` into `@sums[workgroup]`: every
/// invocation puts its value in `@partial`, then strides 512, 256, ..., 1
/// fold the upper half onto the lower one, a barrier after each fold.
const TREE_SUM: &str = "
buffer @values[0]: u32
buffer @sums[1]: u32
shared @partial[4096]
kernel @main {
  var $stride: i32
  %local = local_index
  %size = workgroup_size.x
  %gid = global_id.x
  %gaddr = shl %gid, 2
  %value = load.u32 @values, %gaddr
  %laddr = shl %local, 2
  store.u32 @partial, %laddr, %value
  barrier
  $stride = mov 512
  loop {
    %done = cmp.eq $stride, 0
    if %done {
      break
    }
    %partner = add %local, $stride
    %partner_exists = cmp.lt.u %partner, %size
    %lower_half = cmp.lt.u %local, $stride
    %folds = and %partner_exists, %lower_half
    if %folds {
      %paddr = shl %partner, 2
      %mine = load.u32 @partial, %laddr
      %theirs = load.u32 @partial, %paddr
      %sum = add %mine, %theirs
      store.u32 @partial, %laddr, %sum
    }
    barrier
    $stride = shr.u $stride, 1
  }
  %leader = cmp.eq %local, 0
  if %leader {
    %total = load.u32 @partial, 0
    %wg = workgroup_id.x
    %saddr = shl %wg, 2
    store.u32 @sums, %saddr, %total
  }
}";

#[test]
fn tree_reduction_is_right_for_every_workgroup_size_from_1_to_1024() {
    const GROUPS: u32 = 3;
    // 32 warp slots: exactly enough for 1024 invocations.
    let runtime = Runtime::new(config(3, 32)).expect("valid configuration");
    let kernel = kernel(&runtime, TREE_SUM);
    let value = |gid: u32| gid.wrapping_mul(2_654_435_761).rotate_left(7);
    let values: Vec<u32> = (0..GROUPS * 1024).map(value).collect();
    for size in 1..=1024u32 {
        let mut buffers = vec![
            u32s(&values[..(GROUPS * size) as usize]),
            zeros_u32(GROUPS as u64),
        ];
        let report = run(
            &runtime,
            &kernel,
            [GROUPS, 1, 1],
            [size, 1, 1],
            &[],
            &mut buffers,
        );
        assert!(report.faults.is_empty(), "size {size}: {}", report.faults);
        let expected: Vec<u32> = (0..GROUPS)
            .map(|g| {
                (g * size..(g + 1) * size)
                    .map(value)
                    .fold(0u32, u32::wrapping_add)
            })
            .collect();
        assert_eq!(
            buffers[1].to_vec::<u32>(),
            expected,
            "workgroup size {size}"
        );
    }
}

#[test]
fn two_dimensional_workgroups_reduce_over_their_linear_index() {
    // The kernel above with the size taken from all three dimensions and
    // the slice from the linear index: warps are filled in local-index
    // order whatever the shape.
    let source = TREE_SUM
        .replace("%size = workgroup_size.x", "%sx = workgroup_size.x\n  %sy = workgroup_size.y\n  %sz = workgroup_size.z\n  %sxy = mul %sx, %sy\n  %size = mul %sxy, %sz")
        .replace("%gid = global_id.x", "%wgx = workgroup_id.x\n  %base = mul %wgx, %size\n  %gid = add %base, %local");
    let runtime = Runtime::new(config(2, 32)).expect("valid configuration");
    let kernel = kernel(&runtime, &source);
    for shape in [[32, 4, 1], [7, 7, 7], [1, 1, 1024], [33, 31, 1]] {
        let threads: u32 = shape.iter().product();
        let values: Vec<u32> = (0..2 * threads).collect();
        let mut buffers = vec![u32s(&values), zeros_u32(2)];
        run(&runtime, &kernel, [2, 1, 1], shape, &[], &mut buffers);
        let sum = |g: u32| (g * threads..(g + 1) * threads).fold(0u32, u32::wrapping_add);
        assert_eq!(
            buffers[1].to_vec::<u32>(),
            [sum(0), sum(1)],
            "shape {shape:?}"
        );
    }
}
