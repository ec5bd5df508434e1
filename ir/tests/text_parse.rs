//! Parser tests (docs/text-format.md): each case is source text and the
//! expected result, either a typed dump of the module (every operand and
//! result with its type, memory references and callees resolved) or the
//! error as `error LINE:COL: message` plus its notes.

use std::fmt::Write;
use warpjit_ir::text;
use warpjit_ir::*;

fn check(src: &str, expected: &str) {
    let actual = match text::parse(src) {
        Ok(m) => dump(&m),
        Err(diagnostics) => {
            assert_eq!(diagnostics.0.len(), 1, "a parse error is one diagnostic");
            let d = &diagnostics.0[0];
            let (line, col) = d.line_col(src);
            let mut s = format!("error {line}:{col}: {}\n", d.message);
            for n in &d.notes {
                let _ = writeln!(s, "note: {n}");
            }
            s
        }
    };
    let expected = dedent(expected);
    assert_eq!(
        actual.trim_end(),
        expected.trim_end(),
        "\n--- source:\n{src}\n--- actual:\n{actual}"
    );
}

/// Removes the common indentation and the first (empty) line.
fn dedent(s: &str) -> String {
    let lines: Vec<&str> = s.lines().skip_while(|l| l.trim().is_empty()).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in lines {
        out.push_str(l.get(indent..).unwrap_or(""));
        out.push('\n');
    }
    out
}

fn dump(m: &Module) -> String {
    let mut out = String::new();
    for p in &m.params {
        let _ = writeln!(out, "param %{}: {}", p.name, p.ty);
    }
    for b in &m.buffers {
        let _ = writeln!(out, "buffer @{}[{}]: {}", b.name, b.binding, b.elem.name());
    }
    for s in &m.shared {
        let _ = writeln!(out, "shared @{}[{}]", s.name, s.size);
    }
    for f in &m.functions {
        match f.kind {
            FuncKind::Kernel { workgroup: None } => {
                let _ = writeln!(out, "kernel @{}", f.name);
            }
            FuncKind::Kernel {
                workgroup: Some([x, y, z]),
            } => {
                let _ = writeln!(out, "kernel @{} workgroup({x}, {y}, {z})", f.name);
            }
            FuncKind::Function => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| operand(m, f, &Operand::Value(*p)))
                    .collect();
                let results: Vec<&str> = f.results.iter().map(|t| t.name()).collect();
                let _ = writeln!(
                    out,
                    "func @{}({}) -> ({})",
                    f.name,
                    params.join(", "),
                    results.join(", ")
                );
            }
        }
        for v in &f.vars {
            let _ = writeln!(out, "  var ${}: {}", v.name, v.ty);
        }
        for p in &f.privates {
            let _ = writeln!(out, "  private @{}[{}]", p.name, p.size);
        }
        dump_block(&mut out, m, f, &f.body, 1);
    }
    out
}

fn dump_block(out: &mut String, m: &Module, f: &Function, b: &Block, depth: usize) {
    let pad = "  ".repeat(depth);
    for s in &b.stmts {
        match s {
            Stmt::Inst(i) => {
                let _ = writeln!(out, "{pad}{}", inst(m, f, i));
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let _ = writeln!(out, "{pad}if {}", operand(m, f, cond));
                dump_block(out, m, f, then_body, depth + 1);
                if !else_body.stmts.is_empty() {
                    let _ = writeln!(out, "{pad}else");
                    dump_block(out, m, f, else_body, depth + 1);
                }
            }
            Stmt::Loop { body, .. } => {
                let _ = writeln!(out, "{pad}loop");
                dump_block(out, m, f, body, depth + 1);
            }
            Stmt::Ordered { key, body, .. } => {
                let _ = writeln!(out, "{pad}ordered {}", operand(m, f, key));
                dump_block(out, m, f, body, depth + 1);
            }
            Stmt::Break { .. } => {
                let _ = writeln!(out, "{pad}break");
            }
            Stmt::Continue { .. } => {
                let _ = writeln!(out, "{pad}continue");
            }
            Stmt::Kill { .. } => {
                let _ = writeln!(out, "{pad}kill");
            }
            Stmt::Return { values, .. } => {
                let vals: Vec<String> = values.iter().map(|v| operand(m, f, v)).collect();
                let _ = writeln!(out, "{pad}return {}", vals.join(", "));
                out.truncate(out.trim_end().len());
                out.push('\n');
            }
        }
    }
}

fn inst(m: &Module, f: &Function, i: &Inst) -> String {
    let mut s = String::new();
    if !i.results.is_empty() {
        let places: Vec<String> = i
            .results
            .iter()
            .map(|p| match p {
                Place::Value(v) => operand(m, f, &Operand::Value(*v)),
                Place::Var(v) => operand(m, f, &Operand::Var(*v)),
            })
            .collect();
        let _ = write!(s, "{} = ", places.join(", "));
    }
    let mem = |r: &MemRef| match r {
        MemRef::Buffer(i) => format!("buffer @{}", m.buffers[*i as usize].name),
        MemRef::Shared(i) => format!("shared @{}", m.shared[*i as usize].name),
        MemRef::Private(i) => format!("private @{}", f.privates[*i as usize].name),
    };
    let mut args: Vec<String> = i.args.iter().map(|a| operand(m, f, a)).collect();
    let op = match &i.op {
        Op::Load { mem: r, .. } | Op::Store { mem: r, .. } | Op::Atom { mem: r, .. } => {
            args.insert(0, mem(r));
            i.op.mnemonic()
        }
        Op::Call(callee) => format!("call @{}", m.functions[*callee as usize].name),
        Op::Shuffle { form, .. } => format!("{}[{form:?}]", i.op.mnemonic()),
        Op::Vote { guarded: true, .. } => format!("{}[guarded]", i.op.mnemonic()),
        op => op.mnemonic(),
    };
    s.push_str(&op);
    if !args.is_empty() {
        let _ = write!(s, " {}", args.join(", "));
    }
    s
}

