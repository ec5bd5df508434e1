//! Round trip of the text format (docs/text-format.md): every corpus
//! program is written in canonical form, so printing what it parses to gives
//! the same text, and parsing the printed text gives the same module.

use proptest::prelude::*;
use std::collections::BTreeSet;
use warpjit_ir::text;
use warpjit_ir::*;

/// `src` is canonical: it parses, prints back to itself, and round-trips.
fn check(src: &str, expected: &str) {
    let m = text::parse(src).unwrap_or_else(|d| panic!("{}", d.render("corpus", src)));
    let printed = text::print(&m);
    assert_eq!(printed, expected, "\n--- printed:\n{printed}");
    if let Err(e) = text::check_round_trip(&m) {
        panic!("{e}");
    }
}

fn check_canonical(src: &str) {
    check(src, src);
}

const ARITHMETIC: &str = "\
param %pi: i32
param %pl: i64
param %pf: f32
param %pd: f64

kernel @arith workgroup(32) {
  var $acc: f64
  %i = local_index
  %l = cvt.s64.s32 %i
  %f = cvt.f32.s32 %i
  %d = cvt.f64.f32 %f
  %m = mov %i
  %c = cmp.eq %i, 0
  %sel = select %c, %f, 1.5
  %neg = neg %l
  %abs = abs %pd
  %notb = not %c
  %noti = not %i
  %floor = floor %f
  %ceil = ceil %d
  %round = round %f
  %trunc = trunc %d
  %fract = fract %f
  %sqrt = sqrt %d
  %rsq = rsq %f
  %rcp = rcp %d
  %exp2 = exp2 %f
  %log2 = log2 %d
  %sin = sin %f
  %cos = cos %d
  %isnan = isnan %f
  %add = add %i, 1
  %sub = sub %l, %pl
  %mul = mul %f, %pf
  %div = div %d, 3.0
  %divs = div.s %i, -3
  %divu = div.u %l, 7
  %rems = rem.s %i, %pi
  %remu = rem.u %i, -1
  %min = min %f, -0.0
  %max = max %d, inf
  %mins = min.s %i, 5
  %minu = min.u %l, 0x100000000
  %maxs = max.s %i, -65535
  %maxu = max.u %i, 0xffff0000
  %pow = pow %f, 2.0
  %and = and %c, true
  %or = or %i, 0xff00ff00
  %xor = xor %l, -1
  %shl = shl %i, 3
  %shru = shr.u %i, 31
  %shrs = shr.s %l, 63
  %fma = fma %f, %f, 1e-10
  %ceq = cmp.eq %d, 0x7ff8000000000000
  %cne = cmp.ne %f, 0x7fc00001
  %clts = cmp.lt.s %i, 1
  %cles = cmp.le.s %l, 1
  %cgts = cmp.gt.s %i, 1
  %cges = cmp.ge.s %l, 1
  %cltu = cmp.lt.u %i, 1
  %cleu = cmp.le.u %l, 1
  %cgtu = cmp.gt.u %i, 1
  %cgeu = cmp.ge.u %l, 1
  %clt = cmp.lt %f, 1.0
  %cle = cmp.le %d, -inf
  %cgt = cmp.gt %f, 3.4028235e38
  %cge = cmp.ge %d, 5e-324
  $acc = add $acc, %d
}
";

const BITS_AND_CONVERSIONS: &str = "\
func @bits(%i: i32, %l: i64, %f: f32, %d: f64, %b: bool) -> (i64, i32) {
  %bfes = bfe.s %i, 4, 8
  %bfeu = bfe.u %l, 60, 8
  %bfi = bfi %i, 255, 8, 8
  %bfr = bfr %l
  %btc = btc %i
  %btfl = btfl %l
  %btfms = btfm.s %i
  %btfmu = btfm.u %l
  %pk = pk64 %i, %btc
  %lo, %hi = up64 %pk
  %i8 = cvt.s8.s32 %i
  %i16 = cvt.u16.s32 %i
  %h = cvt.f16.f32.trunc %f
  %cb = bitcast.bool %b
  %c8 = bitcast.i8 %i8
  %c16 = bitcast.i16 %h
  %cf16 = bitcast.f16 %i16
  %c32 = bitcast.i32 %f
  %cf32 = bitcast.f32 %i
  %c64 = bitcast.i64 %d
  %cf64 = bitcast.f64 %l
  %ceil = cvt.s32.f64.ceil %d
  %flr = cvt.u64.f32.flr %f
  %rne = cvt.f32.f64 %d
  return %pk, %lo
}
";

