//! Accesses whose lanes form a run per group of 8 lanes, found at run
//! time: a 2D workgroup 8 or 16 threads wide reads and writes a row's
//! elements from each group, other rows in the other groups. Compared
//! with the interpreter on every target and kind of code, with rows that
//! overlap (the higher lanes' stores stay), rows past the end of the
//! buffer, misaligned rows, groups whose first lane is inactive, and
//! groups with no active lane.

mod direct;
use direct::{agree, module, optimised_ir, pattern};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::{JitOptions, Target};

/// `dst[y * stride + x + shift] = src[...] + y`: each row of the
/// workgroup is a run. `%hide` is xor'ed into the index: 0 keeps the JIT
/// from knowing the shape when compiling, others swap elements within the
/// rows. `%mis` bytes are added to the addresses of the 4- and 8-byte
/// elements. `%skip_x`: lanes with that x do not take part; `%rows`: rows
/// at or past it do not.
const ROWS: &str = "
param %stride: i32
param %shift: i32
param %hide: i32
param %skip_x: i32
param %rows: i32
param %mis: i32
buffer @src[0]: u32
buffer @dst[1]: u32
buffer @wide[2]: u64
buffer @bytes[3]: u8
kernel @main workgroup(16, 4) {
  %x = global_id.x
  %y = global_id.y
  %row = mul %y, %stride
  %i = add %row, %x
  %j = add %i, %shift
  %k = xor %j, %hide
  %at4 = shl %k, 2
  %at = add %at4, %mis
  %skip = cmp.eq %x, %skip_x
  %low = cmp.lt.u %y, %rows
  %keep = cmp.ne %skip, %low
  if %keep {
    %v = load.u32 @src, %at
    %w = add %v, %y
    store.u32 @dst, %at, %w
    %at8x = shl %k, 3
    %at8 = add %at8x, %mis
    %q = load.u64 @wide, %at8
    %q1 = add %q, 3
    store.u64 @wide, %at8, %q1
    %b = load.u8 @bytes, %k
    %b1 = add %b, 5
    store.u8 @bytes, %k, %b1
  }
}
";

#[test]
fn rows_of_a_2d_workgroup_agree_with_the_interpreter() {
    let configs = [
        LaunchConfig::new([2, 2, 1], [16, 4, 1]),
        LaunchConfig::new([2, 1, 1], [8, 8, 1]),
        LaunchConfig::new([1, 2, 1], [16, 2, 1]),
    ];
    // stride, shift, hide, skip_x, rows, mis.
    let cases = [
        // Rows 64 elements apart, every lane: one run per group.
        [64, 0, 0, 99, 99, 0],
        // Rows of one another: every group writes the same elements.
        [0, 0, 0, 99, 99, 0],
        // Rows 8 apart: 16-wide rows overlap by half.
        [8, 0, 0, 99, 99, 0],
        // Rows in descending order.
        [0xffff_ffe0, 200, 0, 99, 99, 0],
        // The first lane of each group inactive, then another one.
        [64, 0, 0, 0, 99, 0],
        [64, 0, 0, 8, 99, 0],
        [64, 0, 0, 5, 99, 0],
        // Only the first row: groups without active lanes.
        [64, 3, 0, 99, 1, 0],
        // Rows far apart: the last ones past the end of the buffers.
        [200, 0, 0, 99, 99, 0],
    ];
    agree(ROWS, &configs, &params(&cases), &buffers(1));
}

fn params(cases: &[[u64; 6]]) -> Vec<Vec<u64>> {
    cases.iter().map(|c| c.to_vec()).collect()
}

fn buffers(salt: u32) -> Vec<Vec<u8>> {
    vec![
        pattern(4 * 300, salt),
        pattern(4 * 300, salt + 1),
        pattern(8 * 300, salt + 2),
        pattern(300, salt + 3),
    ]
}

#[test]
fn misaligned_swapped_and_wrapping_rows_agree_with_the_interpreter() {
    let configs = [LaunchConfig::new([1, 1, 1], [16, 4, 1])];
    let cases = [
        // Off the elements' alignment by 2 bytes and by 1.
        [64, 0, 0, 99, 99, 2],
        [64, 0, 0, 99, 99, 1],
        // Neighbours swapped, and pairs of them: not runs.
        [64, 0, 1, 99, 99, 0],
        [64, 0, 2, 99, 99, 0],
        // Rows near 2^32 / 4 apart: the later rows' addresses wrap.
        [0x3fff_fff8, 0, 0, 99, 99, 0],
    ];
    agree(ROWS, &configs, &params(&cases), &buffers(5));
}

/// Where masked accesses of the element exist, the code tests for runs
/// per group; bytes on AVX2 (no masked byte access) go lane by lane.
#[test]
fn the_group_test_is_emitted_where_masked_accesses_exist() {
    let m = module(ROWS);
    let groups = |target: Target| {
        let options = JitOptions {
            target,
            ..JitOptions::default()
        };
        // The blocks of the paths: `shaped.groups`, `shaped.groups20.i`, ...
        optimised_ir(&m, &options)
            .lines()
            .filter_map(|l| l.split(':').next())
            .filter(|label| label.starts_with("shaped.groups") && !label.contains("test"))
            .count()
    };
    // AVX2: u32 and u64 loads and stores, not bytes.
    assert_eq!(groups(Target::Avx2), 4);
    assert_eq!(groups(Target::Sse42), 0);
}
