//! Text format round trip over generated programs (docs/text-format.md:
//! "parsing a program and printing it gives that text, and parsing the
//! printed text gives the same program").

use proptest::prelude::*;
use warpjit_ir::generate::{generate, GenConfig, SplitMix64};
use warpjit_ir::text::{parse, print};
use warpjit_ir::verify::verify;

fn round_trip(seed: u64, cfg: &GenConfig) -> Result<(), String> {
    let m = generate(&mut SplitMix64::new(seed), cfg);
    let text = print(&m);
    let parsed = parse(&text).map_err(|d| {
        format!(
            "seed {seed}: printed text does not parse:\n{}\n{text}",
            d.render("printed", &text)
        )
    })?;
    if parsed != m {
        return Err(format!("seed {seed}: parse(print(m)) != m\n{text}"));
    }
    let again = print(&parsed);
    if again != text {
        return Err(format!(
            "seed {seed}: printing is not stable\nfirst:\n{text}\nsecond:\n{again}"
        ));
    }
    if !verify(&parsed).is_empty() {
        return Err(format!("seed {seed}: the parsed module does not verify"));
    }
    Ok(())
}

#[test]
fn generated_modules_round_trip_for_a_fixed_seed_range() {
    let cfg = GenConfig::default();
    for seed in 0..300 {
        if let Err(e) = round_trip(seed, &cfg) {
            panic!("{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn generated_modules_round_trip(seed in any::<u64>(), stmts in 1usize..120) {
        let cfg = GenConfig { max_stmts: stmts, ..GenConfig::default() };
        round_trip(seed, &cfg).map_err(TestCaseError::fail)?;
    }
}