fn operand(m: &Module, f: &Function, o: &Operand) -> String {
    match o {
        Operand::Value(v) => format!("%{}:{}", f.values[v.0 as usize].name, f.value_type(*v)),
        Operand::Var(v) => format!("${}:{}", f.vars[v.0 as usize].name, f.var_type(*v)),
        Operand::Param(p) => {
            let d = &m.params[p.0 as usize];
            format!("param %{}:{}", d.name, d.ty)
        }
        Operand::Const(c) => {
            let value = match c.ty {
                Type::Bool => (c.bits != 0).to_string(),
                Type::I8 | Type::I16 | Type::I32 | Type::I64 => {
                    let shift = 64 - c.ty.bits();
                    (((c.bits << shift) as i64) >> shift).to_string()
                }
                Type::F16 => float_text(text::f16_to_f32(c.bits as u16) as f64, c.bits),
                Type::F32 => float_text(f32::from_bits(c.bits as u32) as f64, c.bits),
                Type::F64 => float_text(f64::from_bits(c.bits), c.bits),
            };
            format!("{value}:{}", c.ty)
        }
    }
}

fn float_text(v: f64, bits: u64) -> String {
    if v.is_nan() {
        format!("nan(bits {bits:#x})")
    } else {
        format!("{v:?}")
    }
}

// ---- positive cases ----

#[test]
fn doc_example_parses() {
    check(
        "
        // Every lane squares its element.
        param %n: i32
        buffer @data[0]: f32

        kernel @main workgroup(64) {
          %i = global_id.x
          %in = cmp.lt.u %i, %n
          if %in {
            %addr = shl %i, 2
            %x = load.f32 @data, %addr
            %y = mul %x, %x
            store.f32 @data, %addr, %y
          }
        }
        ",
        "
        param %n: i32
        buffer @data[0]: f32
        kernel @main workgroup(64, 1, 1)
          %i:i32 = global_id.x
          %in:bool = cmp.lt.u %i:i32, param %n:i32
          if %in:bool
            %addr:i32 = shl %i:i32, 2:i32
            %x:f32 = load.f32 buffer @data, %addr:i32
            %y:f32 = mul %x:f32, %x:f32
            store.f32 buffer @data, %addr:i32, %y:f32
        ",
    );
}

#[test]
fn module_items_and_function_headers() {
    check(
        "
        param %w: i32
        buffer @out[3]: u64
        shared @tile[1024]
        param %scale: f64
        kernel @a { }
        kernel @b workgroup(8, 4) { }
        kernel @c workgroup(0x8, 4, 2) { }
        func @f() { }
        func @g(%x: i32) -> i64 { %y = cvt.s64.s32 %x
          return %y }
        func @h(%x: f32, %y: bool) -> (f32, bool) { return %x, %y }
        ",
        "
        param %w: i32
        param %scale: f64
        buffer @out[3]: u64
        shared @tile[1024]
        kernel @a
        kernel @b workgroup(8, 4, 1)
        kernel @c workgroup(8, 4, 2)
        func @f() -> ()
        func @g(%x:i32) -> (i64)
          %y:i64 = cvt.s64.s32 %x:i32
          return %y:i64
        func @h(%x:f32, %y:bool) -> (f32, bool)
          return %x:f32, %y:bool
        ",
    );
}

#[test]
fn statement_forms() {
    // Variables and private arrays are function-scoped wherever they are declared.
    check(
        "
        kernel @k {
          $i = mov 0
          %key = lane_id
          loop {
            %c = cmp.ge.s $i, 10
            if %c { break }
            $i = add $i, 1
            if %c { continue } else { kill }
          }
          %lo, %hi = up64 7:i64
          $i, %hi2 = up64 8:i64
          ordered %key { store.u32 @stack, 0, $i }
          private @stack[64]
          var $i: i32
          demote
          return
        }
        ",
        "
        kernel @k
          var $i: i32
          private @stack[64]
          $i:i32 = mov 0:i32
          %key:i32 = lane_id
          loop
            %c:bool = cmp.ge.s $i:i32, 10:i32
            if %c:bool
              break
            $i:i32 = add $i:i32, 1:i32
            if %c:bool
              continue
            else
              kill
          %lo:i32, %hi:i32 = up64 7:i64
          $i:i32, %hi2:i32 = up64 8:i64
          ordered %key:i32
            store.u32 private @stack, 0:i32, $i:i32
          demote
          return
        ",
    );
}

#[test]
fn else_if_is_an_else_block_holding_one_if() {
    check(
        "
        kernel @k {
          %a = is_helper
          if %a { kill } else if true { demote } else if false { barrier } else { membar }
        }
        ",
        "
        kernel @k
          %a:bool = is_helper
          if %a:bool
            kill
          else
            if true:bool
              demote
            else
              if false:bool
                barrier
              else
                membar
        ",
    );
}

#[test]
fn return_takes_values_only_when_no_instruction_follows() {
    check(
        "
        func @f(%a: i32) -> i32 {
          if true { return %a }
          return
          %b, %c = up64 1:i64
          return %b
        }
        ",
        "
        func @f(%a:i32) -> (i32)
          if true:bool
            return %a:i32
          return
          %b:i32, %c:i32 = up64 1:i64
          return %b:i32
        ",
    );
}

#[test]
fn calls_resolve_functions_defined_later() {
    check(
        "
        kernel @main {
          %x = call @sum(1, 2.5)
          call @nothing()
          %p, %q = call @pair()
        }
        func @sum(%a: i32, %b: f32) -> f32 { %c = cvt.f32.s32 %a
          %d = add %c, %b
          return %d }
        func @nothing() { }
        func @pair() -> (i32, i32) { return 1, 2 }
        ",
        "
        kernel @main
          %x:f32 = call @sum 1:i32, 2.5:f32
          call @nothing
          %p:i32, %q:i32 = call @pair
        func @sum(%a:i32, %b:f32) -> (f32)
          %c:f32 = cvt.f32.s32 %a:i32
          %d:f32 = add %c:f32, %b:f32
          return %d:f32
        func @nothing() -> ()
        func @pair() -> (i32, i32)
          return 1:i32, 2:i32
        ",
    );
}

