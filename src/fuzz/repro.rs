//! Reproducer directories: everything needed to re-run a finding.
//!
//! ```text
//! DIR/program.warp        the (reduced) program; its `//! run:` line
//!                         gives the launch (and the JIT's target and level
//!                         when not the defaults), with inputs from the
//!                         files below
//! DIR/input-NAME.bin      initial contents of buffer @NAME
//! DIR/reference-NAME.bin  @NAME after the reference interpreter
//! DIR/ENGINE-NAME.bin     @NAME after the engine that differs
//! DIR/diff.txt            what differs, readable
//! DIR/README.md           what was found and how to replay it
//! DIR/replay.sh           `warpjit replay DIR`
//! ```

use super::case::Finding;
use super::compare::describe;
use super::exec::{Launch, Machine, RunResult, FUEL};
use crate::values::format_hex;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use warpjit_ir::{Module, NumFormat, Type};
use warpjit_jit::JitOptions;

/// Where a finding came from.
pub struct Origin {
    pub campaign_seed: u64,
    pub case_index: u64,
    pub case_seed: u64,
}

/// Writes a reproducer for `finding` of `module` under `root` and returns
/// its directory (named after the kind and the case seed).
pub fn write(
    root: &Path,
    module: &Module,
    launch: &Launch,
    finding: &Finding,
    origin: &Origin,
    jit: JitOptions,
) -> Result<PathBuf, String> {
    let dir = root.join(format!("{}-{:016x}", finding.kind.name(), origin.case_seed));
    let header = format!(
        "// warpjit fuzz found a {} between the reference interpreter and {} \
         (campaign seed {}, case {}, case seed {:#x}).\n// Replay: warpjit replay {}\n",
        finding.kind.name(),
        finding.engine.name(),
        origin.campaign_seed,
        origin.case_index,
        origin.case_seed,
        dir.display(),
    );
    write_program(&dir, module, launch, finding.machine, jit, &header)?;
    let io = |e: std::io::Error, what: &Path| format!("cannot write {}: {e}", what.display());
    let write_file = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| io(e, &path))
    };
    let names: Vec<String> = module.buffers.iter().map(|b| b.name.clone()).collect();
    for (label, result) in [
        ("reference", &finding.reference),
        (finding.engine.name(), &finding.other),
    ] {
        if let RunResult::Finished { buffers, .. } = result {
            for (name, bytes) in names.iter().zip(buffers) {
                write_file(&format!("{label}-{name}.bin"), bytes)?;
            }
        }
    }
    let diff = describe(
        &names,
        "reference",
        &finding.reference,
        finding.engine.name(),
        &finding.other,
    );
    write_file("diff.txt", diff.as_bytes())?;
    let readme = format!(
        "# {} found by `warpjit fuzz`\n\n\
         Engine `{}` differs from the reference interpreter on {} SM(s) with {} warp slots each; \
         the JIT compiled for target `{}` at optimisation level {}.\n\
         Found by `warpjit fuzz --seed {}` as case {} (case seed {:#x}), then reduced.\n\n\
         - `program.warp`: the program; its `//! run:` line is the launch \
         (`cd` here and `warpjit run program.warp` runs it on the interpreter)\n\
         - `input-*.bin`: initial buffers; `reference-*.bin` and `{}-*.bin`: buffers after each run\n\
         - `diff.txt`: the difference\n\n\
         Replay on every engine (exit status 0: no difference any more, 3: still differs):\n\n\
         ```sh\nwarpjit replay {}\n```\n",
        finding.kind.name(),
        finding.engine.name(),
        finding.machine.sm_count,
        finding.machine.warps_per_sm,
        jit.target.name(),
        jit.opt_level,
        origin.campaign_seed,
        origin.case_index,
        origin.case_seed,
        finding.engine.name(),
        dir.display(),
    );
    write_file("README.md", readme.as_bytes())?;
    write_file(
        "replay.sh",
        b"#!/bin/sh\n# Re-runs this reproducer on every engine; exit status 3 while it still differs.\nexec warpjit replay \"$(dirname \"$0\")\"\n",
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("replay.sh");
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
    }
    Ok(dir)
}

