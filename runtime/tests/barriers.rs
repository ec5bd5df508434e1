//! Barriers and shared memory on the runtime: a tree reduction with a
//! barrier after every step gives the right sum for every workgroup size
//! from 1 to 1024 invocations (up to 32 warps, the last one partial).

mod support;
use support::*;
use warpjit_runtime::Runtime;

#[test]
fn tree_reduction_is_right_for_every_workgroup_size_from_1_to_1024() {
    // 32 warp slots: exactly enough for 1024 invocations.
    let runtime = Runtime::new(config(3, 32)).expect("valid configuration");
    check_tree_sum_for_every_workgroup_size(&runtime);
}

#[test]
fn two_dimensional_workgroups_reduce_over_their_linear_index() {
    // The tree sum with the size taken from all three dimensions and
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