#[test]
fn arithmetic_and_bit_families() {
    check(
        "
        kernel @k {
          %a = local_index
          %f = cvt.f32.s32 %a
          %d = cvt.f64.f32 %f
          %n = neg %a
          %s = sqrt %f
          %isn = isnan %d
          %cnt = btc 5:i64
          %m = min.u %a, 3
          %fm = max %f, 1
          %p = pow %f, 0.5
          %sh = shr.s %a, 31
          %x = xor %isn, true
          %fma = fma %f, 2, %f
          %sel = select %isn, %f, 0
          %e = bfe.s %a, 4, 8
          %i = bfi 0:i64, 0xff, 8, 8
          %r = bfr %a
          %hi = btfm.s %a
          %pk = pk64 %a, %a
          %bits = bitcast.i32 %f
          %h = cvt.f16.f32.trunc %f
          %back = cvt.f32.f16 %h
        }
        ",
        "
        kernel @k
          %a:i32 = local_index
          %f:f32 = cvt.f32.s32 %a:i32
          %d:f64 = cvt.f64.f32 %f:f32
          %n:i32 = neg %a:i32
          %s:f32 = sqrt %f:f32
          %isn:bool = isnan %d:f64
          %cnt:i32 = btc 5:i64
          %m:i32 = min.u %a:i32, 3:i32
          %fm:f32 = max %f:f32, 1.0:f32
          %p:f32 = pow %f:f32, 0.5:f32
          %sh:i32 = shr.s %a:i32, 31:i32
          %x:bool = xor %isn:bool, true:bool
          %fma:f32 = fma %f:f32, 2.0:f32, %f:f32
          %sel:f32 = select %isn:bool, %f:f32, 0.0:f32
          %e:i32 = bfe.s %a:i32, 4:i32, 8:i32
          %i:i64 = bfi 0:i64, 255:i64, 8:i32, 8:i32
          %r:i32 = bfr %a:i32
          %hi:i32 = btfm.s %a:i32
          %pk:i64 = pk64 %a:i32, %a:i32
          %bits:i32 = bitcast.i32 %f:f32
          %h:f16 = cvt.f16.f32.trunc %f:f32
          %back:f32 = cvt.f32.f16 %h:f16
        ",
    );
}

#[test]
fn warp_intrinsics_and_labels() {
    check(
        "
        kernel @k {
          %l = lane_id
          %p = cmp.eq %l, 0
          %m = active_mask
          %b = ballot %p
          %all = vote.all %p
          %any, %bal = vote.any %p, guard %p
          %eq = vote.eq %p, guard true
          %t = tgall %l
          %tb = tgballot 1.5:f32
          %v = shuffle.idx %l, 3, width 16
          %u, %ok = shuffle.up 1.5:f32, %l, mask 0x1f00
          %w = shuffle.down %p, 1, width 32
          %xx = shuffle.xor %l, 1, mask 31
          %f = cvt.f32.s32 %l
          %q0 = quad.0 %f
          %qy = quad.y %f, 1
          %dx = ddx.coarse %f
          %dy = ddy.fine 2
        }
        ",
        "
        kernel @k
          %l:i32 = lane_id
          %p:bool = cmp.eq %l:i32, 0:i32
          %m:i32 = active_mask
          %b:i32 = ballot %p:bool
          %all:bool = vote.all %p:bool
          %any:bool, %bal:i32 = vote.any[guarded] %p:bool, %p:bool
          %eq:bool = vote.eq[guarded] %p:bool, true:bool
          %t:i32 = tgall %l:i32
          %tb:i32 = tgballot 1.5:f32
          %v:i32 = shuffle.idx[Width] %l:i32, 3:i32, 16:i32
          %u:f32, %ok:bool = shuffle.up[Mask] 1.5:f32, %l:i32, 7936:i32
          %w:bool = shuffle.down[Width] %p:bool, 1:i32, 32:i32
          %xx:i32 = shuffle.xor[Mask] %l:i32, 1:i32, 31:i32
          %f:f32 = cvt.f32.s32 %l:i32
          %q0:f32 = quad.0 %f:f32
          %qy:f32 = quad.y %f:f32, 1.0:f32
          %dx:f32 = ddx.coarse %f:f32
          %dy:f32 = ddy.fine 2.0:f32
        ",
    );
}

#[test]
fn memory_operations_resolve_their_memory() {
    check(
        "
        buffer @buf[0]: u32
        shared @sh[256]
        kernel @k {
          private @pv[16]
          %v4a, %v4b, %v4c, %v4d = load.f32x4 @buf, 16
          %w = load.s8 @sh, 3:i64
          %h = load.f16 @pv, 0
          store.s16 @sh, 2, 70
          store.s8 @sh, 1, 5:i8
          store.f16 @pv, 0, 1.5
          store.f16 @pv, 2, 0x3c00:f16
          store.u64x2 @buf, 0, 1:i64, 2:i64
          %old = atom.add.u32 @buf, 0, 1
          %o2 = atom.cswap.u64 @sh, 8, 0, 0xffffffffffffffff
          %o3 = atom.iwrap.u32 @sh, 0, 10
        }
        ",
        "
        buffer @buf[0]: u32
        shared @sh[256]
        kernel @k
          private @pv[16]
          %v4a:f32, %v4b:f32, %v4c:f32, %v4d:f32 = load.f32x4 buffer @buf, 16:i32
          %w:i32 = load.s8 shared @sh, 3:i64
          %h:f32 = load.f16 private @pv, 0:i32
          store.s16 shared @sh, 2:i32, 70:i32
          store.s8 shared @sh, 1:i32, 5:i8
          store.f16 private @pv, 0:i32, 1.5:f32
          store.f16 private @pv, 2:i32, 1.0:f16
          store.u64x2 buffer @buf, 0:i32, 1:i64, 2:i64
          %old:i32 = atom.add.u32 buffer @buf, 0:i32, 1:i32
          %o2:i64 = atom.cswap.u64 shared @sh, 8:i32, 0:i64, -1:i64
          %o3:i32 = atom.iwrap.u32 shared @sh, 0:i32, 10:i32
        ",
    );
}

