//! Code for one workgroup size (`JitOptions::workgroup`): the sizes are
//! constants, the IDs follow from them without run-time tests, and the
//! code refuses launches of any other size.

mod direct;
use direct::{agree, module};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::{compile, launch, JitError, JitOptions};

/// Every invocation writes its IDs to 8 words at its global linear index,
/// and reads back a word by its global x and y (an address consecutive
/// only when warps lie in rows).
const IDS: &str = "
buffer @out[0]: u32
buffer @input[1]: u32
kernel @main workgroup(64) {
  %lx = local_id.x
  %ly = local_id.y
  %lz = local_id.z
  %gx = global_id.x
  %gy = global_id.y
  %gz = global_id.z
  %sx = workgroup_size.x
  %sy = workgroup_size.y
  %sz = workgroup_size.z
  %nx = num_workgroups.x
  %ny = num_workgroups.y
  %wx = workgroup_id.x
  %wy = workgroup_id.y
  %wz = workgroup_id.z
  %index = local_index
  %plane = mul %wz, %ny
  %row = add %plane, %wy
  %rows = mul %row, %nx
  %group = add %rows, %wx
  %sxy = mul %sx, %sy
  %size = mul %sxy, %sz
  %first = mul %group, %size
  %linear = add %first, %index
  %width = mul %nx, %sx
  %at_y = mul %gy, %width
  %cell = add %at_y, %gx
  %cell_addr = shl %cell, 2
  %read = load.u32 @input, %cell_addr
  %base = shl %linear, 5
  store.u32 @out, %base, %lx
  %a1 = add %base, 4
  store.u32 @out, %a1, %ly
  %a2 = add %base, 8
  store.u32 @out, %a2, %lz
  %a3 = add %base, 12
  store.u32 @out, %a3, %gx
  %a4 = add %base, 16
  store.u32 @out, %a4, %gy
  %a5 = add %base, 20
  store.u32 @out, %a5, %gz
  %a6 = add %base, 24
  store.u32 @out, %a6, %size
  %a7 = add %base, 28
  store.u32 @out, %a7, %read
}";

/// Rows of 32 and more, narrower rows in 2 and 3 dimensions, x sizes that
/// are not a multiple of 32 (warps crossing rows), and partial warps.
const SIZES: [[u32; 3]; 9] = [
    [64, 1, 1],
    [32, 2, 2],
    [96, 1, 1],
    [16, 4, 1],
    [8, 4, 2],
    [48, 2, 1],
    [100, 1, 1],
    [24, 1, 3],
    [1, 1, 1],
];

#[test]
fn ids_of_code_for_each_size_match_the_interpreter() {
    let configs: Vec<LaunchConfig> = SIZES
        .iter()
        .map(|&size| LaunchConfig::new([2, 2, 1], size))
        .collect();
    // `direct::agree` runs each launch on every kind of code that can run
    // it, the code for exactly its size among them.
    let out = vec![0xa5u8; 4 * 128 * 32];
    let input = direct::pattern(4 * 128 * 4, 3);
    let memory = agree(IDS, &configs, &[vec![]], &[out, input]);
    // The last launch (one invocation per group) wrote its IDs.
    let word = |i: usize| u32::from_le_bytes(memory[0][4 * i..4 * i + 4].try_into().unwrap());
    // Group (1, 1): linear index 3, global id (1, 1, 0), size 1.
    assert_eq!(
        (0..7).map(|k| word(3 * 8 + k)).collect::<Vec<_>>(),
        [0, 0, 0, 1, 1, 0, 1]
    );
}

#[test]
fn code_for_one_size_refuses_other_sizes() {
    let m = module(IDS);
    let main = m.find_function("main").expect("@main");
    let compiled = compile(&m, &JitOptions::default().for_workgroup([64, 1, 1])).expect("compiles");
    for (workgroup, runs) in [
        ([64, 1, 1], true),
        ([32, 2, 1], false),
        ([128, 1, 1], false),
    ] {
        let cfg = LaunchConfig::new([1, 1, 1], workgroup);
        let mut memory = vec![vec![0u8; 4 * 128 * 32], vec![0u8; 4 * 128 * 4]];
        match launch(&compiled, main, &cfg, &[], &mut memory) {
            Ok(_) => assert!(runs, "{workgroup:?} ran"),
            Err(JitError::Launch(why)) => {
                assert!(!runs, "{workgroup:?}: {why}");
                assert!(why.contains("compiled for workgroups of 64x1x1"), "{why}");
            }
            Err(e) => panic!("{workgroup:?}: {e}"),
        }
    }
}

/// Code for a size whose warps lie in rows has no test of the launch's
/// sizes: fewer loads from the context than code for any size.
#[test]
fn code_for_one_size_reads_no_sizes() {
    let m = module(IDS);
    let ir = |options: JitOptions| direct::optimised_ir(&m, &options);
    let any = JitOptions::default().for_sizes_like([64, 1, 1]);
    let (exact, general) = (ir(any.for_workgroup([64, 1, 1])), ir(any));
    // The general code finds local ids of narrow workgroups by a division.
    assert!(general.contains("fdiv"), "{general}");
    assert!(!exact.contains("fdiv"), "{exact}");
    let loads = |ir: &str| ir.matches(" = load ").count();
    assert!(loads(&exact) < loads(&general), "{exact}\n{general}");
}
