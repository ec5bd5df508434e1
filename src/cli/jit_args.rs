//! The JIT's instruction set, optimisation level and prefetching, as the
//! commands that compile (`dump`, `fuzz`) take them.

use warpjit_jit::{JitOptions, Target};

#[derive(clap::Args, Clone, Copy, Debug)]
pub struct JitArgs {
    /// JIT optimisation level.
    #[arg(
        short = 'O',
        long = "opt-level",
        value_name = "0-3",
        default_value_t = JitOptions::default().opt_level,
        value_parser = clap::value_parser!(u8).range(0..=3)
    )]
    pub opt_level: u8,
    /// JIT instruction set: native (everything the host has), avx2 or sse4.2.
    #[arg(long, value_name = "TARGET", default_value = "native", value_parser = crate::run::options::parse_target)]
    pub target: Target,
    #[command(flatten)]
    pub prefetch: crate::run::options::PrefetchArg,
}

impl JitArgs {
    /// The options for code that runs any workgroup; `JitOptions`'
    /// `for_*` methods give the other kinds.
    pub fn options(self) -> JitOptions {
        JitOptions {
            opt_level: self.opt_level,
            target: self.target,
            prefetch_ahead: self.prefetch.prefetch_ahead(),
            ..JitOptions::default()
        }
    }
}