#[test]
fn every_builtin_parses() {
    let names: Vec<String> = Builtin::all().into_iter().map(|b| b.name()).collect();
    let mut src = String::from("kernel @k {\n");
    let mut expected = String::from("kernel @k\n");
    for (i, name) in names.iter().enumerate() {
        let ty = Op::Builtin(Builtin::all()[i]).signature(None).results[0];
        let ty = match ty {
            Slot::Fixed(t) => t,
            other => panic!("builtins have fixed types, found {other:?}"),
        };
        src.push_str(&format!("  %v{i} = {name}\n"));
        expected.push_str(&format!("  %v{i}:{ty} = {name}\n"));
    }
    src.push_str("}\n");
    check(&src, &expected);
}

#[test]
fn literals_take_their_type_from_the_first_typed_operand() {
    // The first T operand that is not a bare literal fixes T; a typed
    // literal counts, wherever it stands.
    check(
        "
        param %pf: f64
        kernel @k {
          var $v: i64
          %a = add 1, 2:i64
          %b = add 3, %pf
          $v = add 4, 5
          %c = select true, 6, 7:i64
          %d = cmp.eq 8:f32, 9
          %e = mov 0x7fc00001:f32
          %f = add %a, 0xffffffffffffffff
          %g = mov true
          %h = quad.1 0.25
        }
        ",
        "
        param %pf: f64
        kernel @k
          var $v: i64
          %a:i64 = add 1:i64, 2:i64
          %b:f64 = add 3.0:f64, param %pf:f64
          $v:i64 = add 4:i64, 5:i64
          %c:i64 = select true:bool, 6:i64, 7:i64
          %d:bool = cmp.eq 8.0:f32, 9.0:f32
          %e:f32 = mov nan(bits 0x7fc00001):f32
          %f:i64 = add %a:i64, -1:i64
          %g:bool = mov true:bool
          %h:f32 = quad.1 0.25:f32
        ",
    );
}

#[test]
fn literal_values_by_type() {
    // Integers fit as signed or unsigned; hex is a bit pattern; integer
    // literals in float positions are converted; f16 rounds to nearest even.
    check(
        "
        kernel @k {
          %a = mov 4294967295:i32
          %b = mov -2147483648:i32
          %c = mov 0xffff:i16
          %d = mov -128:i8
          %e = mov 255:i8
          %f = mov 16777217:f32
          %g = mov -0.0:f64
          %h = mov -inf:f32
          %i = mov inf:f16
          %j = mov nan:f64
          %k = mov -nan:f32
          %l = mov 1e-45:f32
          %m = mov 1.00048828125:f16
          %n = mov 65504:f16
          %o = mov 0x7e01:f16
          %p = mov 2.5E+2:f64
          %q = mov 0x1:bool
          %r = mov 007:i32
        }
        ",
        "
        kernel @k
          %a:i32 = mov -1:i32
          %b:i32 = mov -2147483648:i32
          %c:i16 = mov -1:i16
          %d:i8 = mov -128:i8
          %e:i8 = mov -1:i8
          %f:f32 = mov 16777216.0:f32
          %g:f64 = mov -0.0:f64
          %h:f32 = mov -inf:f32
          %i:f16 = mov inf:f16
          %j:f64 = mov nan(bits 0x7ff8000000000000):f64
          %k:f32 = mov nan(bits 0xffc00000):f32
          %l:f32 = mov 1.401298464324817e-45:f32
          %m:f16 = mov 1.0:f16
          %n:f16 = mov 65504.0:f16
          %o:f16 = mov nan(bits 0x7e01):f16
          %p:f64 = mov 250.0:f64
          %q:bool = mov true:bool
          %r:i32 = mov 7:i32
        ",
    );
}

#[test]
fn fixed_positions_type_bare_literals() {
    // Addresses default to i32; stored values take the format's register
    // type; call arguments and return values take the declared types.
    check(
        "
        buffer @b[0]: f32
        func @f(%x: f64, %y: i8) -> (f32, i64) {
          store.f32 @b, 0, 1
          store.u8 @b, 1, 255
          %c = cvt.f64.s8 -1
          return 2, 3
        }
        kernel @k {
          %r, %s = call @f(1, 2)
          if true { }
          ordered 5 { }
        }
        ",
        "
        buffer @b[0]: f32
        func @f(%x:f64, %y:i8) -> (f32, i64)
          store.f32 buffer @b, 0:i32, 1.0:f32
          store.u8 buffer @b, 1:i32, 255:i32
          %c:f64 = cvt.f64.s8 -1:i8
          return 2.0:f32, 3:i64
        kernel @k
          %r:f32, %s:i64 = call @f 1.0:f64, 2:i8
          if true:bool
          ordered 5:i32
        ",
    );
}

#[test]
fn ill_typed_instructions_still_build() {
    // The verifier reports these; the parser types what the signature says.
    check(
        "
        buffer @b[0]: f32
        kernel @k {
          %a = lane_id
          %b = add %a, 1.5:f32
          %c = add 1:i64, %a
          %d = neg %a, %a
          %e, %f = mov %a
          %g = vote.all %a, %a
          %h = isnan %a
          %i = mov %a, 2:i8
          %j = neg
          barrier %a
          %k = neg
          %l = lane_id
          %m = load.f32 @b
        }
        ",
        "
        buffer @b[0]: f32
        kernel @k
          %a:i32 = lane_id
          %b:i32 = add %a:i32, 1.5:f32
          %c:i64 = add 1:i64, %a:i32
          %d:i32 = neg %a:i32, %a:i32
          %e:i32, %f:i32 = mov %a:i32
          %g:bool = vote.all %a:i32, %a:i32
          %h:bool = isnan %a:i32
          %i:i32 = mov %a:i32, 2:i8
          %j:i32 = neg
          barrier %a:i32
          %k:i32 = neg
          %l:i32 = lane_id
          %m:f32 = load.f32 buffer @b
        ",
    );
}

