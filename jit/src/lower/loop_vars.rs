//! Loop shadows: copies of variables that a loop writes in every lane.
//!
//! A variable write keeps the old value in inactive lanes (`select(mask,
//! new, old)`). In a loop the mask holds the lanes that left by `break`,
//! decided by this iteration's data, so the select makes every loop-carried
//! value wait for that decision. In Mandelbrot the iteration count waits for
//! the escape test, and the next escape test waits for the count's limit
//! test: the mask logic sits on the loop's dependence chain.
//!
//! The select matters only for lanes that read the variable later. Take a
//! loop with no `continue` of its own and a statement directly in its body
//! (or under `if`s with uniform conditions, which run all active lanes or
//! none). A lane inactive there has left this run of the loop (`break`),
//! never entered it, returned or ended: it does not run the body again
//! before the loop is entered anew. So inside the loop, a variable can live
//! in a shadow copy, taken from the variable when the loop is entered, read
//! by the loop's statements, and written in every lane at such statements
//! (with the select elsewhere). In every lane still in the loop the shadow
//! equals the variable. When the variable is also read outside the loop,
//! every write updates it too, with the select, but nothing in the loop
//! waits for that. A loop inside another one is entered again, and its next
//! run takes the variable as this one left it: that counts as a read
//! outside, unless a statement of the loop's own block assigns the
//! variable before it (as an outer loop resets an inner counter). Such a
//! variable gets a shadow only when the loop's conditions depend on it:
//! otherwise its select does not wait for a mask that waits for it, and the
//! shadow would only hold one more vector in a register (nbody's
//! accumulators: 8.5 to 9.3 ms with shadows).

use warpjit_ir::{walk_block, Block, Function, Operand, Place, Stmt, ValueId, VarId};

/// How a loop uses one variable's shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    /// The variable is read outside the loop, so writes also update the
    /// variable itself.
    pub read_outside: bool,
    /// One scalar holds the shadow for all lanes
    /// ([`scalar_shadows`](super::scalar_shadows)).
    pub scalar: bool,
}

/// The shadows of the loop whose body is `body`, by variable: variables the
/// loop reads and writes in every lane somewhere. `reads` counts each
/// variable's reads in the whole function ([`var_reads`] of its body);
/// `uniform` says whether an `if`'s condition is the same in all active
/// lanes. A variable the loop's next run takes from this one
/// ([`carried_to_next_run`]) counts as read outside. Empty when the loop
/// has a `continue`.
pub fn loop_shadows(
    f: &Function,
    reads: &[usize],
    body: &Block,
    uniform: &dyn Fn(&Stmt) -> bool,
) -> Vec<Option<Shadow>> {
    let mut shadows = vec![None; f.vars.len()];
    if continues(body) {
        return shadows;
    }
    let mut written = vec![false; f.vars.len()];
    every_lane_writes(body, uniform, &mut written);
    let inside = var_reads(f, body);
    let steering = ConditionInputs::of(f, body);
    let carried = carried_to_next_run(f, body);
    for (v, shadow) in shadows.iter_mut().enumerate() {
        let read_outside = reads.get(v).is_some_and(|&all| all > inside[v]) || carried[v];
        if written[v] && inside[v] > 0 && (!read_outside || steering.vars[v]) {
            *shadow = Some(Shadow {
                read_outside,
                scalar: false,
            });
        }
    }
    shadows
}

/// Per variable: whether the next run of the loop whose body is `body` (a
/// block of `f`) starts from the variable as this run leaves it. That is
/// so when the loop sits inside another loop, unless a statement of the
/// loop's own block assigns the variable before it (in all the lanes that
/// reach the loop), as an outer loop resets an inner counter.
pub fn carried_to_next_run(f: &Function, body: &Block) -> Vec<bool> {
    let mut carried = vec![false; f.vars.len()];
    find_loop(&f.body, body, false, &mut carried);
    carried
}

