//! Arbitrary bytes into the text parser, the verifier, the printer and the
//! formatter: none may panic or hang, and a module that verifies must print
//! to text that parses and verifies again to the same module.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpjit_ir::{text, VerifiedModule};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let _ = text::format(source);
    let Ok(module) = text::parse(source) else {
        return;
    };
    let Ok(verified) = VerifiedModule::new(module) else {
        return;
    };
    let printed = text::print(&verified);
    let reparsed = text::parse(&printed)
        .unwrap_or_else(|d| panic!("printed module does not parse: {d:?}\n{printed}"));
    let again = VerifiedModule::new(reparsed)
        .unwrap_or_else(|d| panic!("printed module does not verify: {d:?}\n{printed}"));
    assert_eq!(
        text::print(&again),
        printed,
        "printing is not stable across a round trip"
    );
});