const WARP: &str = "\
kernel @warp workgroup(16, 16) {
  %gx = global_id.x
  %gy = global_id.y
  %gz = global_id.z
  %lx = local_id.x
  %ly = local_id.y
  %lz = local_id.z
  %wx = workgroup_id.x
  %wy = workgroup_id.y
  %wz = workgroup_id.z
  %nx = num_workgroups.x
  %ny = num_workgroups.y
  %nz = num_workgroups.z
  %sx = workgroup_size.x
  %sy = workgroup_size.y
  %sz = workgroup_size.z
  %li = local_index
  %lane = lane_id
  %meq = lane_mask.eq
  %mge = lane_mask.ge
  %mgt = lane_mask.gt
  %mle = lane_mask.le
  %mlt = lane_mask.lt
  %warp = warp_id
  %sm = sm_id
  %ws = warp_size
  %wpsm = warps_per_sm
  %smc = sm_count
  %helper = is_helper
  %f = cvt.f32.s32 %lane
  %p = cmp.lt.u %lane, 16
  %active = active_mask
  %ballot = ballot %p
  %all = vote.all %p
  %any, %anyb = vote.any %p, guard %helper
  %eq = vote.eq %p, guard true
  %eq2, %eqb = vote.eq false
  %all2 = vote.all %p, guard false
  %any2 = vote.any true
  %tgall = tgall %p
  %tgany = tgany %lane
  %tgeq = tgeq %f
  %tgballot = tgballot %f
  %tgb2 = tgballot true
  %s1 = shuffle.idx %f, 0, width 32
  %s2, %v2 = shuffle.idx %lane, 3, mask 31
  %s3 = shuffle.up %p, 1, width 8
  %s4, %v4 = shuffle.up 1.5:f32, %lane, mask 7936
  %s5 = shuffle.down %lane, %lane, width %lane
  %s6 = shuffle.down %f, 2, mask 7936
  %s7 = shuffle.xor true, 1, width 4
  %s8, %v8 = shuffle.xor %lane, 16, mask 31
  %q0 = quad.0 %f
  %q1 = quad.1 %f, 1.0
  %q2 = quad.2 0.5
  %q3 = quad.3 %f, %f
  %qx = quad.x %f
  %qy = quad.y %f, -2.0
  %dxf = ddx.fine %f
  %dxc = ddx.coarse %f
  %dyf = ddy.fine %f
  %dyc = ddy.coarse 3.0
  demote
}
";

const MEMORY: &str = "\
buffer @words[0]: u32
buffer @doubles[1]: f64
shared @tile[4096]

kernel @memory workgroup(64, 2) {
  private @scratch[256]
  %i = local_index
  %a = shl %i, 4
  %a64 = cvt.u64.u32 %a
  %w = load.u32 @words, %a
  %d0, %d1 = load.f64x2 @doubles, %a64
  %t0, %t1, %t2, %t3 = load.s32x4 @tile, 16
  %h = load.f16 @scratch, 2
  %b = load.s8 @scratch, 0:i64
  store.u32 @words, %a, %w
  store.f64x2 @doubles, %a64, %d0, 1.5
  store.s32x4 @tile, 0, 1, 2, %t2, -4
  store.f16 @scratch, 2, %h
  store.f16 @scratch, 4, 1.0:f16
  store.s8 @scratch, 0, 5:i8
  store.u16 @scratch, 6, 0xffff0000
  %add = atom.add.u32 @words, %a, 1
  %min = atom.min.s32 @tile, 0, -1
  %max = atom.max.u32 @words, 4, 7
  %iwrap = atom.iwrap.u32 @tile, 8, 10
  %dwrap = atom.dwrap.u32 @tile, 8, 10
  %and = atom.and.s32 @words, 0, 255
  %or = atom.or.u32 @tile, 12, %w
  %xor = atom.xor.s32 @words, 0, %w
  %exch = atom.exch.u64 @tile, 16, 0x123456789
  %cswap = atom.cswap.u64 @words, 8:i64, 0, -1
  %cswap32 = atom.cswap.s32 @tile, 0, %i, 1
  membar
  barrier
}
";

