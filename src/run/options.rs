//! The options of `warpjit run`, as typed on the command line or in a
//! file's `//! run:` lines. Only syntax is checked here; what needs the
//! module (names, types, sizes) is checked when the run is planned.

use crate::buffers::BufferSpec;
use crate::values::{self, parse_format};
use clap::Parser;
use std::time::Duration;
use warpjit_ir::NumFormat;
use warpjit_jit::{JitOptions, PrefetchAhead, Target};
use warpjit_runtime::MAX_SM_COUNT;

/// Which engine executes the kernel's workgroups on the runtime's SMs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Machine code from the JIT (LLVM), one 32-wide SIMD stream per warp.
    #[default]
    Jit,
    /// The reference interpreter (lane by lane, the semantics oracle).
    Interp,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Jit => "jit",
            Backend::Interp => "interp",
        }
    }

    /// Whether launch reports count executed statements.
    pub fn counts_statements(self) -> bool {
        self == Backend::Interp
    }
}

/// `--sms`: 1 to `MAX_SM_COUNT` (checked when the options are read, so a
/// `//! run:` line's mistake names its line).
fn parse_sms(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|e| format!("{e}"))?;
    match n {
        0 => Err("need at least one SM".into()),
        n if n > MAX_SM_COUNT => Err(format!("at most {MAX_SM_COUNT} SMs (one thread each)")),
        n => Ok(n),
    }
}

/// `--warps-per-sm`: at least 1.
fn parse_warp_slots(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|e| format!("{e}"))?;
    if n == 0 {
        return Err("need at least one warp slot".into());
    }
    Ok(n)
}

/// The JIT's instruction set: `native`, `avx2` or `sse4.2`
/// (`Target::name`; `sse42` is also taken).
pub fn parse_target(s: &str) -> Result<Target, String> {
    let s = if s == "sse42" { "sse4.2" } else { s };
    [Target::Native, Target::Avx2, Target::Sse42]
        .into_iter()
        .find(|t| t.name() == s)
        .ok_or_else(|| "expected native, avx2 or sse4.2".into())
}

/// `on`, `off` or `without-stores` (`PrefetchAhead::name`).
pub fn parse_prefetch_ahead(s: &str) -> Result<PrefetchAhead, String> {
    PrefetchAhead::parse(s).ok_or_else(|| "expected on, off or without-stores".into())
}

/// Which of the JIT's buffer accesses outside loops prefetch a page
/// ahead, as every command that compiles takes it.
#[derive(clap::Args, Clone, Copy, Debug, Default, PartialEq)]
pub struct PrefetchArg {
    /// Whether the JIT's buffer accesses outside loops prefetch a page
    /// ahead: on, off, or without-stores (only in programs that store to
    /// no buffer). Default: on, except on CPUs where kernels that store
    /// measured slower with it (AMD Zen 4: without-stores).
    #[arg(long = "prefetch-ahead", value_name = "on|off|without-stores", value_parser = parse_prefetch_ahead)]
    pub prefetch_ahead: Option<PrefetchAhead>,
}

impl PrefetchArg {
    /// The choice given, or the default for this host.
    pub fn prefetch_ahead(self) -> PrefetchAhead {
        self.prefetch_ahead
            .unwrap_or_else(|| JitOptions::default().prefetch_ahead)
    }
}

