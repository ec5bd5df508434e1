//! Verifier: module items, names, limits and kernel signatures.

mod verify_support;

use verify_support::*;
use warpjit_ir::*;

fn buffer(name: &str, binding: u32, n: u32) -> BufferDecl {
    BufferDecl {
        name: name.into(),
        binding,
        elem: NumFormat::U32,
        span: sp(n),
    }
}

fn shared(name: &str, size: u32, n: u32) -> SharedDecl {
    SharedDecl {
        name: name.into(),
        size,
        span: sp(n),
    }
}

fn param(name: &str, n: u32) -> ParamDecl {
    ParamDecl {
        name: name.into(),
        ty: Type::I32,
        span: sp(n),
    }
}

#[test]
fn module_names_are_unique_per_scope() {
    let m = Module {
        params: vec![param("n", 1), param("n", 2)],
        buffers: vec![buffer("data", 0, 3)],
        shared: vec![shared("data", 16, 4)],
        functions: vec![Fb::kernel("data").span(5).body(vec![])],
    };
    expect_errors(
        &m,
        &[
            (2, "parameter %n is declared twice"),
            (
                4,
                "@data is declared twice (as a buffer and as a shared array)",
            ),
            (5, "@data is declared twice (as a buffer and as a kernel)"),
        ],
    );
}

#[test]
fn buffer_bindings_are_unique() {
    let m = Module {
        buffers: vec![buffer("a", 0, 1), buffer("b", 1, 2), buffer("c", 0, 3)],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[(3, "buffer @c uses binding 0, which buffer @a already uses")],
    );
}

#[test]
fn shared_memory_limits() {
    let m = Module {
        shared: vec![
            shared("empty", 0, 1),
            shared("huge", 65537, 2),
            shared("a", 40000, 3),
            shared("b", 30000, 4),
        ],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[
            (1, "shared @empty has size 0; it needs at least 1 byte"),
            (2, "shared @huge has 65537 bytes; a workgroup has at most 65536 bytes (64 KiB) of shared memory"),
        ],
    );
    let m = Module {
        shared: vec![
            shared("a", 40000, 3),
            shared("b", 30000, 4),
            shared("c", 1, 5),
        ],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[(4, "shared arrays up to @b total 70000 bytes; a workgroup has at most 65536 bytes (64 KiB) of shared memory")],
    );
    let m = Module {
        shared: vec![shared("a", 65536, 3)],
        ..Module::default()
    };
    expect_valid(&m);
}

#[test]
fn private_memory_limits() {
    let mut k = Fb::kernel("main");
    k.private("empty", 0, 1);
    k.private("huge", 16385, 2);
    let mut g = Fb::func("g", vec![]);
    g.private("a", 10000, 3);
    g.private("b", 10000, 4);
    let mut h = Fb::func("h", vec![]);
    h.private("exact", 16384, 5);
    let m = module(vec![k.body(vec![]), g.body(vec![]), h.body(vec![])]);
    expect_errors(
        &m,
        &[
            (1, "private @empty has size 0; it needs at least 1 byte"),
            (2, "private @huge has 16385 bytes; a lane has at most 16384 bytes (16 KiB) of private memory"),
            (4, "private arrays of @g up to @b total 20000 bytes; a lane has at most 16384 bytes (16 KiB) of private memory"),
        ],
    );
}

#[test]
fn workgroup_sizes() {
    let wg = |n: u32, dims: [u32; 3]| Function {
        kind: FuncKind::Kernel {
            workgroup: Some(dims),
        },
        ..Fb::kernel(&format!("k{n}")).span(n).body(vec![])
    };
    let m = module(vec![
        wg(1, [0, 1, 1]),
        wg(2, [32, 32, 2]),
        wg(3, [1024, 1, 1]),
        wg(4, [u32::MAX, u32::MAX, u32::MAX]),
    ]);
    expect_errors(
        &m,
        &[
            (1, "kernel @k1 has workgroup size 0 in x; each size must be at least 1"),
            (2, "kernel @k2 has a workgroup of 32 x 32 x 2 = 2048 invocations; at most 1024 are allowed"),
            (4, "kernel @k4 has a workgroup of 4294967295 x 4294967295 x 4294967295 = 79228162458924105385300197375 invocations; at most 1024 are allowed"),
        ],
    );
}

#[test]
fn kernels_take_no_parameters_and_return_nothing() {
    let mut k = Fb::kernel("main").span(1);
    k.param("x", Type::I32);
    k.f.results = vec![Type::I32];
    let m = module(vec![k.body(vec![ret(2, vec![i32c(0)])])]);
    expect_errors(
        &m,
        &[
            (
                1,
                "kernel @main has parameters; kernels take none (declare module `param`s instead)",
            ),
            (1, "kernel @main has results; kernels return none"),
        ],
    );
}

#[test]
fn function_names_are_unique_per_scope() {
    let mut f = Fb::func("f", vec![]);
    let a = f.value("a", Type::I32);
    let a2 = f.value("a", Type::I32);
    let n = f.value("n", Type::I32);
    f.var("s", Type::I32);
    f.var("s", Type::F32);
    f.private("buf", 4, 5);
    f.private("buf", 4, 6);
    f.private("out", 4, 7);
    let m = Module {
        params: vec![param("n", 1)],
        buffers: vec![buffer("out", 0, 2)],
        functions: vec![f.body(vec![
            builtin(10, a, Builtin::LaneId),
            builtin(11, a2, Builtin::LaneId),
            builtin(12, n, Builtin::LaneId),
        ])],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[
            (6, "@buf is declared twice in @f"),
            (
                7,
                "private @out in @f reuses the name of a module-level @ item",
            ),
            (9001, "%a is declared twice in @f"),
            (9002, "%n in @f reuses the name of a module parameter"),
            (9501, "$s is declared twice in @f"),
        ],
    );
}

#[test]
fn names_use_letters_digits_underscore_and_dot() {
    let mut k = Fb::kernel("bad name").span(3);
    let x = k.value("", Type::I32);
    let m = Module {
        params: vec![param("ok.name_1", 1), param("a-b", 2)],
        functions: vec![k.body(vec![builtin(4, x, Builtin::LaneId)])],
        ..Module::default()
    };
    expect_errors(
        &m,
        &[
            (
                2,
                "the name of parameter %a-b may contain only letters, digits, `_` and `.`",
            ),
            (
                3,
                "the name of kernel @bad name may contain only letters, digits, `_` and `.`",
            ),
            (9000, "the name of value % is empty"),
        ],
    );
}

#[test]
fn a_library_without_kernels_is_valid() {
    let mut f = Fb::func("sq", vec![Type::F32]);
    let x = f.param("x", Type::F32);
    let r = f.value("r", Type::F32);
    let f = f.body(vec![
        inst(1, Op::Binary(BinaryOp::Mul), vec![def(r)], vec![v(x), v(x)]),
        ret(2, vec![v(r)]),
    ]);
    expect_valid(&module(vec![f]));
}
