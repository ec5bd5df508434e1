//! A fuzz campaign: `jobs` worker threads take case indices from a shared
//! counter until the case count or the time budget is reached; each worker
//! has its own engines (compiled code belongs to its thread) and keeps the
//! case it runs on disk until it is done (`repro::write_running`).

use super::case::{self, check, check_one, op_kinds, FuzzCase};
use super::compare::FindingKind;
use super::exec::{Launch, Workspace};
use super::repro::{self, Origin};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use warpjit_ir::generate::SplitMix64;
use warpjit_ir::reduce::{reduce, Candidate, ReduceLimits};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{JitOptions, Target};

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct CampaignOptions {
    pub seed: u64,
    /// Stop after this many cases (None: only the time budget).
    pub cases: Option<u64>,
    /// Stop starting new cases after this long (None: only the case count).
    pub time: Option<Duration>,
    /// Worker threads.
    pub jobs: usize,
    /// Where reproducer directories go.
    pub out_dir: PathBuf,
    pub stop_on_first: bool,
    /// Budget of the reduction of each finding.
    pub reduce: ReduceLimits,
    /// The JIT's target and optimisation level.
    pub jit: JitOptions,
    /// Each case draws its target and level from its seed instead
    /// ([`case_jit`]).
    pub vary_jit: bool,
}

/// The JIT options case `seed` compiles with: the campaign's, or with
/// `vary_jit` a target and level drawn from the seed (native half the time,
/// level 2 two times in five).
pub fn case_jit(opts: &CampaignOptions, seed: u64) -> JitOptions {
    if !opts.vary_jit {
        return opts.jit;
    }
    // A stream of its own, apart from the generator's.
    let bits = SplitMix64::new(seed ^ 0x6a17_0000_0000_0000).next_u64();
    let target =
        [Target::Native, Target::Native, Target::Avx2, Target::Sse42][(bits >> 60) as usize & 3];
    let opt_level = [0, 1, 2, 2, 3][((bits >> 32) % 5) as usize];
    JitOptions {
        target,
        opt_level,
        ..opts.jit
    }
}

/// What a finished campaign did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub cases: u64,
    pub elapsed: Duration,
    /// Cases the JIT declined (constructs it does not lower yet).
    pub unsupported: u64,
    pub findings: Vec<FoundCase>,
    /// How many generated programs contained each kind of operation.
    pub coverage: BTreeMap<String, u64>,
}

