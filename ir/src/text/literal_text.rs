//! How the literals of one statement are written.
//!
//! Without spellings, each constant is written in the canonical form, with
//! a `:type` suffix exactly when the parser would not give it its type back
//! from context. With the spellings of the text the statement was parsed
//! from, each literal is written as it was, when the statement written that
//! way reads back as the same statement: the same constants and the same
//! result types. Otherwise the suffixes follow the canonical rule, and a
//! literal keeps its digits where they read as the same constant.

use super::literal::format_const;
use super::resolve::{bare_type, class_default};
use super::spelling::Spelling;
use crate::ops::{Signature, Slot};
use crate::types::{Const, Type};

/// An operand as the literal typing rule sees it.
#[derive(Clone, Copy)]
pub(crate) enum Written {
    /// A value, variable or parameter, written by its name.
    Named(Type),
    Const(Const),
}

/// A result of the statement: a variable gives `T` its type, a new value
/// takes the type `T` gives it.
#[derive(Clone, Copy)]
pub(crate) enum ResultPlace {
    Var(Type),
    Value(Type),
}

/// The text of each constant among `operands`, None for named operands.
/// `spellings[i]` is how operand `i` was written, if known; `sig` is the
/// statement's typing rule (None when it has none: every literal is then
/// written with its type).
pub(crate) fn literal_texts(
    sig: Option<&Signature>,
    operands: &[Written],
    results: &[ResultPlace],
    spellings: &[Option<&Spelling>],
) -> Vec<Option<String>> {
    let spelling = |i: usize| spellings.get(i).copied().flatten();
    if let Some(sig) = sig {
        if reads_back(sig, operands, results, &spelling) {
            return operands
                .iter()
                .enumerate()
                .map(|(i, o)| match o {
                    Written::Const(_) => spelling(i).map(|s| s.to_string()),
                    Written::Named(_) => None,
                })
                .collect();
        }
    }
    let var_results = var_types(results);
    let suffixes = canonical_suffixes(sig, operands, &var_results);
    operands
        .iter()
        .zip(suffixes)
        .enumerate()
        .map(|(i, (o, suffix))| match o {
            Written::Const(c) => Some(canonical_text(*c, suffix, spelling(i))),
            Written::Named(_) => None,
        })
        .collect()
}

fn var_types(results: &[ResultPlace]) -> Vec<Option<Type>> {
    results
        .iter()
        .map(|r| match r {
            ResultPlace::Var(ty) => Some(*ty),
            ResultPlace::Value(_) => None,
        })
        .collect()
}

/// True when every constant has a spelling and the statement written with
/// them reads back the same, typed as the parser types it.
fn reads_back<'s>(
    sig: &Signature,
    operands: &[Written],
    results: &[ResultPlace],
    spelling: &dyn Fn(usize) -> Option<&'s Spelling>,
) -> bool {
    let mut known = Vec::with_capacity(operands.len());
    for (i, o) in operands.iter().enumerate() {
        match (o, spelling(i)) {
            (Written::Named(ty), None) => known.push(Some(*ty)),
            (Written::Const(_), Some(s)) => known.push(s.own_type()),
            _ => return false,
        }
    }
    let t = sig.infer_t(&known, &var_types(results));
    let same_constants = operands.iter().enumerate().all(|(i, o)| {
        let (Written::Const(c), Some(s)) = (o, spelling(i)) else {
            return true;
        };
        let ty = s
            .own_type()
            .or_else(|| sig.operands.get(i).and_then(|slot| bare_type(*slot, t)));
        ty.is_some_and(|ty| s.denotes(*c, ty))
    });
    let same_results = results.iter().enumerate().all(|(i, r)| match r {
        ResultPlace::Var(_) => true,
        ResultPlace::Value(ty) => {
            let parsed = sig.results.get(i).and_then(|slot| bare_type(*slot, t));
            parsed.unwrap_or_else(|| class_default(sig.t_class)) == *ty
        }
    });
    same_constants && same_results
}

/// A constant with the canonical suffix decision, in its spelled digits
/// when those read as the same constant.
fn canonical_text(c: Const, suffix: bool, spelling: Option<&Spelling>) -> String {
    let digits = spelling.filter(|s| s.denotes(c, c.ty));
    match digits {
        // `true` and `false` are bool wherever they stand; other digits
        // need the suffix to be.
        Some(s) if c.ty == Type::Bool => match s.form() {
            super::syntax::LitForm::Bool(_) => s.value_text().to_string(),
            _ => format!("{}:bool", s.value_text()),
        },
        Some(s) if suffix => format!("{}:{}", s.value_text(), c.ty),
        Some(s) => s.value_text().to_string(),
        None if suffix => format!("{}:{}", format_const(c), c.ty),
        None => format_const(c),
    }
}

/// What the canonical suffix rule needs to know about an operand.
#[derive(Clone, Copy)]
enum ArgKind {
    /// A value, variable, parameter or bool literal: its type is evident.
    SelfTyped(Type),
    /// A literal of another type: bare, it takes the type of its position.
    Literal(Type),
}

/// Which operands need a `:type` suffix in the canonical form. Mirrors the
/// parser: `T` comes from the first operand in a `T` slot that is not a
/// bare literal, else from a variable assigned from a `T` result, else from
/// an exact type class; a bare literal elsewhere takes its slot's type.
fn canonical_suffixes(
    sig: Option<&Signature>,
    operands: &[Written],
    var_results: &[Option<Type>],
) -> Vec<bool> {
    let args: Vec<ArgKind> = operands
        .iter()
        .map(|o| match o {
            Written::Const(c) if c.ty != Type::Bool => ArgKind::Literal(c.ty),
            Written::Const(c) => ArgKind::SelfTyped(c.ty),
            Written::Named(ty) => ArgKind::SelfTyped(*ty),
        })
        .collect();
    let Some(sig) = sig else {
        return args
            .iter()
            .map(|a| matches!(a, ArgKind::Literal(_)))
            .collect();
    };
    let t_slots: Vec<usize> = (0..args.len())
        .filter(|i| sig.operands.get(*i) == Some(&Slot::T))
        .collect();
    let known: Vec<Option<Type>> = args
        .iter()
        .map(|a| match a {
            ArgKind::SelfTyped(ty) => Some(*ty),
            ArgKind::Literal(_) => None,
        })
        .collect();
    let context = sig.infer_t(&known, var_results);
    // With the literals that differ from the context suffixed, the first
    // operand that is not a bare literal must still have the context's type.
    let consistent = context.filter(|&t| {
        let first_fixed = t_slots.iter().find(|&&i| match args[i] {
            ArgKind::SelfTyped(_) => true,
            ArgKind::Literal(ty) => ty != t,
        });
        !matches!(first_fixed.map(|&i| args[i]), Some(ArgKind::Literal(_)))
    });
    let mut suffixes = vec![false; args.len()];
    let t = match (consistent, t_slots.first()) {
        (Some(t), _) => Some(t),
        // Otherwise the first literal of the T slots says the type.
        (None, Some(&first)) => match args[first] {
            ArgKind::Literal(ty) => {
                suffixes[first] = true;
                Some(ty)
            }
            ArgKind::SelfTyped(ty) => Some(ty),
        },
        (None, None) => None,
    };
    for (i, a) in args.iter().enumerate() {
        if let ArgKind::Literal(ty) = a {
            let bare = sig.operands.get(i).and_then(|slot| bare_type(*slot, t));
            suffixes[i] |= bare != Some(*ty);
        }
    }
    suffixes
}
