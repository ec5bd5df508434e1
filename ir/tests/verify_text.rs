//! Verifier diagnostics on parsed text: spans point at the offending
//! statement, so rendered errors show the right line and column.

use warpjit_ir::text::parse;
use warpjit_ir::verify::verify;
use warpjit_ir::VerifiedModule;

const SOURCE: &str = "\
buffer @data[0]: f32

func @twice(%x: f32) -> f32 {
  %y = add %x, %x
}

kernel @main workgroup(64) {
  %i = global_id.x
  %f = cvt.f32.u32 %i
  %g = add %f, %i
  if %i {
    %h = call @twice(%f)
  }
  store.f32 @data, %i, %h
  break
}
";

#[test]
fn rendered_errors_point_at_their_lines() {
    let m = parse(SOURCE).expect("the text is well-formed; its errors are semantic");
    let errors = verify(&m);
    let located: Vec<(usize, usize, &str)> = errors
        .iter()
        .map(|d| {
            let (line, col) = d.line_col(SOURCE);
            (line, col, d.message.as_str())
        })
        .collect();
    assert_eq!(
        located,
        [
            (
                3,
                1,
                "@twice returns f32 but its body does not end with `return`"
            ),
            (
                10,
                3,
                "operand 2 of `add` (%i) has type i32, expected f32 (the type of operand 1)"
            ),
            (
                11,
                3,
                "the condition of `if` (%i) has type i32, expected bool"
            ),
            (14, 3, "%h is used outside the `if` that defines it"),
            (15, 3, "`break` outside a loop"),
        ]
    );
    let rendered = VerifiedModule::new(m)
        .expect_err("invalid")
        .render("bad.warp", SOURCE);
    assert!(rendered.contains(" --> bad.warp:15:3\n"), "{rendered}");
    assert!(rendered.ends_with("5 errors in bad.warp\n"), "{rendered}");
}

#[test]
fn valid_text_verifies() {
    let m = parse(
        "param %n: i32
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
    )
    .expect("parses");
    assert_eq!(verify(&m), vec![]);
}