impl Summary {
    pub fn count(&self, kind: FindingKind) -> usize {
        self.findings.iter().filter(|f| f.kind == kind).count()
    }
    pub fn cases_per_second(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One finding and where its reproducer is.
#[derive(Clone, Debug)]
pub struct FoundCase {
    pub kind: FindingKind,
    pub case_index: u64,
    pub case_seed: u64,
    pub engine: &'static str,
    /// The reproducer directory, or why it could not be written.
    pub reproducer: Result<PathBuf, String>,
    /// Statements before and after reduction.
    pub statements: (usize, usize),
}

/// What workers tell the coordinating thread.
pub enum Event {
    CaseDone {
        kinds: BTreeSet<String>,
        unsupported: bool,
    },
    Found {
        found: FoundCase,
        kinds: BTreeSet<String>,
    },
    /// The generator made a module that does not verify.
    BadCase(String),
}

/// Progress display hooks (the CLI draws a bar; tests pass nothing).
pub trait Progress {
    fn update(&mut self, summary: &Summary);
    fn found(&mut self, found: &FoundCase);
}

/// Runs a campaign to its end and returns the summary.
pub fn run_campaign(opts: &CampaignOptions, progress: &mut dyn Progress) -> Summary {
    let out_dir_existed = opts.out_dir.exists();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let mut summary = Summary::default();
    let (tx, rx) = mpsc::channel::<Event>();
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.max(1) {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || worker(opts, next, stop, start, &tx));
        }
        drop(tx);
        loop {
            match rx.recv_timeout(Duration::from_millis(250)) {
                Ok(Event::CaseDone { kinds, unsupported }) => {
                    summary.cases += 1;
                    summary.unsupported += u64::from(unsupported);
                    for k in kinds {
                        *summary.coverage.entry(k).or_insert(0) += 1;
                    }
                }
                Ok(Event::Found { found, kinds }) => {
                    summary.cases += 1;
                    for k in kinds {
                        *summary.coverage.entry(k).or_insert(0) += 1;
                    }
                    progress.found(&found);
                    summary.findings.push(found);
                    if opts.stop_on_first {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                Ok(Event::BadCase(message)) => {
                    summary.cases += 1;
                    summary.findings.push(FoundCase {
                        kind: FindingKind::Crash,
                        case_index: 0,
                        case_seed: 0,
                        engine: "generator",
                        reproducer: Err(message),
                        statements: (0, 0),
                    });
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            summary.elapsed = start.elapsed();
            progress.update(&summary);
        }
    });
    summary.elapsed = start.elapsed();
    summary.findings.sort_by_key(|f| f.case_index);
    if !out_dir_existed {
        // Created for the running cases' directories; removed only when
        // empty, that is when no reproducer was written.
        let _ = std::fs::remove_dir(&opts.out_dir);
    }
    summary
}

fn worker(
    opts: &CampaignOptions,
    next: &AtomicU64,
    stop: &AtomicBool,
    start: Instant,
    tx: &mpsc::Sender<Event>,
) {
    // A workspace per target and level: compiled code and runtimes are
    // kept for the cases that share them.
    let mut spaces: BTreeMap<(&'static str, u8), Workspace> = BTreeMap::new();
    loop {
        if stop.load(Ordering::Relaxed) || opts.time.is_some_and(|t| start.elapsed() >= t) {
            return;
        }
        let index = next.fetch_add(1, Ordering::Relaxed);
        if opts.cases.is_some_and(|n| index >= n) {
            return;
        }
        let seed = case::case_seed(opts.seed, index);
        let jit = case_jit(opts, seed);
        let ws = spaces
            .entry((jit.target.name(), jit.opt_level))
            .or_insert_with(|| Workspace::new(jit));
        // With -vv the last line before a fatal signal names the case.
        tracing::debug!(case = index, seed = format_args!("{seed:#x}"), "fuzz case");
        let fuzz_case = match case::generate(seed) {
            Ok(c) => c,
            Err(e) => {
                let _ = tx.send(Event::BadCase(e));
                continue;
            }
        };
        let kinds = op_kinds(&fuzz_case.module);
        let origin = Origin {
            campaign_seed: opts.seed,
            case_index: index,
            case_seed: seed,
        };
        // Left behind only if the process dies while the case runs.
        let running = repro::write_running(
            &opts.out_dir,
            fuzz_case.module.module(),
            &fuzz_case.launch,
            fuzz_case.machines[0],
            &origin,
            jit,
        );
        let mut unsupported = false;
        let found = check(
            ws,
            &fuzz_case.module,
            &fuzz_case.launch,
            &fuzz_case.machines,
            &mut unsupported,
        );
        let event = match found {
            None => Event::CaseDone { kinds, unsupported },
            Some(finding) => Event::Found {
                found: record(opts, jit, ws, &fuzz_case, &origin, finding),
                kinds,
            },
        };
        if let Ok(dir) = running {
            let _ = std::fs::remove_dir_all(dir);
        }
        if tx.send(event).is_err() {
            return;
        }
    }
}

/// Reduces a finding and writes its reproducer.
fn record(
    opts: &CampaignOptions,
    jit: JitOptions,
    ws: &mut Workspace,
    fuzz_case: &FuzzCase,
    origin: &Origin,
    finding: case::Finding,
) -> FoundCase {
    let start = Candidate {
        module: (*fuzz_case.module).clone().into_inner(),
        grid: fuzz_case.launch.grid,
        workgroup: fuzz_case.launch.workgroup,
        buffers: fuzz_case.launch.buffers.clone(),
    };
    let launch_of = |c: &Candidate| Launch {
        grid: c.grid,
        workgroup: c.workgroup,
        params: fuzz_case.launch.params.clone(),
        buffers: c.buffers.clone(),
    };
    let reduced = reduce(&start, &opts.reduce, &mut |module, c| {
        let module = Arc::new(module.clone());
        check_one(ws, &module, &launch_of(c), finding.engine, finding.machine)
            .is_some_and(|f| f.kind == finding.kind)
    });
    let small = reduced.candidate;
    let small_launch = launch_of(&small);
    // The reduced program's own results, for the reproducer's files.
    let small_finding = VerifiedModule::new(small.module.clone())
        .ok()
        .and_then(|m| {
            check_one(
                ws,
                &Arc::new(m),
                &small_launch,
                finding.engine,
                finding.machine,
            )
        });
    let (module, launch, shown) = match small_finding {
        Some(f) if f.kind == finding.kind => (&small.module, &small_launch, f),
        _ => (
            fuzz_case.module.module(),
            &fuzz_case.launch,
            finding.clone(),
        ),
    };
    let reproducer = repro::write(&opts.out_dir, module, launch, &shown, origin, jit);
    FoundCase {
        kind: finding.kind,
        case_index: origin.case_index,
        case_seed: fuzz_case.seed,
        engine: finding.engine.name(),
        reproducer,
        statements: (statements(fuzz_case.module.module()), statements(module)),
    }
}

fn statements(m: &warpjit_ir::Module) -> usize {
    let mut n = 0;
    for f in &m.functions {
        warpjit_ir::walk_block(&f.body, &mut |_| n += 1);
    }
    n
}
