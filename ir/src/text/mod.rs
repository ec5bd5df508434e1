//! The `.warp` text format: [`parse`] text into a [`Module`] and [`print`](fn@print)
//! a module as canonical text.
//!
//! The grammar, the literal typing rule and the limits are specified in
//! `docs/text-format.md`; this module implements exactly that document.
//!
//! Parsing runs in two steps: `parser` turns the tokens of `lexer` into
//! a syntax tree (every syntax error is found here, in source order), then
//! `resolve` turns names into ids and gives every value and literal its
//! type from the op's [`crate::ops::Signature`]. The first error stops
//! parsing and comes back as one [`Diagnostic`] whose span is the offending
//! token. Ill-typed instructions are not parse errors: the module is built
//! anyway and the verifier reports them.
//!
//! [`print`](fn@print) writes the canonical form, and for any module `m` that `parse`
//! returns, `parse(&print(&m)) == Ok(m)` and printing again gives the same
//! text. [`check_round_trip`] checks both properties for one module.
//!
//! Comments are not part of the IR, nor is how a literal was spelled
//! (`0x1f` or `31`). [`parse_with_comments`] also returns them, with the
//! blank lines, as a [`Comments`] side table, and [`print_with_comments`]
//! writes the canonical form with each comment where it was and each
//! literal as it was written: what `warpjit fmt` does.

mod comments;
mod layout;
mod lexer;
pub(crate) mod literal;
mod literal_text;
mod mnemonics;
mod parser;
mod printer;
mod resolve;
mod spelling;
mod syntax;

use crate::module::Module;
use crate::span::{Diagnostic, Diagnostics, Span};

pub use comments::Comments;
pub use literal::f16_to_f32;
pub use printer::{print, print_with_comments};

/// Blocks nest at most this deep (a function body is level 1).
pub const MAX_NESTING: usize = 256;
/// The longest name or literal, in characters.
pub const MAX_TOKEN_LEN: usize = 1024;
/// The largest source text, in bytes.
pub const MAX_SOURCE_LEN: usize = 64 << 20;

/// Parses one module. On failure the result holds exactly one diagnostic.
pub fn parse(source: &str) -> Result<Module, Diagnostics> {
    parse_module(source).map_err(|d| Diagnostics(vec![d]))
}

/// Parses one module and collects the comments, blank lines and literal
/// spellings of its text for [`print_with_comments`]. Fails exactly when
/// [`parse`] fails.
pub fn parse_with_comments(source: &str) -> Result<(Module, Comments), Diagnostics> {
    let wrap = |d| Diagnostics(vec![d]);
    let syntax = parse_syntax(source).map_err(wrap)?;
    let module = resolve::resolve(source, &syntax).map_err(wrap)?;
    let mut comments = comments::collect(source, &module);
    comments.literals = spelling::collect(&syntax);
    Ok((module, comments))
}

/// The canonical text of `source` with its comments: what `warpjit fmt`
/// prints. Formatting the result again gives the same text.
pub fn format(source: &str) -> Result<String, Diagnostics> {
    let (module, comments) = parse_with_comments(source)?;
    Ok(print_with_comments(&module, &comments))
}

fn parse_module(source: &str) -> Result<Module, Diagnostic> {
    let syntax = parse_syntax(source)?;
    resolve::resolve(source, &syntax)
}

fn parse_syntax(source: &str) -> Result<syntax::SynModule<'_>, Diagnostic> {
    if source.len() > MAX_SOURCE_LEN {
        return Err(Diagnostic::new(
            Span::new(0, 0),
            format!(
                "the source is {} bytes long; the limit is {} bytes (64 MiB)",
                source.len(),
                MAX_SOURCE_LEN
            ),
        ));
    }
    parser::parse_syntax(source)
}

/// Checks that `module` survives printing and parsing: the printed text
/// parses, gives back an equal module, and prints the same again. The error
/// says what went wrong and shows the printed text.
pub fn check_round_trip(module: &Module) -> Result<(), String> {
    let text = print(module);
    let parsed = match parse(&text) {
        Ok(m) => m,
        Err(d) => {
            return Err(format!(
                "the printed module does not parse:\n{}\n{text}",
                d.render("printed", &text)
            ))
        }
    };
    if parsed != *module {
        return Err(format!(
            "parsing the printed module gives a different module: {}\nprinted text:\n{text}",
            first_difference(module, &parsed)
        ));
    }
    let again = print(&parsed);
    if again != text {
        return Err(format!(
            "printing the parsed module gives different text:\nfirst:\n{text}\nsecond:\n{again}"
        ));
    }
    Ok(())
}

/// The first line where the debug dumps of two modules differ.
fn first_difference(expected: &Module, found: &Module) -> String {
    let a = format!("{expected:#?}");
    let b = format!("{found:#?}");
    for (i, (la, lb)) in a.lines().zip(b.lines()).enumerate() {
        if la != lb {
            return format!(
                "at line {} of the debug dump, expected `{}`, found `{}`",
                i + 1,
                la.trim(),
                lb.trim()
            );
        }
    }
    "the debug dumps differ in length".into()
}
