//! The proptest strategies of the `proptest` feature
//! (`cargo test -p warpjit-ir --features proptest`).
#![cfg(feature = "proptest")]

use proptest::prelude::*;
use warpjit_ir::generate::{strategy, GenConfig};
use warpjit_ir::verify::verify;

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn strategy_cases_verify(case in strategy::cases(GenConfig::default())) {
        let errors = verify(&case.module);
        prop_assert!(errors.is_empty(), "{:?}", errors);
        prop_assert_eq!(case.buffer_sizes.len(), 3);
    }

    #[test]
    fn strategy_modules_respect_the_statement_budget(
        m in strategy::modules(GenConfig { max_stmts: 5, max_functions: 0, ..GenConfig::default() })
    ) {
        // Five statements at most, each a handful of instructions, plus the
        // fixed prologue and the final records.
        let mut count = 0;
        warpjit_ir::walk_block(&m.functions[0].body, &mut |_| count += 1);
        prop_assert!(count < 200, "{} statements", count);
        prop_assert!(verify(&m).is_empty());
    }
}
