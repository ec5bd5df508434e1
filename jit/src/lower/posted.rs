//! Posted atomics: which buffers may have their atomic updates collected
//! per SM and applied later.
//!
//! A reduction such as `atom.add @total, 0, %warp_sum` costs one locked
//! instruction per warp, and with several SMs every one of them moves the
//! cache line between cores. When nothing in the program can see the order
//! in which a buffer's updates land, the JIT instead combines them in a
//! slot per buffer on each SM thread ([`crate::abi::PostedUpdate`]): an
//! update at the slot's address is combined into it, one at another
//! address first applies the slot's value with a real atomic. Lanes on
//! several addresses update the SM's private copy of a small buffer
//! (`posted_copy.rs`) instead. The runtime
//! applies what is left when its run of workgroups ends, whichever way it
//! ends, so every update is in memory before the launch returns.
//!
//! A buffer qualifies when every access to it in the module is an `atom`
//! whose result is never read, all with the same associative integer op
//! (`add and or xor min max`, one format), and the module has no `membar`.
//! Then no thread reads the buffer, the updates commute, and the memory
//! holds at the end what any order of the single updates leaves, the
//! interpreter's included. The runtime posts nothing in a launch that binds
//! one buffer to two bindings, since the other binding could read it.

use warpjit_ir::{walk_block, AtomOp, MemRef, Module, NumFormat, Op, Operand, Place, Stmt};

/// The op and format of the posted updates of each buffer (by binding
/// index), or `None` for buffers whose updates go straight to memory.
pub fn posted_buffers(module: &Module) -> Vec<Option<(AtomOp, NumFormat)>> {
    let mut found = vec![Found::Untouched; module.buffers.len()];
    let mut fenced = false;
    for f in &module.functions {
        let mut read = vec![false; f.values.len()];
        walk_block(&f.body, &mut |s| {
            for o in s.operands() {
                if let Operand::Value(v) = o {
                    if let Some(r) = read.get_mut(v.0 as usize) {
                        *r = true;
                    }
                }
            }
        });
        walk_block(&f.body, &mut |s| {
            let Stmt::Inst(i) = s else { return };
            let (buffer, access) = match &i.op {
                Op::MemBar => {
                    fenced = true;
                    return;
                }
                Op::Atom {
                    mem: MemRef::Buffer(b),
                    op,
                    format,
                } => {
                    let unread = i.results.iter().all(|p| match p {
                        Place::Value(v) => !read.get(v.0 as usize).copied().unwrap_or(true),
                        Place::Var(_) => false,
                    });
                    let postable = unread && combinable(*op) && !format.is_float();
                    (*b, postable.then_some((*op, *format)))
                }
                Op::Load {
                    mem: MemRef::Buffer(b),
                    ..
                }
                | Op::Store {
                    mem: MemRef::Buffer(b),
                    ..
                } => (*b, None),
                _ => return,
            };
            if let Some(slot) = found.get_mut(buffer as usize) {
                *slot = slot.and(access);
            }
        });
    }
    found
        .into_iter()
        .map(|f| match f {
            Found::Only(kind) if !fenced => Some(kind),
            _ => None,
        })
        .collect()
}

/// What the accesses of one buffer seen so far allow.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Found {
    Untouched,
    /// Only unread atomics of this op and format.
    Only((AtomOp, NumFormat)),
    /// Something else.
    Mixed,
}

impl Found {
    /// After one more access: `Some(kind)` for an unread combinable atomic.
    fn and(self, access: Option<(AtomOp, NumFormat)>) -> Found {
        match (self, access) {
            (Found::Untouched, Some(kind)) => Found::Only(kind),
            (Found::Only(seen), Some(kind)) if seen == kind => Found::Only(kind),
            _ => Found::Mixed,
        }
    }
}

/// Ops whose updates can be combined before they meet memory, in any order.
pub fn combinable(op: AtomOp) -> bool {
    AtomOp::COMBINABLE.contains(&op)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posted(src: &str) -> Vec<Option<(AtomOp, NumFormat)>> {
        let module = warpjit_ir::text::parse(src).expect("parses");
        posted_buffers(&module)
    }

    const HEADER: &str = "buffer @data[0]: u32\nbuffer @total[1]: u32\n";

    fn kernel(body: &str) -> String {
        format!("{HEADER}kernel @main workgroup(32) {{\n%i = lane_id\n{body}\n}}\n")
    }

    #[test]
    fn unread_adds_to_a_buffer_nothing_reads_are_posted() {
        let src = kernel(
            "%x = load.u32 @data, 0\n%old = atom.add.u32 @total, 0, %x\n%old2 = atom.add.u32 @total, 4, %i",
        );
        assert_eq!(
            posted(&src),
            vec![None, Some((AtomOp::Add, NumFormat::U32))]
        );
    }

    #[test]
    fn a_read_result_a_load_a_store_or_a_membar_keeps_updates_direct() {
        for body in [
            // The old value is read.
            "%old = atom.add.u32 @total, 0, %i\nstore.u32 @data, 0, %old",
            // The buffer is loaded.
            "%old = atom.add.u32 @total, 0, %i\n%x = load.u32 @total, 4",
            // The buffer is stored to.
            "%old = atom.add.u32 @total, 0, %i\nstore.u32 @total, 4, %i",
            // Other SMs may wait for the update after a fence.
            "%old = atom.add.u32 @total, 0, %i\nmembar",
            // Two ops that do not commute with each other.
            "%old = atom.add.u32 @total, 0, %i\n%old2 = atom.max.u32 @total, 0, %i",
            // Not combinable.
            "%old = atom.exch.u32 @total, 0, %i",
        ] {
            assert_eq!(posted(&kernel(body))[1], None, "{body}");
        }
    }

    #[test]
    fn accesses_in_called_functions_count() {
        let src = format!(
            "{HEADER}func @peek() {{\n%x = load.u32 @total, 0\n}}\n\
             kernel @main workgroup(32) {{\n%i = lane_id\n%old = atom.add.u32 @total, 0, %i\ncall @peek()\n}}\n"
        );
        assert_eq!(posted(&src)[1], None);
    }
}
