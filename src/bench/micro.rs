//! Micro-benchmarks: one per intrinsic family (docs/benchmarks.md). Each
//! is a loop over a value kept in registers, so it measures the
//! instruction and not memory: every iteration runs the family's
//! operation four times, each copy feeding the next through `$x` (or `$f`)
//! so that nothing can be skipped, and the loop's result is stored once at
//! the end. The loads and buffer atomics cases touch a 64 KiB buffer that
//! stays in cache; the shared atomics case, a workgroup's 256 counters.

use crate::bench::inputs::{hash_values, u32_bytes};
use crate::bench::{parse_module, Launch, Prepared, Size};
use warpjit_runtime::param;

/// One micro-benchmark.
pub struct Micro {
    pub name: &'static str,
    pub what: &'static str,
    /// One copy of the measured operation; `{n}` (0..4) keeps its value
    /// names apart from the other copies'.
    body: &'static str,
    pub unit: &'static str,
}

/// Copies of the body per loop iteration.
const COPIES: u32 = 4;
/// 32-bit words of `@data` (64 KiB), indexed with `& (DATA_WORDS - 1)`.
const DATA_WORDS: u32 = 16384;

macro_rules! micro {
    ($name:literal, $what:literal, $body:literal) => {
        Micro {
            name: $name,
            what: $what,
            body: $body,
            unit: "lane-ops",
        }
    };
}

/// Every micro-benchmark, in the order of docs/benchmarks.md.
pub const MICROS: [Micro; 21] = [
    micro!("shuffle_idx_const", "shuffle.idx from one fixed lane",
        "%s{n} = shuffle.idx $x, 5, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_idx_lane", "shuffle.idx with a data-dependent lane per lane",
        "%i{n} = and $x, 31\n%s{n} = shuffle.idx $x, %i{n}, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_up_const", "shuffle.up by 1",
        "%s{n} = shuffle.up $x, 1, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_up_lane", "shuffle.up by a data-dependent delta per lane",
        "%i{n} = and $x, 7\n%s{n} = shuffle.up $x, %i{n}, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_down_const", "shuffle.down by 1",
        "%s{n} = shuffle.down $x, 1, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_down_lane", "shuffle.down by a data-dependent delta per lane",
        "%i{n} = and $x, 7\n%s{n} = shuffle.down $x, %i{n}, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_xor_const", "shuffle.xor with mask 1",
        "%s{n} = shuffle.xor $x, 1, width 32\n$x = add $x, %s{n}"),
    micro!("shuffle_xor_lane", "shuffle.xor with a data-dependent mask per lane",
        "%i{n} = and $x, 31\n%s{n} = shuffle.xor $x, %i{n}, width 32\n$x = add $x, %s{n}"),
    micro!("ballot", "ballot of a data-dependent predicate",
        "%b{n} = and $x, 1\n%p{n} = cmp.eq %b{n}, 0\n%v{n} = ballot %p{n}\n$x = add $x, %v{n}"),
    micro!("vote_all", "vote.all of a data-dependent predicate",
        "%b{n} = and $x, 3\n%p{n} = cmp.ne %b{n}, 0\n%v{n} = vote.all %p{n}\n%s{n} = select %v{n}, 3:i32, 1\n$x = add $x, %s{n}"),
    micro!("vote_any", "vote.any of a data-dependent predicate",
        "%b{n} = and $x, 3\n%p{n} = cmp.eq %b{n}, 0\n%v{n} = vote.any %p{n}\n%s{n} = select %v{n}, 3:i32, 1\n$x = add $x, %s{n}"),
    micro!("vote_eq", "vote.eq of a data-dependent predicate",
        "%b{n} = and $x, 3\n%p{n} = cmp.ne %b{n}, 0\n%v{n} = vote.eq %p{n}\n%s{n} = select %v{n}, 3:i32, 1\n$x = add $x, %s{n}"),
    micro!("quad_swizzle", "quad.1 swizzle of an f32",
        "%q{n} = quad.1 $f\n$f = mul %q{n}, 0.999"),
    micro!("active_mask_divergent", "active_mask inside an if taken by about half the lanes",
        "%b{n} = and $x, 1\n%odd{n} = cmp.ne %b{n}, 0\nif %odd{n} {\n%a{n} = active_mask\n$x = add $x, %a{n}\n}\n$x = add $x, 1"),
    micro!("if_uniform", "if/else whose condition is the same in every lane",
        "%b{n} = and $k, 1\n%c{n} = cmp.eq %b{n}, 0\nif %c{n} {\n$x = add $x, 3\n} else {\n$x = xor $x, 5\n}"),
    micro!("if_divergent", "if/else whose condition differs between lanes",
        "%b{n} = and $x, 1\n%c{n} = cmp.eq %b{n}, 0\nif %c{n} {\n$x = add $x, 3\n} else {\n$x = xor $x, 5\n}"),
    micro!("load_contiguous", "load.u32 of 32 consecutive words per warp",
        "%kk{n} = shl $k, 7\n%a{n} = add %gid, %kk{n}\n%c{n} = add %a{n}, {n}\n%w{n} = and %c{n}, 16383\n%addr{n} = shl %w{n}, 2\n%v{n} = load.u32 @data, %addr{n}\n$x = add $x, %v{n}"),
    micro!("load_gather", "load.u32 from a data-dependent word per lane",
        "%h{n} = mul $x, -1640531535\n%w{n} = shr.u %h{n}, 18\n%addr{n} = shl %w{n}, 2\n%v{n} = load.u32 @data, %addr{n}\n$x = add $x, %v{n}"),
    micro!("atomic_same_address", "atom.add.u32 by every lane to one word",
        "%o{n} = atom.add.u32 @data, 0, 1\n$x = add $x, 1"),
    micro!("atomic_distinct", "atom.add.u32 by every lane to its own word",
        "%w{n} = and %gid, 16383\n%addr{n} = shl %w{n}, 2\n%o{n} = atom.add.u32 @data, %addr{n}, 1\n$x = add $x, 1"),
    micro!("atomic_shared_bins", "atom.add.u32 to shared memory, each lane to a data-dependent one of 256 words (a histogram's count)",
        "%h{n} = mul $x, -1640531535\n%w{n} = shr.u %h{n}, 24\n%addr{n} = shl %w{n}, 2\n%o{n} = atom.add.u32 @bins, %addr{n}, 1\n$x = add $x, 1"),
];

