//! Core interpreter tests on IR built in code, independent of the text
//! parser: divergence masks through if/else and loops (HARDWARE.md 13) and
//! a barrier reduction in shared memory.

use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::*;

/// Builds one kernel body statement by statement.
struct KernelBuilder {
    func: Function,
}

impl KernelBuilder {
    fn new(workgroup: [u32; 3]) -> KernelBuilder {
        KernelBuilder {
            func: Function {
                name: "main".into(),
                kind: FuncKind::Kernel {
                    workgroup: Some(workgroup),
                },
                params: vec![],
                results: vec![],
                values: vec![],
                vars: vec![],
                privates: vec![],
                body: Block::default(),
                span: Span::NONE,
            },
        }
    }

    fn value(&mut self, ty: Type) -> ValueId {
        let id = ValueId(self.func.values.len() as u32);
        self.func.values.push(ValueDecl {
            name: format!("v{}", id.0),
            ty,
            span: Span::NONE,
        });
        id
    }

    fn var(&mut self, ty: Type) -> VarId {
        let id = VarId(self.func.vars.len() as u32);
        self.func.vars.push(VarDecl {
            name: format!("x{}", id.0),
            ty,
            span: Span::NONE,
        });
        id
    }

    /// An instruction with one new SSA result of type `ty`.
    fn def(&mut self, block: &mut Vec<Stmt>, op: Op, args: Vec<Operand>, ty: Type) -> Operand {
        let v = self.value(ty);
        block.push(inst(op, args, vec![Place::Value(v)]));
        Operand::Value(v)
    }
}

fn inst(op: Op, args: Vec<Operand>, results: Vec<Place>) -> Stmt {
    Stmt::Inst(Inst {
        op,
        args,
        results,
        span: Span::NONE,
    })
}

fn int(v: i32) -> Operand {
    Operand::Const(Const::i32(v))
}

fn store_u32(mem: MemRef, addr: Operand, value: Operand) -> Stmt {
    inst(
        Op::Store {
            mem,
            format: MemFormat {
                elem: NumFormat::U32,
                count: 1,
            },
        },
        vec![addr, value],
        vec![],
    )
}

fn load_u32(mem: MemRef) -> Op {
    Op::Load {
        mem,
        format: MemFormat {
            elem: NumFormat::U32,
            count: 1,
        },
    }
}

fn module_with(kernel: Function, shared: Vec<SharedDecl>) -> VerifiedModule {
    let module = Module {
        params: vec![],
        buffers: vec![BufferDecl {
            name: "out".into(),
            binding: 0,
            elem: NumFormat::U32,
            span: Span::NONE,
        }],
        shared,
        functions: vec![kernel],
    };
    VerifiedModule::new(module).unwrap_or_else(|d| panic!("verify: {d}"))
}

