//! `warpjit replay DIR`: re-run a reproducer on every engine.

use super::{CommandResult, Failure};
use crate::fuzz::replay_dir;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// A reproducer directory written by `warpjit fuzz` (with program.warp).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// Exit status when the reproducer still shows a difference.
pub const EXIT_STILL_DIFFERS: u8 = 3;

pub fn replay(args: &ReplayArgs) -> CommandResult {
    let replay = replay_dir(&args.dir)?;
    out_line!(
        "JIT for {} at -O{}",
        replay.jit.target.name(),
        replay.jit.opt_level
    );
    for v in &replay.verdicts {
        let verdict = match v.finding {
            Some(kind) => format!("DIFFERS ({})", kind.name()),
            None => "same as the reference".to_string(),
        };
        out_line!(
            "{} on {} SM(s), {} warp slots: {verdict}",
            v.engine.name(),
            v.machine.sm_count,
            v.machine.warps_per_sm
        );
        if v.finding.is_some() {
            for line in v.report.lines() {
                out_line!("  {line}");
            }
        }
    }
    if replay.differs() {
        out_line!("{}: still differs", args.dir.display());
        Err(Failure::Exit(EXIT_STILL_DIFFERS))
    } else {
        out_line!("{}: no difference", args.dir.display());
        Ok(())
    }
}