const CONTROL: &str = "\
param %n: i32

kernel @main workgroup(8, 4, 2) {
  var $i: i32
  var $sum: f32
  private @stack[64]
  %lane = lane_id
  loop {
    %done = cmp.ge.s $i, %n
    if %done {
      break
    }
    %odd = and $i, 1
    %is_odd = cmp.ne %odd, 0
    if %is_odd {
      $i = add $i, 1
      continue
    } else if false {
      kill
    } else if %done {} else {
      %x, %y = call @pair($i)
      $sum = add $sum, %x
      $i, %hi = up64 0x100000000
    }
    $i = add $i, 1
  }
  ordered %lane {
    %old = load.f32 @stack, 0
    %new = add %old, $sum
    store.f32 @stack, 0, %new
  }
  ordered 7 {}
  %c = is_helper
  if %c {
    return
  }
  if true {} else {
    loop {}
  }
  call @side()
}

func @pair(%a: i32) -> (f32, f32) {
  %f = cvt.f32.s32 %a
  %g = mul %f, 0.5
  return %f, %g
}

func @side() {
}

func @constant() -> f64 {
  return 1.0
}
";

/// Ill-typed programs parse (the verifier rejects them) and round-trip too:
/// literals whose type the context would not give get a suffix.
const ILL_TYPED: &str = "\
buffer @b[0]: u32

kernel @k {
  var $v: i32
  %a = lane_id
  %b = add 1:i64, %a
  %c = add %a, 1:i64
  %d = add 1:i64, 2:i32
  %e = add 1:i64, 2:i32, %a
  %f = add 1:i64, 2, %a
  $v = add 1.0:f32, 2.0
  $v = add 3:i64, $v
  %g = mov %a, 2:i8
  %h = neg %a, %a
  %i = vote.any %a, %a
  %j = quad.0 1:i32
  %k = shl 1:i64, 2
  %l, %m = mov %a
  %n = mov
  %o = call @two(1, 2:i64)
  barrier %a, 1:i32
  %p = load.u32 @b
  store.u32 @b
  $v = neg
  if 1:i32 {}
  ordered 1:i64 {}
  return 5:i32
}

func @two(%x: i64) -> f32 {
  return 1.0, 2.0:f32
}
";

#[test]
fn arithmetic_corpus() {
    check_canonical(ARITHMETIC);
}

#[test]
fn bits_and_conversions_corpus() {
    check_canonical(BITS_AND_CONVERSIONS);
}

#[test]
fn warp_corpus() {
    check_canonical(WARP);
}

#[test]
fn memory_corpus() {
    check_canonical(MEMORY);
}

#[test]
fn control_corpus() {
    check_canonical(CONTROL);
}

#[test]
fn ill_typed_corpus() {
    check_canonical(ILL_TYPED);
}

/// Every cvt: all destination and source formats with every rounding.
fn every_conversion() -> String {
    let mut src = String::from("kernel @cvt {\n");
    let mut n = 0;
    for dst in NumFormat::ALL {
        for from in NumFormat::ALL {
            for round in ["", ".ceil", ".flr", ".trunc"] {
                let literal = if from.is_float() { "1.5" } else { "-1" };
                src.push_str(&format!(
                    "  %c{n} = cvt.{}.{}{round} {literal}\n",
                    dst.name(),
                    from.name()
                ));
                n += 1;
            }
        }
    }
    src.push_str("}\n");
    src
}