impl Micro {
    /// The whole `.warp` program.
    pub fn source(&self) -> String {
        let mut body = String::new();
        for n in 0..COPIES {
            for line in self.body.replace("{n}", &n.to_string()).lines() {
                body.push_str("    ");
                body.push_str(line);
                body.push('\n');
            }
        }
        format!(
            "// Micro-benchmark {name}: {what}, {COPIES} times per iteration.
param %iters: i32
buffer @out[0]: u32
buffer @data[1]: u32
shared @bins[1024]

kernel @main workgroup(256) {{
  var $x: i32
  var $f: f32
  var $k: i32

  %gid = global_id.x
  $x = mov %gid
  $f = cvt.f32.s32 %gid
  loop {{
    %done = cmp.ge.s $k, %iters
    if %done {{
      break
    }}
{body}    $k = add $k, 1
  }}
  %f_bits = bitcast.i32 $f
  %result = xor $x, %f_bits
  %out_addr = shl %gid, 2
  store.u32 @out, %out_addr, %result
}}
",
            name = self.name,
            what = self.what,
        )
    }

    pub fn prepare(&self, size: Size) -> Result<Prepared, String> {
        let (groups, iters) = match size {
            Size::Full => (64u32, 256u32),
            Size::Small => (2, 8),
        };
        let invocations = groups * 256;
        let source = self.source();
        let file = format!("micro.{}.warp", self.name);
        Ok(Prepared {
            launch: Launch {
                module: parse_module(&file, &source)?,
                grid: [groups, 1, 1],
                workgroup: [256, 1, 1],
                params: vec![param(iters)],
                buffers: vec![
                    vec![0; invocations as usize * 4],
                    u32_bytes(&hash_values(DATA_WORDS as usize)),
                ],
            },
            units: f64::from(invocations) * f64::from(iters) * f64::from(COPIES),
            baseline: None,
            check: None,
        })
    }
}
