//! Loop shadows that hold one value for the whole warp, kept as scalars.
//!
//! A loop counter such as Mandelbrot's iteration count or an n-body tile
//! index is the same in every lane still in the loop. Its shadow (see
//! [`loop_vars`](super::loop_vars)) is written in every lane, so when each
//! write stores a value that is the same in all 32 lanes, the shadow is
//! too, and one scalar can hold it: reads splat it, and LLVM folds the
//! arithmetic and compares on those splats into scalar ones. The counter's
//! limit test becomes one scalar compare instead of a vector compare per
//! 16 lanes and a mask merge, and an address computed from it needs no
//! extract of its first active lane.
//!
//! A shadow qualifies when the variable is uniform across the active lanes
//! where the loop is entered (its first active lane's value starts the
//! scalar), is not read after the loop (each write would then also cost a
//! splat and a select into the variable, which is what the scalar saves: a
//! Mandelbrot loop whose count was stored after it had 31 vector
//! operations per iteration either way and ran 4% slower), and every write
//! to it in the loop sits where the shadow is written in every lane (in the
//! loop's own body or under `if`s with uniform conditions, not in an inner
//! loop or `ordered` section) and stores a lane-wise function of constants,
//! parameters, values the same in every lane, and such scalars.

use super::loop_vars::Shadow;
use super::shape::is_lane_wise;
use warpjit_ir::{Block, Function, Op, Operand, Place, Stmt, ValueId};

/// What the lowering knows about the function, for [`scalar_shadows`].
pub struct Facts<'a> {
    /// Whether an `if`'s condition is the same in all active lanes.
    pub uniform_condition: &'a dyn Fn(&Stmt) -> bool,
    /// Whether a value holds the same in all 32 lanes, active or not.
    pub same_in_every_lane: &'a dyn Fn(ValueId) -> bool,
    /// Whether a value's lane shape holds in all 32 lanes, active or not
    /// (`FunctionShapes::every_lane`).
    pub shape_in_every_lane: &'a dyn Fn(ValueId) -> bool,
    /// Whether variable `v` is the same in all active lanes where the loop
    /// is entered.
    pub uniform_at_entry: &'a dyn Fn(usize) -> bool,
    /// Whether variable `v` is read, where the loop is entered, from a
    /// scalar shadow of an enclosing loop.
    pub scalar_outside: &'a dyn Fn(usize) -> bool,
}

/// What a loop can keep as scalars.
pub struct LoopScalars {
    /// Per variable: its shadow in this loop is a scalar.
    pub vars: Vec<bool>,
    /// Per value of the function: computed in the loop from those scalars,
    /// enclosing loops' scalars, constants and parameters alone, so the
    /// same in all 32 lanes.
    pub values: Vec<bool>,
    /// Per value of the function: computed in the loop lane-wise from
    /// those values and values whose lane shape holds in every lane, so its
    /// shape holds in every lane too (lane 0 stands for the first active
    /// lane in an address of known shape).
    pub shape_in_every_lane: Vec<bool>,
}

/// The scalars of the loop whose body is `body`, whose shadows (by
/// variable) are `shadows`.
pub fn scalar_shadows(
    f: &Function,
    body: &Block,
    shadows: &[Option<Shadow>],
    facts: &Facts,
) -> LoopScalars {
    let mut scalar: Vec<bool> = shadows
        .iter()
        .enumerate()
        .map(|(v, s)| s.is_some_and(|s| !s.read_outside) && (facts.uniform_at_entry)(v))
        .collect();
    // Dropping one variable can disqualify others whose writes read it.
    loop {
        let mut check = Check {
            facts,
            shadows,
            scalar: &scalar,
            same_values: vec![false; f.values.len()],
            shape_values: vec![false; f.values.len()],
            disqualified: vec![false; scalar.len()],
        };
        check.block(body, true);
        let Check {
            same_values,
            shape_values,
            disqualified,
            ..
        } = check;
        let mut changed = false;
        for (s, d) in scalar.iter_mut().zip(disqualified) {
            if *s && d {
                *s = false;
                changed = true;
            }
        }
        if !changed {
            return LoopScalars {
                vars: scalar,
                values: same_values,
                shape_in_every_lane: shape_values,
            };
        }
    }
}

struct Check<'a> {
    facts: &'a Facts<'a>,
    shadows: &'a [Option<Shadow>],
    scalar: &'a [bool],
    /// Values of the loop computed the same in every lane.
    same_values: Vec<bool>,
    /// Values of the loop whose shape holds in every lane.
    shape_values: Vec<bool>,
    disqualified: Vec<bool>,
}

