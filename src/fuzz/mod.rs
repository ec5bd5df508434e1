//! Differential fuzzing: random valid programs run on the reference
//! interpreter and on every other engine under several machine
//! configurations, compared byte by byte; differences are reduced and
//! written as reproducer directories.
//!
//! - [`case`]: generating a case from its seed and checking it;
//! - [`exec`]: running a program on one engine, failures as values;
//! - [`compare`]: classifying and describing differences;
//! - [`repro`]: writing reproducer directories; [`replay`]: re-running them;
//! - [`campaign`]: worker threads, stopping rules, progress and summary.

pub mod campaign;
pub mod case;
pub mod compare;
pub mod exec;
pub mod replay;
pub mod repro;

pub use campaign::{run_campaign, CampaignOptions, Summary};
pub use replay::{replay_dir, Replay};