#[test]
fn whitespace_and_comments_do_not_matter() {
    check(
        "kernel @k{%a=lane_id %b=add %a,1//c\n%c=mov %b}",
        "
        kernel @k
          %a:i32 = lane_id
          %b:i32 = add %a:i32, 1:i32
          %c:i32 = mov %b:i32
        ",
    );
}

#[test]
fn spans_cover_the_source_text() {
    let src = "param %n: i32\nkernel @k {\n  var $v: i32\n  %a, $v = up64 1:i64\n  barrier\n  if %n { kill } else if true { break }\n}\n";
    let m = text::parse(src).expect("valid");
    let f = &m.functions[0];
    let text_of = |s: Span| &src[s.start as usize..s.end as usize];
    assert_eq!(text_of(m.params[0].span), "param %n: i32");
    assert_eq!(text_of(f.vars[0].span), "var $v: i32");
    assert_eq!(text_of(f.values[0].span), "%a");
    assert_eq!(text_of(f.span), &src[14..src.len() - 1]);
    let stmts: Vec<&str> = f.body.stmts.iter().map(|s| text_of(s.span())).collect();
    assert_eq!(
        stmts,
        [
            "%a, $v = up64 1:i64",
            "barrier",
            "if %n { kill } else if true { break }"
        ]
    );
    let Stmt::If { else_body, .. } = &f.body.stmts[2] else {
        panic!("third statement is the if")
    };
    assert_eq!(text_of(else_body.stmts[0].span()), "if true { break }");
}

// ---- parse errors ----

#[test]
fn lexical_errors() {
    check("kernel @k { # }", "error 1:13: unexpected character `#`");
    check(
        "kernel @k {\u{a0}}",
        "error 1:12: unexpected character U+00A0",
    );
    check(
        "kernel @k { % }",
        "error 1:13: expected a name after `%`, found a space",
    );
    check(
        "kernel @k { %a = add 12abc, 1 }",
        "error 1:22: invalid number `12abc`: expected a separator after `12`, found `a`",
    );
    check(
        "kernel @k { %a = add 1., 1 }",
        "error 1:22: expected a digit after the decimal point, found `,`",
    );
    check(
        "kernel @k { %a = add 1e, 1 }",
        "error 1:22: expected the exponent's digits, found `,`",
    );
    check(
        "kernel @k { %a = mov -0x1:i32 }",
        "error 1:22: a hex literal is a bit pattern and cannot be negative",
    );
    check(
        "kernel @k { %a = mov 0x:i32 }",
        "error 1:22: expected hex digits after `0x`, found `:`",
    );
    check(
        "kernel @k { %a = mov - 1 }",
        "error 1:22: expected a number, `inf`, `nan` or `>` after `-`, found a space",
    );
}

#[test]
fn length_limits() {
    let long_name = format!("kernel @k {{ %{} = lane_id }}", "a".repeat(1024));
    check(
        &long_name,
        "error 1:13: this name is 1025 characters long; the limit is 1024",
    );
    let ok_name = format!("kernel @k {{ %{} = lane_id }}", "a".repeat(1023));
    assert!(text::parse(&ok_name).is_ok());
    let long_literal = format!("kernel @k {{ %a = mov 1{}:i32 }}", "0".repeat(1024));
    check(
        &long_literal,
        "error 1:22: this literal is 1025 characters long; the limit is 1024",
    );
}

#[test]
fn source_size_limit() {
    let mut src = String::from("kernel @k { }");
    src.push_str(&" ".repeat(text::MAX_SOURCE_LEN + 1 - src.len()));
    check(
        &src,
        "error 1:1: the source is 67108865 bytes long; the limit is 67108864 bytes (64 MiB)",
    );
}

#[test]
fn module_syntax_errors() {
    check(
        "kernal @k { }",
        "error 1:1: expected `param`, `buffer`, `shared`, `kernel` or `func`, found `kernal`",
    );
    check(
        "param %n i32",
        "error 1:10: expected `:` and the parameter's type, found `i32`",
    );
    check(
        "param %n: u32",
        "
        error 1:11: expected a type (bool, i8, i16, i32, i64, f16, f32, f64), found `u32`
        note: types carry no signedness; `u32` is a memory format, its type is `i32`
        ",
    );
    check(
        "buffer @b: f32",
        "error 1:10: expected `[` and the buffer's binding number, found `:`",
    );
    check(
        "buffer @b[4294967296]: f32",
        "error 1:11: expected a binding number, found `4294967296`, which does not fit in 32 bits",
    );
    check(
        "buffer @b[0]: i32",
        "error 1:15: expected an element format (s8, s16, s32, s64, u8, u16, u32, u64, f16, f32, f64), found `i32`",
    );
    check(
        "shared @s[-1]",
        "error 1:11: expected a size in bytes, found `-1`",
    );
    check(
        "kernel @k(%a: i32) { }",
        "
        error 1:10: expected `workgroup` or `{`, found `(`
        note: kernels take no parameters and return nothing; use `param` for launch inputs
        ",
    );
    check(
        "kernel @k workgroup(1, 2, 3, 4) { }",
        "error 1:30: expected `)` (a workgroup has at most 3 dimensions), found `4`",
    );
    check(
        "kernel @k workgroup 8 { }",
        "error 1:21: expected `(` and the workgroup size, found `8`",
    );
    check(
        "func @f { }",
        "error 1:9: expected `(` and the parameter list, found `{`",
    );
    check(
        "func @f(%a i32) { }",
        "error 1:12: expected `:` and the parameter's type, found `i32`",
    );
    check(
        "func @f() i32 { }",
        "error 1:11: expected `->` or `{`, found `i32`",
    );
    check(
        "func @f() -> (i32 f32) { }",
        "error 1:19: expected `,` or `)`, found `f32`",
    );
}