/// Every valid load and store format.
fn every_memory_format() -> String {
    let mut src = String::from("buffer @b[0]: u8\n\nkernel @mem {\n");
    for elem in NumFormat::ALL {
        for count in [1u8, 2, 4] {
            let format = MemFormat { elem, count };
            if !format.is_valid() {
                continue;
            }
            let name = format.name();
            let results: Vec<String> = (0..count).map(|i| format!("%{name}_{i}")).collect();
            src.push_str(&format!("  {} = load.{name} @b, 0\n", results.join(", ")));
            src.push_str(&format!("  store.{name} @b, 0, {}\n", results.join(", ")));
            let literal = if elem.is_float() { "0.5" } else { "7" };
            let literals = vec![literal; count as usize];
            src.push_str(&format!("  store.{name} @b, 0, {}\n", literals.join(", ")));
        }
    }
    src.push_str("}\n");
    src
}

#[test]
fn every_conversion_round_trips() {
    check_canonical(&every_conversion());
}

#[test]
fn every_memory_format_round_trips() {
    check_canonical(&every_memory_format());
}

fn corpus() -> Vec<String> {
    let mut all: Vec<String> = [ARITHMETIC, BITS_AND_CONVERSIONS, WARP, MEMORY, CONTROL]
        .map(String::from)
        .to_vec();
    all.push(every_conversion());
    all.push(every_memory_format());
    all
}

fn mem_kind(mem: &MemRef) -> &'static str {
    match mem {
        MemRef::Buffer(_) => "buffer",
        MemRef::Shared(_) => "shared",
        MemRef::Private(_) => "private",
    }
}

/// What an op contributes to coverage.
fn op_keys(op: &Op) -> Vec<String> {
    match op {
        Op::Shuffle { mode, form } => vec![format!("shuffle.{}.{form:?}", mode.name())],
        Op::Vote { op, guarded } => vec![format!("vote.{}.{guarded}", vote_name(*op))],
        Op::Cvt { dst, src, round } => vec![
            format!("cvt.dst.{}", dst.name()),
            format!("cvt.src.{}", src.name()),
            format!("cvt.round.{}", round.name()),
        ],
        Op::Load { mem, format } => vec![
            format!("load.{}", format.name()),
            format!("load.mem.{}", mem_kind(mem)),
        ],
        Op::Store { mem, format } => vec![
            format!("store.{}", format.name()),
            format!("store.mem.{}", mem_kind(mem)),
        ],
        Op::Atom { mem, op, format } => vec![
            format!("atom.{}", op.name()),
            format!("atom.format.{}", format.name()),
            format!("atom.mem.{}", mem_kind(mem)),
        ],
        Op::Call(_) => vec!["call".into()],
        other => vec![other.mnemonic()],
    }
}

fn all_op_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    keys.extend(all_unary().map(|u| unary_name(u).to_string()));
    keys.extend(all_binary().map(|b| binary_name(b).to_string()));
    keys.extend(all_cmp().map(|c| format!("cmp.{}", cmp_name(c))));
    keys.extend(Builtin::all().into_iter().map(|b| b.name()));
    for name in [
        "mov",
        "select",
        "fma",
        "bfe.s",
        "bfe.u",
        "bfi",
        "pk64",
        "up64",
        "active_mask",
        "ballot",
        "tgall",
        "tgany",
        "tgeq",
        "tgballot",
        "quad.0",
        "quad.1",
        "quad.2",
        "quad.3",
        "quad.x",
        "quad.y",
        "ddx.fine",
        "ddx.coarse",
        "ddy.fine",
        "ddy.coarse",
        "demote",
        "membar",
        "barrier",
        "call",
        "atom.format.u32",
        "atom.format.s32",
        "atom.format.u64",
        "atom.mem.buffer",
        "atom.mem.shared",
    ] {
        keys.insert(name.to_string());
    }
    for op in [VoteOp::All, VoteOp::Any, VoteOp::Eq] {
        for guarded in [false, true] {
            keys.insert(format!("vote.{}.{guarded}", vote_name(op)));
        }
    }
    for mode in [
        ShuffleMode::Idx,
        ShuffleMode::Up,
        ShuffleMode::Down,
        ShuffleMode::Xor,
    ] {
        for form in [ShuffleForm::Width, ShuffleForm::Mask] {
            keys.insert(format!("shuffle.{}.{form:?}", mode.name()));
        }
    }
    for f in NumFormat::ALL {
        keys.insert(format!("cvt.dst.{}", f.name()));
        keys.insert(format!("cvt.src.{}", f.name()));
        for count in [1, 2, 4] {
            let format = MemFormat { elem: f, count };
            if format.is_valid() {
                keys.insert(format!("load.{}", format.name()));
                keys.insert(format!("store.{}", format.name()));
            }
        }
    }
    for r in [Round::Nearest, Round::Ceil, Round::Floor, Round::Trunc] {
        keys.insert(format!("cvt.round.{}", r.name()));
    }
    for t in Type::ALL {
        keys.insert(format!("bitcast.{t}"));
    }
    for a in AtomOp::ALL {
        keys.insert(format!("atom.{}", a.name()));
    }
    for kind in ["buffer", "shared", "private"] {
        keys.insert(format!("load.mem.{kind}"));
        keys.insert(format!("store.mem.{kind}"));
    }
    keys
}