#[derive(clap::Args, Clone, Debug, Default, PartialEq)]
pub struct RunOptions {
    /// Kernel to launch (default: the only kernel, or @main).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Workgroups per dimension (default 1).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = Dims::parse, allow_negative_numbers = true)]
    pub grid: Option<Dims>,
    /// Threads per workgroup (default: the kernel's workgroup(...) attribute,
    /// else 32).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = Dims::parse, allow_negative_numbers = true)]
    pub workgroup: Option<Dims>,
    /// Set a parameter, read in its declared type (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = ParamArg::parse)]
    pub params: Vec<ParamArg>,
    /// Fill a buffer: zeros|const|iota|random|file spec (repeatable).
    #[arg(long = "buffer", value_name = "NAME|BINDING=SPEC", value_parser = BufferArg::parse)]
    pub buffers: Vec<BufferArg>,
    /// Print (part of) a buffer after the run (repeatable).
    #[arg(
        long = "print",
        value_name = "NAME|BINDING[:RANGE][:hex|:dec][:TYPE]",
        value_parser = PrintArg::parse
    )]
    pub prints: Vec<PrintArg>,
    /// Write a buffer after the run: raw bytes, .txt (decimal lines) or .pgm.
    #[arg(long = "output", value_name = "NAME|BINDING=PATH", value_parser = OutputArg::parse)]
    pub outputs: Vec<OutputArg>,
    /// Image size for .pgm outputs.
    #[arg(long, value_name = "WxH", value_parser = ImageSize::parse)]
    pub image: Option<ImageSize>,
    /// Execution engine of each workgroup (default jit).
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<Backend>,
    /// JIT optimisation level (default 2).
    #[arg(
        short = 'O',
        long = "opt-level",
        value_name = "0-3",
        value_parser = clap::value_parser!(u8).range(0..=3)
    )]
    pub opt_level: Option<u8>,
    /// JIT instruction set: native (everything the host has), avx2 or sse4.2.
    #[arg(long, value_name = "TARGET", value_parser = parse_target)]
    pub target: Option<Target>,
    #[command(flatten)]
    pub prefetch: PrefetchArg,
    /// Simulated SMs, one thread each (default: one per core; at most 1024).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_sms)]
    pub sms: Option<u32>,
    /// Warp slots per SM; a workgroup may not have more warps (default 64).
    #[arg(
        long = "warps-per-sm",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = parse_warp_slots
    )]
    pub warps_per_sm: Option<u32>,
    /// Fuel of each warp: statements (interp) or loop tests (jit: one per
    /// iteration, one more when a loop ends) before the run is stopped.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub fuel: Option<u64>,
    /// Stop the run after this many seconds of wall time (default 60; 0: never).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub watchdog: Option<Duration>,
}

impl RunOptions {
    /// `self` with `later` applied on top: single-valued options of `later`
    /// win; repeatable ones are appended (for the same buffer or parameter
    /// the last one wins when the run is planned).
    pub fn then(mut self, later: RunOptions) -> RunOptions {
        self.kernel = later.kernel.or(self.kernel);
        self.grid = later.grid.or(self.grid);
        self.workgroup = later.workgroup.or(self.workgroup);
        self.image = later.image.or(self.image);
        self.backend = later.backend.or(self.backend);
        self.opt_level = later.opt_level.or(self.opt_level);
        self.target = later.target.or(self.target);
        self.prefetch.prefetch_ahead = later
            .prefetch
            .prefetch_ahead
            .or(self.prefetch.prefetch_ahead);
        self.sms = later.sms.or(self.sms);
        self.warps_per_sm = later.warps_per_sm.or(self.warps_per_sm);
        self.fuel = later.fuel.or(self.fuel);
        self.watchdog = later.watchdog.or(self.watchdog);
        self.params.extend(later.params);
        self.buffers.extend(later.buffers);
        self.prints.extend(later.prints);
        self.outputs.extend(later.outputs);
        self
    }

    /// Options from the words of a `//! run:` line; `origin` (e.g.
    /// `file.warp:3`) prefixes errors and is remembered by each argument.
    pub fn from_words(words: &[String], origin: &str) -> Result<RunOptions, String> {
        RunOptions::from_words_in(words, origin, "//! run: ")
    }

    /// Options from `words` given somewhere else than a `//! run:` line;
    /// `context` (e.g. `--b: `) comes between `origin` and the error.
    pub fn from_words_in(
        words: &[String],
        origin: &str,
        context: &str,
    ) -> Result<RunOptions, String> {
        #[derive(Parser)]
        #[command(no_binary_name = true, args_override_self = true)]
        struct Line {
            #[command(flatten)]
            options: RunOptions,
        }
        let mut options = Line::try_parse_from(words)
            .map_err(|e| format!("{origin}: {context}{}", one_line_clap_error(&e)))?
            .options;
        let origin = Some(origin.to_string());
        options
            .params
            .iter_mut()
            .for_each(|a| a.origin = origin.clone());
        options
            .buffers
            .iter_mut()
            .for_each(|a| a.origin = origin.clone());
        options
            .prints
            .iter_mut()
            .for_each(|a| a.origin = origin.clone());
        options
            .outputs
            .iter_mut()
            .for_each(|a| a.origin = origin.clone());
        Ok(options)
    }
}

