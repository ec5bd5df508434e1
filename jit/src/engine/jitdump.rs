//! perf's jitdump file, for instruction-level profiles of compiled code:
//! with `WARPJIT_PERF_MAP=jitdump`, every function the perf map names is
//! also written with its machine code to `/tmp/jit-PID.dump`. The process
//! maps the file executable once, which is how `perf record -k mono` finds
//! it; `perf inject --jit` then turns the records into objects that `perf
//! annotate` reads. Timestamps are `CLOCK_MONOTONIC`, as `-k mono` records.

use super::perf_map::Entry;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

const MAGIC: u32 = 0x4a69_5444;
const VERSION: u32 = 1;
const HEADER_BYTES: u32 = 40;
const EM_X86_64: u32 = 62;
const JIT_CODE_LOAD: u32 = 0;
/// The record header (id, size, timestamp) and the load's fixed fields
/// (pid, tid, vma, code address, code size, code index).
const LOAD_FIXED_BYTES: usize = 16 + 40;

/// The open dump and the index of the next function.
struct Dump {
    file: File,
    next_index: u64,
}

fn now() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(t.tv_nsec as u64)
}

/// Creates the dump with its header and maps its first page executable.
fn open(path: &str) -> std::io::Result<Dump> {
    // Readable too: the mapping below needs a descriptor open for reading.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut header = Vec::with_capacity(HEADER_BYTES as usize);
    for word in [
        MAGIC,
        VERSION,
        HEADER_BYTES,
        EM_X86_64,
        0,
        std::process::id(),
    ] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    header.extend_from_slice(&now().to_le_bytes());
    header.extend_from_slice(&0u64.to_le_bytes());
    file.write_all(&header)?;
    file.flush()?;
    use std::os::fd::AsRawFd;
    // SAFETY: a private read-and-execute mapping of a file this process
    // owns; it is never read through, only seen by `perf record`.
    let mapped = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_EXEC,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            0,
        )
    };
    if mapped == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Dump {
        file,
        next_index: 0,
    })
}

/// One code-load record of `entry`, with its code read from memory.
fn record(entry: &Entry, index: u64) -> Vec<u8> {
    // SAFETY: the engine holds `entry.size` bytes of code at `entry.start`
    // (found from the object file of the same module) for as long as the
    // compiled module lives, which covers this call.
    let code = unsafe { std::slice::from_raw_parts(entry.start as *const u8, entry.size as usize) };
    let total = LOAD_FIXED_BYTES + entry.name.len() + 1 + code.len();
    let mut r = Vec::with_capacity(total);
    r.extend_from_slice(&JIT_CODE_LOAD.to_le_bytes());
    r.extend_from_slice(&(total as u32).to_le_bytes());
    r.extend_from_slice(&now().to_le_bytes());
    r.extend_from_slice(&std::process::id().to_le_bytes());
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    r.extend_from_slice(&tid.to_le_bytes());
    for word in [entry.start as u64, entry.start as u64, entry.size, index] {
        r.extend_from_slice(&word.to_le_bytes());
    }
    r.extend_from_slice(entry.name.as_bytes());
    r.push(0);
    r.extend_from_slice(code);
    r
}

/// Appends `entries` to this process's dump, creating it on first use.
pub(super) fn append(entries: &[Entry]) -> Result<(), String> {
    static DUMP: OnceLock<Result<Mutex<Dump>, String>> = OnceLock::new();
    let path = format!("/tmp/jit-{}.dump", std::process::id());
    let dump = DUMP
        .get_or_init(|| open(&path).map(Mutex::new).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| format!("{path}: {e}"))?;
    let mut dump = dump.lock().unwrap_or_else(|e| e.into_inner());
    for entry in entries.iter().filter(|e| e.size > 0) {
        let r = record(entry, dump.next_index);
        dump.next_index += 1;
        dump.file
            .write_all(&r)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_record_holds_its_name_and_code() {
        let code = [0x90u8, 0xc3];
        let entry = Entry {
            start: code.as_ptr() as usize,
            size: 2,
            name: "kernel.k".into(),
        };
        let r = record(&entry, 7);
        assert_eq!(
            u32::from_le_bytes(r[0..4].try_into().unwrap()),
            JIT_CODE_LOAD
        );
        assert_eq!(
            u32::from_le_bytes(r[4..8].try_into().unwrap()) as usize,
            r.len()
        );
        assert_eq!(u64::from_le_bytes(r[48..56].try_into().unwrap()), 7);
        assert_eq!(&r[56..65], b"kernel.k\0");
        assert_eq!(&r[65..], &code);
    }
}