/// Writes the program of a case about to run to `root/running-SEED`, so
/// that a fatal signal (a crash inside LLVM or in compiled code), which
/// ends the process, leaves it behind; the caller removes the directory
/// when the case is done.
pub fn write_running(
    root: &Path,
    module: &Module,
    launch: &Launch,
    machine: Machine,
    origin: &Origin,
    jit: JitOptions,
) -> Result<PathBuf, String> {
    let dir = root.join(format!("running-{:016x}", origin.case_seed));
    let header = format!(
        "// warpjit fuzz was running this case (campaign seed {}, case {}, case seed {:#x}) when the\n\
         // process ended. If it died of a signal, this case or another job's running-* case caused\n\
         // it. Replay: warpjit replay {}\n",
        origin.campaign_seed,
        origin.case_index,
        origin.case_seed,
        dir.display(),
    );
    write_program(&dir, module, launch, machine, jit, &header)?;
    Ok(dir)
}

/// Writes `dir/program.warp` (`header`, the `//! run:` line, the module)
/// and the `input-NAME.bin` files it reads: a directory `warpjit replay`
/// runs.
pub fn write_program(
    dir: &Path,
    module: &Module,
    launch: &Launch,
    machine: Machine,
    jit: JitOptions,
    header: &str,
) -> Result<(), String> {
    let io = |e: std::io::Error, what: &Path| format!("cannot write {}: {e}", what.display());
    std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
    for (decl, bytes) in module.buffers.iter().zip(&launch.buffers) {
        let path = dir.join(format!("input-{}.bin", decl.name));
        std::fs::write(&path, bytes).map_err(|e| io(e, &path))?;
    }
    let program = format!(
        "{header}{}\n{}",
        run_directive(module, launch, machine, jit),
        warpjit_ir::text::print(module)
    );
    let path = dir.join("program.warp");
    std::fs::write(&path, program).map_err(|e| io(e, &path))
}

/// The `//! run:` line of a launch: geometry, machine, fuel, the JIT's
/// target and level where they are not the defaults, parameters as bit
/// patterns and buffers from the `input-*.bin` files.
pub fn run_directive(
    module: &Module,
    launch: &Launch,
    machine: Machine,
    jit: JitOptions,
) -> String {
    let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
    let mut line = format!(
        "//! run: --grid {} --workgroup {} --sms {} --warps-per-sm {} --fuel {FUEL}",
        dims(launch.grid),
        dims(launch.workgroup),
        machine.sm_count,
        machine.warps_per_sm,
    );
    let defaults = JitOptions::default();
    if jit.target != defaults.target {
        let _ = write!(line, " --target {}", jit.target.name());
    }
    if jit.opt_level != defaults.opt_level {
        let _ = write!(line, " --opt-level {}", jit.opt_level);
    }
    // Recorded always: its default depends on the host.
    let _ = write!(line, " --prefetch-ahead {}", jit.prefetch_ahead.name());
    for (p, bits) in module.params.iter().zip(&launch.params) {
        let value = match p.ty {
            Type::Bool => (if *bits & 1 == 1 { "true" } else { "false" }).to_string(),
            Type::F16 => format_hex(NumFormat::F16, *bits),
            Type::F32 => format_hex(NumFormat::F32, *bits),
            Type::F64 => format_hex(NumFormat::F64, *bits),
            ty => format!("{:#x}", bits & ty.bit_mask()),
        };
        let _ = write!(line, " --param {}={value}", p.name);
    }
    for b in &module.buffers {
        let _ = write!(line, " --buffer {0}=file:input-{0}.bin:u8", b.name);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpjit_jit::{PrefetchAhead, Target};

    #[test]
    fn the_run_line_names_the_jit_target_and_level_only_when_not_the_defaults() {
        let module =
            warpjit_ir::text::parse("buffer @out[0]: u32\nkernel @main {\n}\n").expect("parses");
        let launch = Launch {
            grid: [1, 1, 1],
            workgroup: [32, 1, 1],
            params: vec![],
            buffers: vec![vec![0; 4]],
        };
        let machine = Machine {
            sm_count: 2,
            warps_per_sm: 8,
        };
        let line = |jit| run_directive(&module, &launch, machine, jit);
        let plain = line(JitOptions {
            prefetch_ahead: PrefetchAhead::On,
            ..JitOptions::default()
        });
        assert!(
            !plain.contains("--target")
                && !plain.contains("--opt-level")
                && plain.contains(" --prefetch-ahead on "),
            "{plain}"
        );
        let other = line(JitOptions {
            target: Target::Sse42,
            opt_level: 0,
            prefetch_ahead: PrefetchAhead::WithoutStores,
            ..JitOptions::default()
        });
        assert!(
            other.contains(" --target sse4.2 --opt-level 0 --prefetch-ahead without-stores "),
            "{other}"
        );
    }
}