fn launch(module: &VerifiedModule, words: usize) -> Vec<u32> {
    let kernel = FuncId(0);
    let cfg = LaunchConfig::for_kernel(module, kernel, [1, 1, 1]);
    let mut mem = vec![vec![0u8; words * 4]];
    let report = interp::launch(module, kernel, &cfg, &[], &mut mem).expect("launch");
    assert!(report.faults.is_empty(), "{}", report.faults);
    mem[0]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

const OUT: MemRef = MemRef::Buffer(0);

#[test]
fn if_else_then_loop_masks_by_hand() {
    // if (lane odd) out[lane] = active_mask else out[lane] = active_mask;
    // var i; loop { if (i >= lane) break; out[64 + i] = active_mask; i++ }
    // out[32 + lane] = active_mask after everything.
    let mut b = KernelBuilder::new([32, 1, 1]);
    let mut body = Vec::new();
    let lane = b.def(&mut body, Op::Builtin(Builtin::LaneId), vec![], Type::I32);
    let addr = b.def(
        &mut body,
        Op::Binary(BinaryOp::Shl),
        vec![lane, int(2)],
        Type::I32,
    );
    let bit = b.def(
        &mut body,
        Op::Binary(BinaryOp::And),
        vec![lane, int(1)],
        Type::I32,
    );
    let odd = b.def(&mut body, Op::Cmp(CmpOp::Ne), vec![bit, int(0)], Type::Bool);
    let mut then_body = Vec::new();
    let m1 = b.def(&mut then_body, Op::ActiveMask, vec![], Type::I32);
    then_body.push(store_u32(OUT, addr, m1));
    let mut else_body = Vec::new();
    let m2 = b.def(&mut else_body, Op::ActiveMask, vec![], Type::I32);
    else_body.push(store_u32(OUT, addr, m2));
    body.push(Stmt::If {
        cond: odd,
        then_body: Block { stmts: then_body },
        else_body: Block { stmts: else_body },
        span: Span::NONE,
    });

    let i = b.var(Type::I32);
    let mut loop_body = Vec::new();
    let done = b.def(
        &mut loop_body,
        Op::Cmp(CmpOp::GeU),
        vec![Operand::Var(i), lane],
        Type::Bool,
    );
    loop_body.push(Stmt::If {
        cond: done,
        then_body: Block {
            stmts: vec![Stmt::Break { span: Span::NONE }],
        },
        else_body: Block::default(),
        span: Span::NONE,
    });
    let m = b.def(&mut loop_body, Op::ActiveMask, vec![], Type::I32);
    let slot = b.def(
        &mut loop_body,
        Op::Binary(BinaryOp::Add),
        vec![Operand::Var(i), int(64)],
        Type::I32,
    );
    let slot_addr = b.def(
        &mut loop_body,
        Op::Binary(BinaryOp::Shl),
        vec![slot, int(2)],
        Type::I32,
    );
    loop_body.push(store_u32(OUT, slot_addr, m));
    loop_body.push(inst(
        Op::Binary(BinaryOp::Add),
        vec![Operand::Var(i), int(1)],
        vec![Place::Var(i)],
    ));
    body.push(Stmt::Loop {
        body: Block { stmts: loop_body },
        span: Span::NONE,
    });
    let after = b.def(&mut body, Op::ActiveMask, vec![], Type::I32);
    let after_addr = b.def(
        &mut body,
        Op::Binary(BinaryOp::Add),
        vec![addr, int(128)],
        Type::I32,
    );
    body.push(store_u32(OUT, after_addr, after));
    b.func.body = Block { stmts: body };

    let out = launch(&module_with(b.func, vec![]), 96);
    for lane in 0..32 {
        let expected = if lane % 2 == 1 {
            0xaaaa_aaaa
        } else {
            0x5555_5555
        };
        assert_eq!(out[lane], expected, "lane {lane}");
        assert_eq!(out[32 + lane], u32::MAX, "reconverged, lane {lane}");
    }
    for k in 0..31 {
        assert_eq!(out[64 + k], u32::MAX << (k + 1), "iteration {k}");
    }
    assert_eq!(out[95], 0);
}

#[test]
fn barrier_reduction_by_hand() {
    // 128 threads: shared[i] = i + 1; barrier; thread 0 of each warp sums
    // all 128 entries; every thread stores the sum.
    let mut b = KernelBuilder::new([128, 1, 1]);
    let shared = MemRef::Shared(0);
    let mut body = Vec::new();
    let i = b.def(
        &mut body,
        Op::Builtin(Builtin::LocalIndex),
        vec![],
        Type::I32,
    );
    let addr = b.def(
        &mut body,
        Op::Binary(BinaryOp::Shl),
        vec![i, int(2)],
        Type::I32,
    );
    let v = b.def(
        &mut body,
        Op::Binary(BinaryOp::Add),
        vec![i, int(1)],
        Type::I32,
    );
    body.push(store_u32(shared, addr, v));
    body.push(inst(Op::Barrier, vec![], vec![]));
    let k = b.var(Type::I32);
    let sum = b.var(Type::I32);
    let mut loop_body = Vec::new();
    let done = b.def(
        &mut loop_body,
        Op::Cmp(CmpOp::GeU),
        vec![Operand::Var(k), int(128)],
        Type::Bool,
    );
    loop_body.push(Stmt::If {
        cond: done,
        then_body: Block {
            stmts: vec![Stmt::Break { span: Span::NONE }],
        },
        else_body: Block::default(),
        span: Span::NONE,
    });
    let ka = b.def(
        &mut loop_body,
        Op::Binary(BinaryOp::Shl),
        vec![Operand::Var(k), int(2)],
        Type::I32,
    );
    let x = b.def(&mut loop_body, load_u32(shared), vec![ka], Type::I32);
    loop_body.push(inst(
        Op::Binary(BinaryOp::Add),
        vec![Operand::Var(sum), x],
        vec![Place::Var(sum)],
    ));
    loop_body.push(inst(
        Op::Binary(BinaryOp::Add),
        vec![Operand::Var(k), int(1)],
        vec![Place::Var(k)],
    ));
    body.push(Stmt::Loop {
        body: Block { stmts: loop_body },
        span: Span::NONE,
    });
    body.push(store_u32(OUT, addr, Operand::Var(sum)));
    b.func.body = Block { stmts: body };

    let module = module_with(
        b.func,
        vec![SharedDecl {
            name: "s".into(),
            size: 512,
            span: Span::NONE,
        }],
    );
    assert_eq!(launch(&module, 128), vec![128 * 129 / 2; 128]);
}