fn stmt_key(s: &Stmt) -> &'static str {
    match s {
        Stmt::Inst(_) => "inst",
        Stmt::If { else_body, .. } => match else_body.stmts.as_slice() {
            [] => "if",
            [Stmt::If { .. }] => "else if",
            _ => "else",
        },
        Stmt::Loop { .. } => "loop",
        Stmt::Break { .. } => "break",
        Stmt::Continue { .. } => "continue",
        Stmt::Return { values, .. } if values.is_empty() => "return",
        Stmt::Return { .. } => "return values",
        Stmt::Kill { .. } => "kill",
        Stmt::Ordered { .. } => "ordered",
    }
}

#[test]
fn corpus_covers_every_op_and_statement() {
    let mut ops = BTreeSet::new();
    let mut stmts = BTreeSet::new();
    for src in corpus() {
        let m = text::parse(&src).unwrap_or_else(|d| panic!("{}", d.render("corpus", &src)));
        for f in &m.functions {
            walk_block(&f.body, &mut |s| {
                stmts.insert(stmt_key(s));
                if let Stmt::Inst(i) = s {
                    ops.extend(op_keys(&i.op));
                }
            });
        }
    }
    let missing: Vec<String> = all_op_keys().difference(&ops).cloned().collect();
    assert!(
        missing.is_empty(),
        "ops missing from the corpus: {missing:?}"
    );
    let all_stmts: BTreeSet<&str> = [
        "inst",
        "if",
        "else",
        "else if",
        "loop",
        "break",
        "continue",
        "return",
        "return values",
        "kill",
        "ordered",
    ]
    .into();
    let missing: Vec<&&str> = all_stmts.difference(&stmts).collect();
    assert!(missing.is_empty(), "statements missing: {missing:?}");
}

#[test]
fn parsing_normalizes_to_the_canonical_form() {
    check(
        "
        // Items in any order, vars anywhere, comments, redundant suffixes.
        kernel @k workgroup(8, 1, 1) {
          %a = lane_id
          $v = add %a, 0x10:i32 // a comment
          if true { kill } else { if false { demote } }
          if true { } else { }
          var $v: i32
        }
        shared @s[16]
        param %p: f32
        func @f(%x: f32) -> (f32) { %y = mul %x, 2
          %z = add %y, %p
          return %z }
        ",
        "\
param %p: f32
shared @s[16]

kernel @k workgroup(8) {
  var $v: i32
  %a = lane_id
  $v = add %a, 16
  if true {
    kill
  } else if false {
    demote
  }
  if true {}
}

func @f(%x: f32) -> f32 {
  %y = mul %x, 2.0
  %z = add %y, %p
  return %z
}
",
    );
}