/// A clap error on one line: the message and any hint lines joined, the
/// usage and help pointers left out.
pub fn one_line_clap_error(error: &clap::Error) -> String {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        // Help is for the command line, not for options read from text.
        return "--help and --version are not run options (see `warpjit help run`)".into();
    }
    let text = error.render().to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with("Usage:")
                && !l.starts_with("For more information")
                && !l.starts_with("tip:")
        })
        .collect();
    let joined = parts.join(" ");
    joined
        .strip_prefix("error: ")
        .unwrap_or(&joined)
        .to_string()
}

/// A number of seconds, `60` or `0.5`; 0 means no limit.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(format!("`{text}`: seconds must be 0 or more"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` seconds is too long"))
}

/// Three dimensions, written `X`, `X,Y` or `X,Y,Z` (missing ones are 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims(pub [u32; 3]);

impl Dims {
    pub fn parse(text: &str) -> Result<Dims, String> {
        let parts: Vec<&str> = text.split([',', 'x']).collect();
        if parts.len() > 3 {
            return Err("at most three dimensions (X,Y,Z)".into());
        }
        let mut dims = [1u32; 3];
        for (slot, part) in dims.iter_mut().zip(&parts) {
            *slot = part.trim().parse::<u32>().map_err(|_| {
                // An empty part (`x`, `4,`): the whole text says more.
                let shown = if part.trim().is_empty() { text } else { part };
                format!("`{shown}` is not a dimension (a number, X[,Y[,Z]])")
            })?;
            if *slot == 0 {
                return Err("dimensions must be at least 1".into());
            }
        }
        Ok(Dims(dims))
    }

    pub fn product(self) -> u64 {
        self.0
            .iter()
            .fold(1u64, |n, &d| n.saturating_mul(u64::from(d)))
    }
}

impl std::fmt::Display for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.0;
        write!(f, "{x}x{y}x{z}")
    }
}

/// `--image WxH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageSize {
    pub width: u32,
    pub height: u32,
}

impl ImageSize {
    pub fn parse(text: &str) -> Result<ImageSize, String> {
        let bad = || format!("`{text}` is not WIDTHxHEIGHT (e.g. 768x512)");
        let (w, h) = text.split_once('x').ok_or_else(bad)?;
        let width = w.parse::<u32>().map_err(|_| bad())?;
        let height = h.parse::<u32>().map_err(|_| bad())?;
        if width == 0 || height == 0 {
            return Err("image width and height must be at least 1".into());
        }
        Ok(ImageSize { width, height })
    }
}

/// A buffer named by `@name`, `name` or its binding number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufferRef {
    Name(String),
    Binding(u32),
}

impl BufferRef {
    pub fn parse(text: &str) -> Result<BufferRef, String> {
        if text.is_empty() || text == "@" {
            return Err("missing buffer name or binding".into());
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            return text
                .parse()
                .map(BufferRef::Binding)
                .map_err(|_| format!("binding `{text}` is too large"));
        }
        let name = text.strip_prefix('@').unwrap_or(text);
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!("`{text}` is not a buffer name or binding"));
        }
        Ok(BufferRef::Name(name.to_string()))
    }
}

impl std::fmt::Display for BufferRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferRef::Name(n) => write!(f, "@{n}"),
            BufferRef::Binding(b) => write!(f, "binding {b}"),
        }
    }
}

/// Elements `start..end` of a buffer; a missing end means "to the end".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ElemRange {
    pub start: u64,
    pub end: Option<u64>,
}

