//! Call-graph checks: recursion, and calls from ordered sections of
//! functions that (transitively) contain `kill`, `barrier` or `ordered`.

use super::function::{BodyFacts, Effect};
use crate::module::{FuncId, Module};
use crate::span::{Diagnostic, Span};
use std::collections::VecDeque;

/// Reports recursion and forbidden calls in ordered sections; returns the
/// functions ordered callees first (meaningful when there is no cycle).
pub(super) fn check_calls(
    m: &Module,
    facts: &[BodyFacts],
    out: &mut Vec<Diagnostic>,
) -> Vec<FuncId> {
    let edges: Vec<&[(usize, Span)]> = facts.iter().map(|f| f.calls.as_slice()).collect();
    for scc in strongly_connected(&edges) {
        if let Some(d) = cycle_diagnostic(m, &edges, &scc) {
            out.push(d);
        }
    }
    check_ordered_calls(m, facts, &edges, out);
    postorder(&edges)
}

/// Why a function may not be called from an ordered section.
#[derive(Clone, Copy)]
enum Witness {
    Direct(Effect),
    Via(usize),
}

fn check_ordered_calls(
    m: &Module,
    facts: &[BodyFacts],
    edges: &[&[(usize, Span)]],
    out: &mut Vec<Diagnostic>,
) {
    if facts.iter().all(|f| f.ordered_calls.is_empty()) {
        return;
    }
    let n = edges.len();
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (f, calls) in edges.iter().enumerate() {
        for (g, _) in calls.iter() {
            callers[*g].push(f);
        }
    }
    let mut witness: Vec<Option<Witness>> = facts
        .iter()
        .map(|f| f.effect.map(Witness::Direct))
        .collect();
    let mut queue: VecDeque<usize> = (0..n).filter(|f| witness[*f].is_some()).collect();
    while let Some(g) = queue.pop_front() {
        for &f in &callers[g] {
            if witness[f].is_none() {
                witness[f] = Some(Witness::Via(g));
                queue.push_back(f);
            }
        }
    }
    for f in facts {
        for &(g, span) in &f.ordered_calls {
            let Some(w) = witness[g] else { continue };
            let name = &m.functions[g].name;
            let msg = match w {
                Witness::Direct(e) => format!(
                    "`call @{name}` inside an ordered section: @{name} contains `{}`",
                    e.spelling()
                ),
                Witness::Via(_) => {
                    let (chain, effect) = witness_chain(m, &witness, g);
                    format!(
                        "`call @{name}` inside an ordered section: @{name} reaches `{}` through {chain}",
                        effect.spelling()
                    )
                }
            };
            out.push(Diagnostic::new(span, msg));
        }
    }
}

/// "@g -> @h" down to the function that contains the effect itself.
fn witness_chain(m: &Module, witness: &[Option<Witness>], start: usize) -> (String, Effect) {
    let mut names = vec![format!("@{}", m.functions[start].name)];
    let mut at = start;
    // Witnesses were assigned in discovery order, so the chain ends.
    for _ in 0..witness.len() {
        match witness[at] {
            Some(Witness::Via(next)) => {
                at = next;
                names.push(format!("@{}", m.functions[at].name));
            }
            Some(Witness::Direct(e)) => return (names.join(" -> "), e),
            None => break,
        }
    }
    (names.join(" -> "), Effect::Kill)
}

/// The strongly connected components (Tarjan, iterative).
fn strongly_connected(edges: &[&[(usize, Span)]]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut sccs = Vec::new();
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, position of the next edge to explore)
        let mut work = vec![(root, 0usize)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut pos)) = work.last_mut() {
            if let Some(&(w, _)) = edges[v].get(*pos) {
                *pos += 1;
                if index[w] == usize::MAX {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                sccs.push(scc);
            }
        }
    }
    sccs
}

/// For a cyclic component: an error at the first call of the shortest
/// cycle through its lowest-numbered function.
fn cycle_diagnostic(m: &Module, edges: &[&[(usize, Span)]], scc: &[usize]) -> Option<Diagnostic> {
    let start = *scc.iter().min()?;
    let in_scc = |f: usize| scc.contains(&f);
    if scc.len() == 1 && !edges[start].iter().any(|(g, _)| *g == start) {
        return None;
    }
    // Breadth-first from `start` inside the component; parent edges give the path.
    let mut parent: Vec<Option<usize>> = vec![None; edges.len()];
    let mut seen = vec![false; edges.len()];
    let mut queue = VecDeque::from([start]);
    seen[start] = true;
    let mut closing: Option<usize> = None;
    while let Some(v) = queue.pop_front() {
        if edges[v].iter().any(|(g, _)| *g == start) {
            closing = Some(v);
            break;
        }
        for &(w, _) in edges[v].iter() {
            if in_scc(w) && !seen[w] {
                seen[w] = true;
                parent[w] = Some(v);
                queue.push_back(w);
            }
        }
    }
    let last = closing?;
    let mut path = vec![last];
    while let Some(p) = parent[*path.last()?] {
        path.push(p);
    }
    path.reverse(); // start .. last
    path.push(start);
    let first_callee = path[1];
    let span = edges[start]
        .iter()
        .find(|(g, _)| *g == first_callee)
        .map(|(_, s)| *s)?;
    let name = |f: &usize| format!("@{}", m.functions[*f].name);
    // A long cycle shows its ends: the message stays one readable line.
    const SHOWN: usize = 8;
    let cycle = if path.len() <= 2 * SHOWN {
        path.iter().map(name).collect::<Vec<_>>().join(" -> ")
    } else {
        let head: Vec<String> = path[..SHOWN].iter().map(name).collect();
        let tail: Vec<String> = path[path.len() - SHOWN..].iter().map(name).collect();
        format!(
            "{} -> ({} more) -> {}",
            head.join(" -> "),
            path.len() - 2 * SHOWN,
            tail.join(" -> ")
        )
    };
    Some(Diagnostic::new(span, format!("recursive call: {cycle}")))
}

/// Depth-first postorder over the call graph: callees before callers.
fn postorder(edges: &[&[(usize, Span)]]) -> Vec<FuncId> {
    let n = edges.len();
    let mut state = vec![0u8; n]; // 0 new, 1 open, 2 done
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (v, ref mut pos)) = work.last_mut() {
            if let Some(&(w, _)) = edges[v].get(*pos) {
                *pos += 1;
                if state[w] == 0 {
                    state[w] = 1;
                    work.push((w, 0));
                }
                continue;
            }
            work.pop();
            state[v] = 2;
            order.push(FuncId(v as u32));
        }
    }
    order
}