#[test]
fn statement_syntax_errors() {
    check(
        "kernel @k {\n  %a = lane_id\n",
        "error 3:1: expected `}` to close the block opened at 1:11, found end of file",
    );
    check(
        "kernel @k { else { } }",
        "
        error 1:13: expected a statement or `}`, found `else`
        note: `else` must directly follow the `}` of an `if`
        ",
    );
    check(
        "kernel @k {\n  %a = lane_id\nkernel @j { }",
        "
        error 3:1: expected a statement or `}`, found `kernel`
        note: module items cannot appear inside a function; is a `}` missing?
        ",
    );
    check(
        "kernel @k { 42 }",
        "error 1:13: expected a statement or `}`, found `42`",
    );
    check(
        "kernel @k { %a lane_id }",
        "error 1:16: expected `,` or `=` after the result `%a`, found `lane_id`",
    );
    check(
        "kernel @k { %a, = lane_id }",
        "error 1:17: expected a result like `%x` or `$x` after `,`, found `=`",
    );
    check(
        "kernel @k { %a = loop }",
        "error 1:18: expected an instruction after `=`, found `loop`",
    );
    check(
        "kernel @k { %a = 5 }",
        "error 1:18: expected an instruction, found `5`",
    );
    check(
        "kernel @k { if { } }",
        "error 1:16: expected a condition operand after `if` (a value, variable or literal), found `{`",
    );
    check(
        "kernel @k { if true kill }",
        "error 1:21: expected `{`, found `kill`",
    );
    check(
        "kernel @k { if true { } else kill }",
        "error 1:30: expected `{` or `if` after `else`, found `kill`",
    );
    check(
        "kernel @k { var $i i32 }",
        "error 1:20: expected `:` and the variable's type, found `i32`",
    );
    check(
        "kernel @k { private @p 16 }",
        "error 1:24: expected `[` and the size in bytes, found `16`",
    );
}

#[test]
fn operand_errors() {
    check(
        "kernel @k {\n  %a = add 1:i32,\n  %b = lane_id\n}",
        "error 3:3: expected an operand, found `%b`, which starts the next instruction",
    );
    check(
        "kernel @k { %a = add 1, }",
        "error 1:25: expected an operand (a value, variable or literal), found `}`",
    );
    check(
        "kernel @k { %a = add x, 1 }",
        "error 1:22: expected an operand (a value, variable or literal), found `x`",
    );
    check(
        "kernel @k { %a = mov 1:u8 }",
        "
        error 1:24: expected a type (bool, i8, i16, i32, i64, f16, f32, f64), found `u8`
        note: types carry no signedness; `u8` is a memory format, its type is `i8`
        ",
    );
    check(
        "kernel @k { store.f32 %b, 0, 1.0 }",
        "error 1:23: expected a buffer, shared or private array like `@data` after `store.f32`, found `%b`",
    );
    check(
        "buffer @b[0]: f32\nkernel @k { store.f32 @b 0, 1.0 }",
        "error 2:26: expected `,` and the address, found `0`",
    );
    check(
        "kernel @k { call @f }",
        "error 1:21: expected `(` and the call's arguments, found `}`",
    );
    check(
        "kernel @k { call f() }",
        "error 1:18: expected a function name like `@f` after `call`, found `f`",
    );
}

#[test]
fn unknown_instructions_suggest_close_ones() {
    check(
        "kernel @k { %a = addd 1:i32, 2 }",
        "error 1:18: unknown instruction `addd`; did you mean `add`?",
    );
    check(
        "kernel @k { %a = vote %p }",
        "error 1:18: unknown instruction `vote`; did you mean `vote.all`, `vote.any` or `vote.eq`?",
    );
    check(
        "kernel @k { %a = cmp.lt.x 1:i32, 2 }",
        "error 1:18: unknown instruction `cmp.lt.x`; did you mean `cmp.lt.s` or `cmp.lt.u`?",
    );
    check(
        "kernel @k { %a = load.f32x3 @b, 0 }",
        "error 1:18: unknown instruction `load.f32x3`; did you mean `load.f32x2` or `load.f32x4`?",
    );
    check(
        "kernel @k { %a = frobnicate 1 }",
        "error 1:18: unknown instruction `frobnicate`",
    );
    check(
        "kernel @k { %a = cmp 1:i32, 2 }",
        "error 1:18: unknown instruction `cmp`; did you mean `cmp.eq`, `cmp.ne`, `cmp.lt.s`, `cmp.le.s`, ...?",
    );
}

#[test]
fn label_errors() {
    check(
        "kernel @k { %a = add 1:i32, width 2 }",
        "error 1:29: expected an operand, found the label `width`; `add` takes no operand labels",
    );
    check(
        "kernel @k { %a = shuffle.idx 1:i32, width 2, 3 }",
        "error 1:37: expected an operand, found the label `width`; only the third operand of `shuffle.idx` takes a label, `width` or `mask`",
    );
    check(
        "kernel @k { %a = shuffle.idx 1:i32, 2, guard 3 }",
        "error 1:40: expected an operand, found the label `guard`; only the third operand of `shuffle.idx` takes a label, `width` or `mask`",
    );
    check(
        "kernel @k { %a = shuffle.up 1:i32, 2, 3 }",
        "error 1:39: expected `width` or `mask` before the third operand of `shuffle.up`, found `3`",
    );
    check(
        "kernel @k { %a = shuffle.up }",
        "error 1:29: expected the operands of `shuffle.up` (`data, index, width w` or `data, index, mask m`), found `}`",
    );
    check(
        "kernel @k { %a = shuffle.up 1:i32, 2 }",
        "error 1:38: expected `,` and the third operand of `shuffle.up` (`width w` or `mask m`), found `}`",
    );
    check(
        "kernel @k { %a = vote.all guard true }",
        "error 1:27: expected an operand, found the label `guard`; only the second operand of `vote.all` takes a label, `guard`",
    );
    check(
        "buffer @b[0]: u32\nkernel @k { store.u32 @b, mask 0, 1 }",
        "error 2:27: expected an operand, found the label `mask`; `store.u32` takes no operand labels",
    );
}