impl ElemRange {
    /// `A..B`, `A..`, `..B` or a single index `A`.
    pub fn parse(text: &str) -> Result<ElemRange, String> {
        let number = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}` is not an element index"))
        };
        let range = match text.split_once("..") {
            Some((a, b)) => ElemRange {
                start: if a.is_empty() { 0 } else { number(a)? },
                end: if b.is_empty() { None } else { Some(number(b)?) },
            },
            None => {
                let index = number(text)?;
                ElemRange {
                    start: index,
                    end: Some(index.saturating_add(1)),
                }
            }
        };
        if matches!(range.end, Some(end) if end < range.start) {
            return Err(format!("range `{text}` ends before it starts"));
        }
        Ok(range)
    }

    /// The concrete range inside a buffer of `len` elements.
    pub fn within(self, len: u64) -> Result<(u64, u64), String> {
        let start = self.start;
        match self.end {
            // A single index.
            Some(end) if end == start.saturating_add(1) && start >= len => Err(format!(
                "element {start} is past the end of the buffer's {len} elements"
            )),
            Some(end) if end > len => Err(format!(
                "range {start}..{end} is outside the buffer's {len} elements"
            )),
            None if start > len => Err(format!(
                "range {start}.. starts past the end of the buffer's {len} elements"
            )),
            end => Ok((start, end.unwrap_or(len))),
        }
    }
}

fn split_assignment<'a>(text: &'a str, what: &str) -> Result<(&'a str, &'a str), String> {
    text.split_once('=')
        .ok_or_else(|| format!("expected {what}"))
}

/// `--param NAME=VALUE` (NAME with or without `%`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamArg {
    pub name: String,
    pub value: String,
    pub text: String,
    pub origin: Option<String>,
}

impl ParamArg {
    pub fn parse(text: &str) -> Result<ParamArg, String> {
        let (name, value) = split_assignment(text, "NAME=VALUE")?;
        let name = name.strip_prefix('%').unwrap_or(name);
        if name.is_empty() {
            return Err("missing parameter name before `=`".into());
        }
        Ok(ParamArg {
            name: name.to_string(),
            value: value.to_string(),
            text: text.to_string(),
            origin: None,
        })
    }
}

/// `--buffer NAME|BINDING=SPEC`.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferArg {
    pub target: BufferRef,
    pub spec: BufferSpec,
    pub text: String,
    pub origin: Option<String>,
}

impl BufferArg {
    pub fn parse(text: &str) -> Result<BufferArg, String> {
        let (target, spec) = split_assignment(text, "NAME|BINDING=SPEC")?;
        Ok(BufferArg {
            target: BufferRef::parse(target)?,
            spec: BufferSpec::parse(spec)?,
            text: text.to_string(),
            origin: None,
        })
    }
}

/// How printed elements are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Radix {
    #[default]
    Dec,
    Hex,
}

/// `--print NAME|BINDING[:RANGE][:hex|:dec][:TYPE]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintArg {
    pub target: BufferRef,
    pub range: ElemRange,
    pub radix: Radix,
    pub format: Option<NumFormat>,
    pub text: String,
    pub origin: Option<String>,
}

impl PrintArg {
    pub fn parse(text: &str) -> Result<PrintArg, String> {
        let mut parts = text.split(':');
        let target = BufferRef::parse(parts.next().unwrap_or(""))?;
        let (mut range, mut radix, mut format) = (None, None, None);
        for part in parts {
            let duplicate = |what: &str| Err(format!("`{part}`: {what} given twice"));
            if part == "hex" || part == "dec" {
                if radix.is_some() {
                    return duplicate("hex/dec");
                }
                radix = Some(if part == "hex" {
                    Radix::Hex
                } else {
                    Radix::Dec
                });
            } else if part.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                if range.is_some() {
                    return duplicate("range");
                }
                range = Some(ElemRange::parse(part)?);
            } else if let Some(f) = parse_format(part) {
                if format.is_some() {
                    return duplicate("type");
                }
                format = Some(f);
            } else {
                return Err(format!(
                    "`{part}` is not a range (A..B), hex, dec or a type ({})",
                    values::format_names()
                ));
            }
        }
        Ok(PrintArg {
            target,
            range: range.unwrap_or_default(),
            radix: radix.unwrap_or_default(),
            format,
            text: text.to_string(),
            origin: None,
        })
    }
}

/// `--output NAME|BINDING=PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputArg {
    pub target: BufferRef,
    pub path: std::path::PathBuf,
    pub text: String,
    pub origin: Option<String>,
}

impl OutputArg {
    pub fn parse(text: &str) -> Result<OutputArg, String> {
        let (target, path) = split_assignment(text, "NAME|BINDING=PATH")?;
        if path.is_empty() {
            return Err("missing PATH after `=`".into());
        }
        Ok(OutputArg {
            target: BufferRef::parse(target)?,
            path: path.into(),
            text: text.to_string(),
            origin: None,
        })
    }
}

