//! Which calls level 2 inlines (`jit/src/lower/inlining.rs`): a small
//! helper called from several places is inlined, a chain of functions that
//! each call the next twice is copied only while the copies are small, and
//! every result is the interpreter's.

mod direct;

use direct::{agree, module, optimised_ir, pattern};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::JitOptions;

/// A small helper called at two sites.
const HELPER_TWICE: &str = "
buffer @out[0]: u32

kernel @main workgroup(64) {
  %g = global_id.x
  %a = call @mix(%g)
  %b = call @mix(%a)
  %addr = shl %g, 2
  store.u32 @out, %addr, %b
}

func @mix(%x: i32) -> i32 {
  %r = bfr %x
  %s = xor %r, 0x5bd1e995
  return %s
}
";

/// `@level0` calls `@level1` twice, which calls `@level2` twice, and so on
/// down to `@level9`: inlining every call would copy the last level 512
/// times.
fn doubling_chain() -> String {
    let mut text = String::from(
        "
buffer @out[0]: u32

kernel @main workgroup(64) {
  %g = global_id.x
  %v = call @level0(%g)
  %addr = shl %g, 2
  store.u32 @out, %addr, %v
}
",
    );
    for level in 0..9 {
        let next = level + 1;
        let step = level + 1;
        text.push_str(&format!(
            "
func @level{level}(%x: i32) -> i32 {{
  %a = call @level{next}(%x)
  %y = add %x, {step}
  %b = call @level{next}(%y)
  %s = xor %a, %b
  return %s
}}
"
        ));
    }
    text.push_str(
        "
func @level9(%x: i32) -> i32 {
  %r = bfr %x
  %s = mul %r, 0x01000193
  return %s
}
",
    );
    text
}

fn one_launch(text: &str) {
    let configs = [LaunchConfig::new([2, 1, 1], [64, 1, 1])];
    let out = agree(text, &configs, &[vec![]], &[pattern(128 * 4, 3)]);
    // The launch did run: the output is not the input pattern any more.
    assert_ne!(out[0], pattern(128 * 4, 3));
}

#[test]
fn a_small_helper_called_twice_is_inlined() {
    let ir = optimised_ir(&module(HELPER_TWICE), &JitOptions::default());
    assert!(ir.contains("llvm.bitreverse"), "the helper's code in\n{ir}");
    assert!(
        !ir.contains("@f1.mix"),
        "the helper stayed a function in\n{ir}"
    );
    one_launch(HELPER_TWICE);
}

#[test]
fn a_doubling_call_chain_is_copied_only_while_small() {
    let text = doubling_chain();
    let ir = optimised_ir(&module(&text), &JitOptions::default());
    let copies = ir.matches("call <32 x i32> @llvm.bitreverse").count();
    assert!(
        copies >= 2,
        "the last level was not inlined anywhere:\n{ir}"
    );
    assert!(copies <= 16, "the last level copied {copies} times");
    assert!(ir.contains("call void @f"), "every call inlined in\n{ir}");
    one_launch(&text);
}