/// Looks for the loop whose body is `target` in `block` (inside a loop when
/// `in_loop`); when found, fills `carried` and returns true.
fn find_loop(block: &Block, target: &Block, in_loop: bool, carried: &mut [bool]) -> bool {
    let mut assigned = vec![false; carried.len()];
    for s in &block.stmts {
        let found = match s {
            Stmt::Loop { body, .. } if std::ptr::eq(body, target) => {
                for (c, a) in carried.iter_mut().zip(&assigned) {
                    *c = in_loop && !a;
                }
                true
            }
            Stmt::Loop { body, .. } => find_loop(body, target, true, carried),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                find_loop(then_body, target, in_loop, carried)
                    || find_loop(else_body, target, in_loop, carried)
            }
            Stmt::Ordered { body, .. } => find_loop(body, target, in_loop, carried),
            Stmt::Inst(i) => {
                for place in &i.results {
                    if let Place::Var(v) = place {
                        assigned[v.0 as usize] = true;
                    }
                }
                false
            }
            _ => false,
        };
        if found {
            return true;
        }
    }
    false
}

/// The values and variables a loop's `if` conditions and `ordered` keys
/// depend on, through the loop's instructions (a backward slice, to a
/// fixpoint because variables carry values around the loop).
struct ConditionInputs {
    values: Vec<bool>,
    vars: Vec<bool>,
}

impl ConditionInputs {
    fn of(f: &Function, body: &Block) -> ConditionInputs {
        let mut inputs = ConditionInputs {
            values: vec![false; f.values.len()],
            vars: vec![false; f.vars.len()],
        };
        while inputs.visit(body) {}
        inputs
    }

    fn mark(&mut self, o: &Operand) -> bool {
        let slot = match o {
            Operand::Value(ValueId(v)) => self.values.get_mut(*v as usize),
            Operand::Var(VarId(v)) => self.vars.get_mut(*v as usize),
            Operand::Param(_) | Operand::Const(_) => None,
        };
        match slot {
            Some(seen) if !*seen => {
                *seen = true;
                true
            }
            _ => false,
        }
    }

    fn marked(&self, place: &Place) -> bool {
        match place {
            Place::Value(ValueId(v)) => self.values.get(*v as usize) == Some(&true),
            Place::Var(VarId(v)) => self.vars.get(*v as usize) == Some(&true),
        }
    }

    /// One pass over `block`, last statement first; whether anything new
    /// was marked.
    fn visit(&mut self, block: &Block) -> bool {
        let mut changed = false;
        for s in block.stmts.iter().rev() {
            match s {
                Stmt::Inst(i) => {
                    if i.results.iter().any(|p| self.marked(p)) {
                        for a in &i.args {
                            changed |= self.mark(a);
                        }
                    }
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                } => {
                    changed |= self.visit(then_body);
                    changed |= self.visit(else_body);
                    changed |= self.mark(cond);
                }
                Stmt::Loop { body, .. } => changed |= self.visit(body),
                Stmt::Ordered { key, body, .. } => {
                    changed |= self.visit(body);
                    changed |= self.mark(key);
                }
                Stmt::Break { .. }
                | Stmt::Continue { .. }
                | Stmt::Return { .. }
                | Stmt::Kill { .. } => {}
            }
        }
        changed
    }
}

/// Whether `block` has a `continue` for the loop whose body it is (one
/// inside a nested loop belongs to that loop).
pub fn continues(block: &Block) -> bool {
    block.stmts.iter().any(|s| match s {
        Stmt::Continue { .. } => true,
        Stmt::If {
            then_body,
            else_body,
            ..
        } => continues(then_body) || continues(else_body),
        Stmt::Ordered { body, .. } => continues(body),
        _ => false,
    })
}

/// Marks the variables assigned at statements of `block` where every lane
/// still in the loop is active.
fn every_lane_writes(block: &Block, uniform: &dyn Fn(&Stmt) -> bool, written: &mut [bool]) {
    for s in &block.stmts {
        match s {
            Stmt::Inst(i) => {
                for place in &i.results {
                    if let Place::Var(v) = place {
                        if let Some(w) = written.get_mut(v.0 as usize) {
                            *w = true;
                        }
                    }
                }
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } if uniform(s) => {
                every_lane_writes(then_body, uniform, written);
                every_lane_writes(else_body, uniform, written);
            }
            _ => {}
        }
    }
}

/// How often each variable of `f` is read in `block`, nested statements
/// included.
pub fn var_reads(f: &Function, block: &Block) -> Vec<usize> {
    let mut reads = vec![0usize; f.vars.len()];
    walk_block(block, &mut |s| {
        for o in s.operands() {
            if let Operand::Var(v) = o {
                if let Some(n) = reads.get_mut(v.0 as usize) {
                    *n += 1;
                }
            }
        }
    });
    reads
}

