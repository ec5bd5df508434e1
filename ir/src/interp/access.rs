//! Memory instructions: loads, stores and atomics on buffers, shared memory
//! and private arrays, lane by lane in ascending lane order, under the one
//! alignment and bounds rule of [`checked_access`].

use super::exec::{is_set, Env, InstCx};
use super::memory::{atomic_on_bytes, checked_access, read_le, write_le, AccessKind, Fault};
use super::warp::{lanes, Frame};
use crate::ops::{AtomOp, MemFormat, MemRef, NumFormat};
use crate::semantics;

/// The largest access: four 8-byte components.
const MAX_ACCESS_BYTES: usize = 32;

/// Loads happen in every active lane, helpers included. Out of bounds: 0 in
/// every component.
pub(crate) fn load(
    cx: &mut InstCx<'_, '_>,
    env: &mut Env<'_, '_>,
    warp: u32,
    mem: MemRef,
    format: MemFormat,
) {
    let size = format.bytes();
    let elem_bytes = format.elem.bytes() as usize;
    for lane in lanes(cx.mask) {
        let addr = cx.arg(0, lane);
        let mut buf = [0u8; MAX_ACCESS_BYTES];
        let start = checked_access(addr, size, mem_len(env, cx.frame, mem));
        match start {
            Some(start) => read_mem(env, cx.frame, mem, lane, start, &mut buf[..size as usize]),
            None => record_fault(env, cx.frame, warp, mem, AccessKind::Load, addr, lane),
        }
        for i in 0..format.count as usize {
            let value = match start {
                Some(_) => semantics::load_convert(
                    format.elem,
                    read_le(&buf[i * elem_bytes..(i + 1) * elem_bytes]),
                ),
                None => 0,
            };
            cx.put(i, lane, value);
        }
    }
}

/// Stores in the lanes of `cx.mask` (the caller leaves helpers out, except
/// for private arrays); for
/// equal addresses the highest lane's value stays.
pub(crate) fn store(
    cx: &mut InstCx<'_, '_>,
    env: &mut Env<'_, '_>,
    warp: u32,
    mem: MemRef,
    format: MemFormat,
) {
    let size = format.bytes();
    let elem_bytes = format.elem.bytes() as usize;
    let value_types: [_; 4] = std::array::from_fn(|i| cx.arg_type(env.module, i + 1));
    for lane in lanes(cx.mask) {
        let addr = cx.arg(0, lane);
        let Some(start) = checked_access(addr, size, mem_len(env, cx.frame, mem)) else {
            record_fault(env, cx.frame, warp, mem, AccessKind::Store, addr, lane);
            continue;
        };
        let mut buf = [0u8; MAX_ACCESS_BYTES];
        for (i, ty) in value_types.iter().enumerate().take(format.count as usize) {
            let raw = semantics::store_convert(format.elem, *ty, cx.arg(i + 1, lane));
            write_le(&mut buf[i * elem_bytes..(i + 1) * elem_bytes], raw);
        }
        write_mem(env, cx.frame, mem, lane, start, &buf[..size as usize]);
    }
}

/// Atomics in ascending lane order, each returning the value before its own
/// update; helper lanes do nothing and get 0, as do out-of-bounds accesses.
pub(crate) fn atomic(
    cx: &mut InstCx<'_, '_>,
    env: &mut Env<'_, '_>,
    warp: u32,
    helpers: u32,
    mem: MemRef,
    op: AtomOp,
    elem: NumFormat,
) {
    for lane in lanes(cx.mask) {
        let old = if is_set(helpers, lane) {
            0
        } else {
            let addr = cx.arg(0, lane);
            let (v, v2) = (cx.arg(1, lane), cx.arg(2, lane));
            match checked_access(addr, elem.bytes(), mem_len(env, cx.frame, mem)) {
                Some(start) => {
                    let range = start as usize..start as usize + elem.bytes() as usize;
                    match mem {
                        MemRef::Buffer(b) => env.memory.atomic(b, start, op, elem, v, v2),
                        MemRef::Shared(s) => {
                            atomic_on_bytes(&mut env.shared[s as usize][range], op, elem, v, v2)
                        }
                        MemRef::Private(p) => atomic_on_bytes(
                            &mut private_bytes(cx.frame, p, lane)[range],
                            op,
                            elem,
                            v,
                            v2,
                        ),
                    }
                }
                None => {
                    record_fault(env, cx.frame, warp, mem, AccessKind::Atomic, addr, lane);
                    0
                }
            }
        };
        cx.put(0, lane, old);
    }
}

fn mem_len(env: &Env<'_, '_>, frame: &Frame<'_>, mem: MemRef) -> u64 {
    match mem {
        MemRef::Buffer(b) => env.memory.buffer_len(b),
        MemRef::Shared(s) => env.shared.get(s as usize).map_or(0, |m| m.len() as u64),
        MemRef::Private(p) => frame
            .func
            .privates
            .get(p as usize)
            .map_or(0, |d| u64::from(d.size)),
    }
}

/// The bytes of lane `lane`'s private array `p`.
fn private_bytes<'f>(frame: &'f mut Frame<'_>, p: u32, lane: usize) -> &'f mut [u8] {
    let size = frame.func.privates[p as usize].size as usize;
    &mut frame.privates[p as usize][lane * size..(lane + 1) * size]
}

fn read_mem(
    env: &mut Env<'_, '_>,
    frame: &mut Frame<'_>,
    mem: MemRef,
    lane: usize,
    start: u64,
    out: &mut [u8],
) {
    let range = start as usize..start as usize + out.len();
    match mem {
        MemRef::Buffer(b) => env.memory.read(b, start, out),
        MemRef::Shared(s) => out.copy_from_slice(&env.shared[s as usize][range]),
        MemRef::Private(p) => out.copy_from_slice(&private_bytes(frame, p, lane)[range]),
    }
}

fn write_mem(
    env: &mut Env<'_, '_>,
    frame: &mut Frame<'_>,
    mem: MemRef,
    lane: usize,
    start: u64,
    data: &[u8],
) {
    let range = start as usize..start as usize + data.len();
    match mem {
        MemRef::Buffer(b) => env.memory.write(b, start, data),
        MemRef::Shared(s) => env.shared[s as usize][range].copy_from_slice(data),
        MemRef::Private(p) => private_bytes(frame, p, lane)[range].copy_from_slice(data),
    }
}

fn record_fault(
    env: &mut Env<'_, '_>,
    frame: &Frame<'_>,
    warp: u32,
    mem: MemRef,
    access: AccessKind,
    address: u64,
    lane: usize,
) {
    let name = env.module.memory_name(frame.func, mem);
    let kernel = &env.kernel.name;
    let workgroup = env.workgroup_id;
    env.faults.record(
        || Fault {
            access,
            memory: name.map_or_else(String::new, str::to_string),
            address,
            lane: lane as u32,
            warp,
            workgroup,
            kernel: kernel.clone(),
        },
        access,
    );
}