#[test]
fn nesting_limit() {
    // The function body is level 1, so 255 nested loops are allowed ...
    let ok = format!(
        "kernel @k {{ {} {} }}",
        "loop {".repeat(255),
        "}".repeat(255)
    );
    assert!(text::parse(&ok).is_ok());
    // ... and the 256th nested block is one too many.
    let deep = format!(
        "kernel @k {{ {} {} }}",
        "loop {".repeat(256),
        "}".repeat(256)
    );
    let col = "kernel @k { ".len() + 255 * "loop {".len() + "loop ".len() + 1;
    check(
        &deep,
        &format!("error 1:{col}: blocks nest too deeply: the limit is 256 levels"),
    );
}

#[test]
fn else_if_chains_count_as_nesting() {
    let chain = |arms: usize| {
        format!(
            "kernel @k {{ if true {{ }}{} }}",
            " else if true { }".repeat(arms)
        )
    };
    assert!(text::parse(&chain(254)).is_ok());
    let err = text::parse(&chain(255)).expect_err("too deep");
    assert_eq!(
        err.0[0].message,
        "blocks nest too deeply: the limit is 256 levels; each `else if` of a chain \
         counts as one more (this is the 255th)"
    );
    // Other errors at an `else if`'s block say nothing of the chain.
    let err = text::parse("kernel @k { if true { } else if true }").expect_err("no block");
    assert_eq!(err.0[0].message, "expected `{`, found `}`");
}

#[test]
fn what_each_construct_expects_next_is_named_with_its_position() {
    let cases = [
        (
            "kernel @main workgroup(32) {\n  var x: i32\n}\n",
            "error 2:7: expected a variable name like `$i`, found `x`",
        ),
        (
            "kernel @main workgroup(32) {\n  ordered {\n  }\n}\n",
            "error 2:11: expected a key operand after `ordered` (a value, variable or literal), found `{`",
        ),
        (
            "buffer @o[0]\nkernel @main workgroup(32) {\n}\n",
            "error 2:1: expected `:` and the buffer's element format, found `kernel`",
        ),
        (
            "kernel @main workgroup(32) {\n  if true {\n",
            "error 3:1: expected `}` to close the block opened at 2:11, found end of file",
        ),
    ];
    for (src, expected) in cases {
        check(src, &format!("{expected}\n"));
    }
}

// ---- name errors ----

#[test]
fn redeclarations() {
    check(
        "param %n: i32\nparam %n: f32",
        "
        error 2:7: `%n` is already declared
        note: first declared at 1:1
        ",
    );
    check(
        "buffer @x[0]: f32\nkernel @x { }",
        "
        error 2:8: `@x` is already declared
        note: first declared at 1:8
        ",
    );
    check(
        "kernel @k { var $i: i32\n var $i: f32 }",
        "
        error 2:6: `$i` is already declared
        note: first declared at 1:13
        ",
    );
    check(
        "shared @s[4]\nkernel @k { private @s[4] }",
        "
        error 2:21: `@s` is already declared
        note: first declared at 1:8
        ",
    );
    check(
        "kernel @k { %a = lane_id\n %a = lane_id }",
        "
        error 2:2: `%a` is already defined
        note: first defined at 1:13
        ",
    );
    check(
        "param %n: i32\nfunc @f(%n: i32) { }",
        "
        error 2:9: `%n` is a module parameter; a function value may not reuse its name
        note: the parameter is declared at 1:1
        ",
    );
}

#[test]
fn unknown_names() {
    check(
        "kernel @k { %a = mov %b }",
        "error 1:22: unknown value `%b`",
    );
    check(
        "kernel @k { %a = mov %b\n %b = lane_id }",
        "error 1:22: `%b` is used before its definition at 2:2; a value must be defined before its uses",
    );
    check(
        "kernel @k { $i = lane_id }",
        "
        error 1:13: unknown variable `$i`
        note: declare it with `var $i: TYPE`
        ",
    );
    check(
        "kernel @k { %a = load.f32 @nowhere, 0 }",
        "error 1:27: unknown memory `@nowhere`; expected a buffer, shared or private array",
    );
    check(
        "kernel @k { %a = load.f32 @k, 0 }",
        "error 1:27: expected a buffer, shared or private array, found `@k`, which is a function",
    );
    check(
        "kernel @k { call @g() }",
        "error 1:18: unknown function `@g`",
    );
    check(
        "shared @s[4]\nkernel @k { call @s() }",
        "error 2:18: expected a function, found `@s`, which is a shared array",
    );
    check(
        "func @f() { private @p[4]\n}\nkernel @k { %a = load.u32 @p, 0 }",
        "error 3:27: unknown memory `@p`; expected a buffer, shared or private array",
    );
}

// ---- literal typing errors ----