#[cfg(test)]
pub(in crate::lower) mod tests {
    use super::*;

    /// The body of the first loop at the top level of `f`.
    pub(in crate::lower) fn first_loop(f: &Function) -> &Block {
        f.body
            .stmts
            .iter()
            .find_map(|s| match s {
                Stmt::Loop { body, .. } => Some(body),
                _ => None,
            })
            .expect("a loop")
    }

    /// The shadows of the first loop of `@main`, by variable name.
    fn shadows(text: &str) -> Vec<(String, Shadow)> {
        let m = warpjit_ir::text::parse(text).expect("parses");
        let f = &m.functions[0];
        let body = first_loop(f);
        loop_shadows(f, &var_reads(f, &f.body), body, &|_| false)
            .into_iter()
            .zip(&f.vars)
            .filter_map(|(s, v)| s.map(|s| (v.name.clone(), s)))
            .collect()
    }

    #[test]
    fn steering_and_private_variables_get_shadows() {
        let found = shadows(
            "
kernel @main workgroup(32) {
  var $z: f32
  var $n: i32
  var $sum: f32
  var $later: i32
  loop {
    %limit = cmp.ge.s $n, 100
    if %limit {
      break
    }
    %z2 = mul $z, $z
    %out = cmp.gt %z2, 4.0
    if %out {
      break
    }
    $z = add %z2, 0.25
    $sum = add $sum, $z
    $later = add $later, 1
    $n = add $n, 1
  }
  %s = cvt.s32.f32 $sum
  %t = add %s, $n
  %u = add %t, $later
}
",
        );
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        // $z is private to the loop; $n steers it and is read after it;
        // $sum and $later are read after it and steer nothing.
        assert_eq!(names, ["z", "n"]);
        assert!(!found[0].1.read_outside);
        assert!(found[1].1.read_outside);
    }

    #[test]
    fn loops_with_continue_or_only_divergent_writes_get_none() {
        let with_continue = shadows(
            "
kernel @main workgroup(32) {
  var $i: i32
  loop {
    $i = add $i, 1
    %odd = and $i, 1
    %skip = cmp.ne %odd, 0
    if %skip {
      continue
    }
    %done = cmp.gt.u $i, 9
    if %done {
      break
    }
  }
}
",
        );
        assert!(with_continue.is_empty());
        let divergent = shadows(
            "
kernel @main workgroup(32) {
  var $i: i32
  loop {
    %lane = lane_id
    %low = cmp.lt.u %lane, 5
    if %low {
      $i = add $i, 1
    }
    %done = cmp.gt.u $i, 9
    if %done {
      break
    }
  }
}
",
        );
        assert!(divergent.is_empty());
    }

    /// `carried_to_next_run` of each loop of `@main` in program order, as
    /// the names of the carried variables.
    fn carried(text: &str) -> Vec<Vec<String>> {
        let m = warpjit_ir::text::parse(text).expect("parses");
        let f = &m.functions[0];
        let mut bodies = Vec::new();
        walk_block(&f.body, &mut |s| {
            if let Stmt::Loop { body, .. } = s {
                bodies.push(body);
            }
        });
        bodies
            .into_iter()
            .map(|body| {
                carried_to_next_run(f, body)
                    .into_iter()
                    .zip(&f.vars)
                    .filter(|(c, _)| *c)
                    .map(|(_, v)| v.name.clone())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn inner_loops_carry_what_their_block_does_not_assign_first() {
        let found = carried(
            "
kernel @main workgroup(32) {
  var $reset: i32
  var $kept: i32
  loop {
    $reset = mov 0
    loop {
      $reset = add $reset, 1
      $kept = add $kept, 1
      break
    }
    %lane = lane_id
    %low = cmp.lt.u %lane, 4
    if %low {
      loop {
        $reset = add $reset, 1
        break
      }
    }
    break
  }
}
",
        );
        let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        // The outer loop is entered once; the first inner loop's block
        // resets `$reset`; the one under the `if` has no assignment of its
        // own block before it.
        assert_eq!(
            found,
            vec![names(&[]), names(&["kept"]), names(&["reset", "kept"])]
        );
    }
}