impl Check<'_> {
    /// `every_lane`: the loop's shadows are written in every lane here.
    fn block(&mut self, block: &Block, every_lane: bool) {
        for s in &block.stmts {
            match s {
                Stmt::Inst(i) => {
                    let lane_wise = is_lane_wise(&i.op);
                    let same = lane_wise && i.args.iter().all(|a| self.same_everywhere(a));
                    // Builtins (IDs) hold their shape in every lane.
                    let shaped = same
                        || matches!(i.op, Op::Builtin(_))
                        || lane_wise && i.args.iter().all(|a| self.shape_everywhere(a));
                    for r in &i.results {
                        match r {
                            Place::Value(id) => {
                                let id = id.0 as usize;
                                if let Some(slot) = self.same_values.get_mut(id) {
                                    *slot = same;
                                }
                                if let Some(slot) = self.shape_values.get_mut(id) {
                                    *slot = shaped;
                                }
                            }
                            Place::Var(v) => {
                                if !(same && every_lane) {
                                    if let Some(d) = self.disqualified.get_mut(v.0 as usize) {
                                        *d = true;
                                    }
                                }
                            }
                        }
                    }
                }
                Stmt::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let inner = every_lane && (self.facts.uniform_condition)(s);
                    self.block(then_body, inner);
                    self.block(else_body, inner);
                }
                Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => self.block(body, false),
                Stmt::Break { .. }
                | Stmt::Continue { .. }
                | Stmt::Return { .. }
                | Stmt::Kill { .. } => {}
            }
        }
    }

    /// Whether `o`'s lane shape holds in all 32 lanes.
    fn shape_everywhere(&self, o: &Operand) -> bool {
        self.same_everywhere(o)
            || matches!(o, Operand::Value(id)
                if self.shape_values.get(id.0 as usize).copied().unwrap_or(false)
                    || (self.facts.shape_in_every_lane)(*id))
    }

    fn same_everywhere(&self, o: &Operand) -> bool {
        match o {
            Operand::Const(_) | Operand::Param(_) => true,
            Operand::Var(v) => {
                let v = v.0 as usize;
                // A variable this loop shadows reads its shadow here.
                match self.shadows.get(v) {
                    Some(Some(_)) => self.scalar[v],
                    _ => (self.facts.scalar_outside)(v),
                }
            }
            Operand::Value(id) => {
                self.same_values
                    .get(id.0 as usize)
                    .copied()
                    .unwrap_or(false)
                    || (self.facts.same_in_every_lane)(*id)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first loop of kernel `main` in `src`, every variable shadowed
    /// and not read after it: the names of its scalar variables, and of
    /// the values whose shape holds in every lane.
    fn analyse(src: &str, uniform_at_entry: bool) -> (Vec<String>, Vec<String>) {
        let m = warpjit_ir::text::parse(src).expect("parses");
        let f = &m.functions[0];
        let body = crate::lower::loop_vars::tests::first_loop(f);
        let shadows = vec![
            Some(Shadow {
                read_outside: false,
                scalar: false,
            });
            f.vars.len()
        ];
        let facts = Facts {
            uniform_condition: &|_| false,
            same_in_every_lane: &|_| false,
            shape_in_every_lane: &|_| false,
            uniform_at_entry: &|_| uniform_at_entry,
            scalar_outside: &|_| false,
        };
        let found = scalar_shadows(f, body, &shadows, &facts);
        let named = |names: Vec<&String>, flags: &[bool]| -> Vec<String> {
            names
                .into_iter()
                .zip(flags)
                .filter(|(_, s)| **s)
                .map(|(n, _)| n.clone())
                .collect()
        };
        (
            named(f.vars.iter().map(|v| &v.name).collect(), &found.vars),
            named(
                f.values.iter().map(|v| &v.name).collect(),
                &found.shape_in_every_lane,
            ),
        )
    }

    fn scalars(src: &str, uniform_at_entry: bool) -> Vec<String> {
        analyse(src, uniform_at_entry).0
    }

    const COUNTERS: &str = "
        param %limit: i32
        kernel @main workgroup(32) {
          var $n: i32
          var $step: i32
          var $x: f32
          var $lane_sum: i32
          loop {
            %done = cmp.ge.s $n, %limit
            if %done {
              break
            }
            %next = add $n, $step
            $n = mov %next
            $step = add $step, 1
            %lane = lane_id
            $lane_sum = add $lane_sum, %lane
            %far = cmp.gt $x, 4.0
            if %far {
              $x = mul $x, 0.5
            }
          }
        }
    ";

    #[test]
    fn values_of_scalars_and_lane_ids_hold_their_shape_in_every_lane() {
        let src = COUNTERS.replace(
            "$lane_sum = add $lane_sum, %lane",
            "$lane_sum = add $lane_sum, %lane
            %at = add %next, %lane
            %at_bytes = shl %at, 2
            %varying = add %at, $lane_sum",
        );
        let (_, shaped) = analyse(&src, true);
        assert_eq!(shaped, ["done", "next", "lane", "at", "at_bytes"]);
    }

    #[test]
    fn counters_of_constants_and_parameters_are_scalar() {
        assert_eq!(scalars(COUNTERS, true), ["n", "step"]);
    }

    #[test]
    fn nothing_is_scalar_unless_uniform_where_the_loop_starts() {
        assert!(scalars(COUNTERS, false).is_empty());
    }

    #[test]
    fn a_variable_reading_a_varying_one_is_not_scalar() {
        let src = COUNTERS.replace("$step = add $step, 1", "$step = add $lane_sum, 1");
        assert_eq!(scalars(&src, true), Vec::<String>::new());
    }
}
