//! Any program that parses and verifies must compile, or be declined as
//! unsupported: no panic, no LLVM error. Seed the corpus with
//! `examples/` and `tests/filetests/` (see README.md).
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpjit_ir::{text, VerifiedModule};
use warpjit_jit::{compile, JitError, JitOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(module) = text::parse(source) else {
        return;
    };
    let Ok(verified) = VerifiedModule::new(module) else {
        return;
    };
    match compile(&verified, &JitOptions::default()) {
        Ok(_) | Err(JitError::Unsupported(_)) => {}
        Err(e) => panic!("JIT failed on a verified program: {e}"),
    }
});
