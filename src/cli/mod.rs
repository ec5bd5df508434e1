//! The `warpjit` command line: `check`, `fmt`, `run`, `dump`, `bench`,
//! `compare` and the fuzzer's commands.
//!
//! Every failure ends in a non-zero exit and one `error:` line on stderr
//! (diagnostics in program text add their caret rendering above it).

// Output goes through these instead of `print!`, which panics when the
// reader has gone away (`warpjit run ... | head`); a closed pipe just ends
// the output.
macro_rules! out_text {
    ($($arg:tt)*) => { $crate::cli::write_all(&mut std::io::stdout(), &format!($($arg)*)) };
}
macro_rules! out_line {
    ($($arg:tt)*) => { $crate::cli::write_all(&mut std::io::stdout(), &format!("{}\n", format!($($arg)*))) };
}
macro_rules! err_text {
    ($($arg:tt)*) => { $crate::cli::write_all(&mut std::io::stderr(), &format!($($arg)*)) };
}
macro_rules! err_line {
    ($($arg:tt)*) => { $crate::cli::write_all(&mut std::io::stderr(), &format!("{}\n", format!($($arg)*))) };
}

fn write_all(stream: &mut dyn std::io::Write, text: &str) {
    let _ = stream
        .write_all(text.as_bytes())
        .and_then(|()| stream.flush());
}

mod bench;
mod check;
mod compare;
mod dump;
mod fmt;
mod fuzz;
mod jit_args;
mod replay;
mod run;

use clap::{ArgAction, Parser, Subcommand};
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "warpjit",
    version,
    about = "Run GPU-style warp programs on the CPU",
    args_override_self = true
)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG
    /// takes precedence when set.
    #[arg(short, long, action = ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and verify .warp files and report every error.
    Check(check::CheckArgs),
    /// Print a .warp file in canonical form (or check or rewrite it).
    Fmt(fmt::FmtArgs),
    /// Run a kernel of a .warp file (defaults from its `//! run:` lines).
    Run(run::RunArgs),
    /// Show the LLVM IR or the assembly the JIT generates for a .warp file.
    Dump(dump::DumpArgs),
    /// Differential fuzzing: random programs on the interpreter and the JIT.
    Fuzz(fuzz::FuzzArgs),
    /// Re-run a fuzz reproducer directory on every engine.
    Replay(replay::ReplayArgs),
    /// Run the benchmark suite and print times, throughput and speedups.
    Bench(bench::BenchArgs),
    /// Time two runs against each other: launches alternate in pairs.
    Compare(compare::CompareArgs),
}

/// Exit status of a command that failed because of its input.
const EXIT_FAILURE: u8 = 1;
/// Exit status of a command line clap rejected.
const EXIT_USAGE: u8 = 2;

/// Runs the command line of this process.
pub fn main() -> ExitCode {
    main_with_args(std::env::args_os())
}

/// Runs `args` (the first word is the program name).
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => {
            err_line!("error: {}", crate::run::options::one_line_clap_error(&e));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Check(args) => check::check(&args),
        Command::Fmt(args) => fmt::fmt(&args),
        Command::Run(args) => run::run(args),
        Command::Dump(args) => dump::dump(&args),
        Command::Fuzz(args) => fuzz::fuzz(&args),
        Command::Replay(args) => replay::replay(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::Compare(args) => compare::compare_command(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(EXIT_FAILURE),
        Err(Failure::Message(message)) => {
            err_line!("error: {message}");
            ExitCode::from(EXIT_FAILURE)
        }
        Err(Failure::Exit(status)) => ExitCode::from(status),
    }
}

/// Why a command failed.
enum Failure {
    /// Already explained on stderr (diagnostics and their summary line).
    Reported,
    /// One line to print after `error: `.
    Message(String),
    /// Reported on stdout already; exit with this status.
    Exit(u8),
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::Message(message)
    }
}

type CommandResult = Result<(), Failure>;

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(match verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }),
    };
    // A second initialisation (tests calling main_with_args twice) is harmless.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .try_init();
}

/// A `.warp` file read, parsed and verified: its name as shown, its text
/// and its module. Program errors are rendered on stderr with their
/// carets.
fn load_module(path: &Path) -> Result<(String, String, warpjit_ir::VerifiedModule), Failure> {
    let file = path.display().to_string();
    let source = crate::files::read_source(path)?;
    let module = warpjit_ir::text::parse(&source)
        .and_then(warpjit_ir::VerifiedModule::new)
        .map_err(|diagnostics| {
            err_text!("{}", diagnostics.render(&file, &source));
            Failure::Reported
        })?;
    Ok((file, source, module))
}
