//! The deepest nesting the parser accepts must survive every later stage
//! (verifier, printer, generator walkers, interpreter) on a small thread stack
//! in an unoptimised build.

use warpjit_ir::interp::{launch, LaunchConfig};
use warpjit_ir::text::{parse, print, MAX_NESTING};
use warpjit_ir::verify::VerifiedModule;

fn deep_program(depth: usize) -> String {
    let mut src =
        String::from("buffer @out[0]: u32\nkernel @main {\n  var $n: i32\n  %lane = lane_id\n");
    for _ in 1..depth {
        src.push_str("if true {\n$n = add $n, 1\n");
    }
    src.push_str("%addr = shl %lane, 2\nstore.u32 @out, %addr, $n\n");
    for _ in 1..depth {
        src.push_str("}\n");
    }
    src.push_str("}\n");
    src
}

#[test]
fn deepest_accepted_program_runs_through_every_stage_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let src = deep_program(MAX_NESTING);
            let module = parse(&src).expect("depth at the limit parses");
            let printed = print(&module);
            assert_eq!(parse(&printed).expect("printed text parses"), module);
            let verified = VerifiedModule::new(module).expect("verifies");
            let kernel = verified.find_function("main").unwrap();
            let cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
            let mut buffers = vec![vec![0u8; 128]];
            launch(&verified, kernel, &cfg, &[], &mut buffers).expect("runs");
            let first = u32::from_le_bytes(buffers[0][0..4].try_into().unwrap());
            assert_eq!(first as usize, MAX_NESTING - 1);
        })
        .unwrap();
    handle.join().expect("no stack overflow");
}

#[test]
fn one_level_deeper_is_a_parse_error() {
    let err = parse(&deep_program(MAX_NESTING + 1)).unwrap_err();
    assert!(err.0[0].message.contains("nest"), "{}", err.0[0].message);
}