#[test]
fn literal_typing_errors() {
    let cannot_infer = "cannot infer the type of this literal; write it with a type, e.g. 1:i32";
    check(
        "kernel @k { %a = mov 5 }",
        &format!("error 1:22: {cannot_infer}"),
    );
    check(
        "kernel @k { %a = add 1, 2 }",
        &format!("error 1:22: {cannot_infer}"),
    );
    check(
        "kernel @k { %a = tgall nan }",
        &format!("error 1:24: {cannot_infer}"),
    );
    // An operand past the signature has no position to take a type from.
    check(
        "kernel @k { %a = neg 1:i32, 2 }",
        &format!("error 1:29: {cannot_infer}"),
    );
    check(
        "func @f() -> i32 { return 1, 2 }",
        &format!("error 1:30: {cannot_infer}"),
    );
    check(
        "kernel @k { %a = add 1:i32, 2.5 }",
        "error 1:29: expected an i32 literal, found the float literal `2.5`",
    );
    check(
        // A shift amount has the shifted value's type.
        "kernel @k { %a = shl 1:i64, inf }",
        "error 1:29: expected an i64 literal, found the float literal `inf`",
    );
    check(
        "kernel @k { if 1 { } }",
        "error 1:16: expected a bool literal (`true` or `false`), found the integer `1`",
    );
    check(
        "kernel @k { %a = mov true:i32 }",
        "error 1:22: expected an i32 literal, found the bool `true`",
    );
    check(
        "kernel @k { %a = mov 256:i8 }",
        "error 1:22: integer literal `256` does not fit in i8 (from -128 to 255, read as signed or unsigned)",
    );
    check(
        "kernel @k { %a = mov -129:i8 }",
        "error 1:22: integer literal `-129` does not fit in i8 (from -128 to 255, read as signed or unsigned)",
    );
    check(
        "kernel @k { %a = mov 18446744073709551616:i64 }",
        "error 1:22: integer literal `18446744073709551616` does not fit in i64 (from -9223372036854775808 to 18446744073709551615, read as signed or unsigned)",
    );
    check(
        "kernel @k { %a = cvt.s32.s16 0x10000 }",
        "error 1:30: hex literal `0x10000` does not fit in 16 bits for i16",
    );
    check(
        "kernel @k { %a = mov 1e39:f32 }",
        "error 1:22: literal `1e39` overflows f32 (its largest finite value is 3.4028235e38)",
    );
    check(
        "kernel @k { %a = cvt.f32.f16 65520 }",
        "error 1:30: literal `65520` overflows f16 (its largest finite value is 65504)",
    );
    check(
        "kernel @k { %a = mov -1e309:f64 }",
        "error 1:22: literal `-1e309` overflows f64 (its largest finite value is 1.7976931348623157e308)",
    );
}

#[test]
fn rendered_error_points_at_the_token() {
    let src = "kernel @k {\n  %x = addd %y, 1\n}\n";
    let err = text::parse(src).expect_err("unknown instruction");
    assert_eq!(
        err.render("k.warp", src),
        "error: unknown instruction `addd`; did you mean `add`?\n \
         --> k.warp:2:8\n  \
         |\n\
         2 |   %x = addd %y, 1\n  \
         |        ^^^^\n\
         \n\
         1 error in k.warp\n"
    );
}

#[test]
fn snippets_show_tabs_as_spaces_and_control_characters_as_pictures() {
    // Two tabs then 16 characters: the token is at column 19, and the
    // caret lines up with it under the tabs shown as four spaces each.
    let src = "kernel @k {\n\t\t%x = addd %y, 1\r\n}\n";
    let err = text::parse(src).expect_err("unknown instruction");
    let shown = err.render("k.warp", src);
    assert!(
        shown
            .contains(" --> k.warp:2:8\n  |\n2 |         %x = addd %y, 1\n  |              ^^^^\n"),
        "{shown}"
    );
    // A lone CR at the end of the file is the error, and shown.
    let src = "kernel @k {\n}\r";
    let shown = text::parse(src)
        .expect_err("a lone CR")
        .render("k.warp", src);
    assert!(shown.contains("2 | }\u{240d}\n  |  ^\n"), "{shown}");
    // A bidirectional override in a comment cannot reorder the line.
    let src = "kernel @k {\n  %x = addd 1 // \u{202e}x\n}\n";
    let shown = text::parse(src).expect_err("unknown").render("k.warp", src);
    assert!(
        shown.contains("2 |   %x = addd 1 // \u{fffd}x\n"),
        "{shown}"
    );
    assert!(!shown.contains('\u{202e}'), "{shown}");
    let src = "kernel @k {\u{7}\n}\n";
    let err = text::parse(src).expect_err("a bell");
    let shown = err.render("k.warp", src);
    assert!(
        shown.contains("1 | kernel @k {\u{2407}\n  |            ^\n"),
        "{shown}"
    );
}

#[test]
fn a_leading_byte_order_mark_is_skipped() {
    let plain = "kernel @main workgroup(32) {\n  %x = lane_id\n}\n";
    let with_mark = format!("\u{feff}{plain}");
    let a = text::parse(plain).expect("parses");
    let b = text::parse(&with_mark).expect("parses after the mark");
    assert_eq!(dump(&a), dump(&b));
    // Elsewhere it is still an error, with its position.
    check(
        "kernel @main workgroup(32) {\n  \u{feff}%x = lane_id\n}\n",
        "error 2:3: unexpected character `\u{feff}` (U+FEFF)",
    );
}

#[test]
fn items_are_found_by_name_with_or_without_their_sigil() {
    let m = text::parse(
        "param %n: i32\nbuffer @b[1]: u32\nbuffer @a[0]: u32\nfunc @f() {\n}\nkernel @main {\n}\n",
    )
    .expect("parses");
    for name in ["main", "@main"] {
        assert_eq!(m.find_function(name).map(|f| f.0), Some(1), "{name}");
    }
    assert_eq!(m.kernels().map(|(id, _)| id.0).collect::<Vec<_>>(), [1]);
    // Buffers are found by their position in declaration order, which is
    // the order launches take them in, not by binding number.
    for (name, position) in [("a", 1), ("@a", 1), ("b", 0), ("@b", 0)] {
        assert_eq!(m.find_buffer(name), Some(position), "{name}");
    }
    assert_eq!(m.find_param("%n").map(|p| p.0), Some(0));
    assert_eq!(m.find_param("n").map(|p| p.0), Some(0));
    assert_eq!(m.find_function("@@main"), None);
}