#[test]
fn printing_is_total_on_dangling_ids() {
    // A module whose ids point nowhere still prints (it cannot parse back).
    let mut m = text::parse("kernel @k {\n  %a = lane_id\n  %b = add %a, 1\n}\n").expect("valid");
    let Stmt::Inst(inst) = &mut m.functions[0].body.stmts[1] else {
        panic!("second statement is an instruction")
    };
    inst.args[0] = Operand::Value(ValueId(9));
    inst.args.push(Operand::Var(VarId(3)));
    let printed = text::print(&m);
    assert!(printed.contains("%b = add %?9, 1, $?3"), "{printed}");
}

/// Random constants of every type, in positions where the context does or
/// does not give their type back.
fn literal_module(c: Const) -> Module {
    let ty = c.ty;
    // Placeholders of type `ty`, replaced by `c` below.
    let z = match ty {
        Type::Bool => "false".to_string(),
        _ => format!("0:{ty}"),
    };
    let mut src =
        format!("param %p: bool\nkernel @k {{\n  var $v: {ty}\n  %a = mov {z}\n  $v = mov {z}\n");
    src.push_str(&format!(
        "  %b = select %p, %a, {z}\n  %c = cmp.eq {z}, %a\n"
    ));
    src.push_str(&format!(
        "  %w = lane_id\n  %d = add %w, {z}\n  %e = mov %a, {z}\n"
    ));
    let format = match ty {
        Type::Bool => None,
        Type::I8 => Some("s8"),
        Type::I16 => Some("u16"),
        Type::I32 => Some("s32"),
        Type::I64 => Some("u64"),
        Type::F16 => Some("f16"),
        Type::F32 => Some("f32"),
        Type::F64 => Some("f64"),
    };
    if let Some(f) = format {
        src.push_str(&format!("  %f = cvt.{f}.{f} {z}\n"));
    }
    src.push_str("}\n");
    let mut m = text::parse(&src).unwrap_or_else(|d| panic!("{}", d.render("template", &src)));
    for s in &mut m.functions[0].body.stmts {
        if let Stmt::Inst(inst) = s {
            for a in &mut inst.args {
                if matches!(a, Operand::Const(k) if k.ty == ty) {
                    *a = Operand::Const(c);
                }
            }
        }
    }
    m
}

fn any_const() -> impl Strategy<Value = Const> {
    let special_f32 = prop_oneof![
        Just(0x7f80_0000u64),
        Just(0xff80_0000),
        Just(0x8000_0000),
        Just(0x0000_0001),
        Just(0x7f7f_ffff),
        Just(0x7fc0_0000),
        Just(0xffff_ffff),
    ];
    prop_oneof![
        (0usize..8, any::<u64>()).prop_map(|(t, bits)| Const::new(Type::ALL[t], bits)),
        (0usize..8, -70000i64..70000).prop_map(|(t, v)| Const::new(Type::ALL[t], v as u64)),
        special_f32.prop_map(|bits| Const::new(Type::F32, bits)),
        any::<f64>().prop_map(Const::f64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_constant_round_trips(c in any_const()) {
        let m = literal_module(c);
        if let Err(e) = text::check_round_trip(&m) {
            return Err(TestCaseError::fail(e));
        }
    }
}

#[test]
fn every_f16_round_trips() {
    // One instruction per f16 bit pattern with no context for its type, and
    // one whose position fixes it (cvt's source).
    let mut src = String::from("kernel @k {\n");
    for bits in 0..=u16::MAX {
        src.push_str(&format!(
            "  %a{bits} = mov 0:f16\n  %b{bits} = cvt.f32.f16 0\n"
        ));
    }
    src.push_str("}\n");
    let mut m = text::parse(&src).expect("template parses");
    for (i, s) in m.functions[0].body.stmts.iter_mut().enumerate() {
        if let Stmt::Inst(inst) = s {
            inst.args[0] = Operand::Const(Const::new(Type::F16, (i / 2) as u64));
        }
    }
    if let Err(e) = text::check_round_trip(&m) {
        panic!("{}", &e[..e.len().min(2000)]);
    }
}