/// How an argument is named in errors: `--buffer out=zeros:4`, prefixed
/// with `file:line: ` when it came from a `//! run:` line.
pub fn describe(option: &str, text: &str, origin: &Option<String>) -> String {
    match origin {
        Some(origin) => format!("{origin}: --{option} {text}"),
        None => format!("--{option} {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_default_missing_dimensions_to_one() {
        assert_eq!(Dims::parse("8"), Ok(Dims([8, 1, 1])));
        assert_eq!(Dims::parse("8,4"), Ok(Dims([8, 4, 1])));
        assert_eq!(Dims::parse("2x3x4"), Ok(Dims([2, 3, 4])));
        assert!(Dims::parse("0").is_err());
        assert!(Dims::parse("1,2,3,4").is_err());
        assert!(Dims::parse("a").is_err());
    }

    #[test]
    fn print_parts_may_come_in_any_order() {
        let p = PrintArg::parse("@out:4..8:hex:f32").expect("valid");
        assert_eq!(p.target, BufferRef::Name("out".into()));
        assert_eq!(
            p.range,
            ElemRange {
                start: 4,
                end: Some(8)
            }
        );
        assert_eq!(p.radix, Radix::Hex);
        assert_eq!(p.format, Some(NumFormat::F32));
        let p = PrintArg::parse("1:i32:3").expect("valid");
        assert_eq!(p.target, BufferRef::Binding(1));
        assert_eq!(p.format, Some(NumFormat::S32));
        assert_eq!(p.range.within(10), Ok((3, 4)));
        assert!(PrintArg::parse("out:hex:dec").is_err());
        assert!(PrintArg::parse("out:bogus").is_err());
    }

    #[test]
    fn ranges_are_checked_against_the_buffer() {
        assert_eq!(ElemRange::parse("..").and_then(|r| r.within(5)), Ok((0, 5)));
        assert_eq!(
            ElemRange::parse("2..").and_then(|r| r.within(5)),
            Ok((2, 5))
        );
        assert!(ElemRange::parse("0..6").and_then(|r| r.within(5)).is_err());
        assert!(ElemRange::parse("4..2").is_err());
    }

    #[test]
    fn later_options_win_and_lists_accumulate() {
        let file = RunOptions::from_words(
            &["--grid".into(), "4".into(), "--param".into(), "n=1".into()],
            "f.warp:1",
        )
        .expect("valid words");
        assert_eq!(file.params[0].origin.as_deref(), Some("f.warp:1"));
        let cli = RunOptions {
            grid: Some(Dims([2, 1, 1])),
            params: vec![ParamArg::parse("n=2").expect("valid")],
            ..RunOptions::default()
        };
        let merged = file.then(cli);
        assert_eq!(merged.grid, Some(Dims([2, 1, 1])));
        assert_eq!(merged.params.len(), 2);
        assert_eq!(merged.params[1].value, "2");
    }

    #[test]
    fn watchdog_seconds_are_non_negative_numbers() {
        assert_eq!(parse_seconds("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_seconds("0"), Ok(Duration::ZERO));
        for bad in ["-1", "nan", "inf", "soon", "1e300"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_in_run_lines_name_the_line_and_option() {
        let err =
            RunOptions::from_words(&["--grid".into(), "zero".into()], "f.warp:7").unwrap_err();
        assert!(err.starts_with("f.warp:7: //! run: "), "{err}");
        assert!(err.contains("--grid"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = RunOptions::from_words(&["--sms".into(), "0".into()], "f.warp:2").unwrap_err();
        assert!(err.starts_with("f.warp:2: //! run: "), "{err}");
        assert!(err.contains("need at least one SM"), "{err}");
        let err = RunOptions::from_words(&["--help".into()], "f.warp:3").unwrap_err();
        assert_eq!(
            err,
            "f.warp:3: //! run: --help and --version are not run options (see `warpjit help run`)"
        );
    }

    #[test]
    fn single_indices_and_open_ranges_past_the_end_say_so() {
        let within = |text: &str| ElemRange::parse(text).and_then(|r| r.within(32));
        assert_eq!(
            within("32"),
            Err("element 32 is past the end of the buffer's 32 elements".into())
        );
        assert!(within("18446744073709551615")
            .unwrap_err()
            .starts_with("element "));
        assert_eq!(
            within("100.."),
            Err("range 100.. starts past the end of the buffer's 32 elements".into())
        );
        assert_eq!(within("32.."), Ok((32, 32)));
        assert_eq!(within("31"), Ok((31, 32)));
    }
}
