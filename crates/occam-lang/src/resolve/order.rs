//! Dependency order of the variables, and cycle reports.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Resolver;
use crate::diag::{Code, Diagnostic};

impl Resolver<'_, '_> {
    /// Variables with parents first, declaration order where free (Kahn's
    /// algorithm with a min-heap). Variables on or behind a cycle are reported
    /// and left out.
    pub(super) fn order(&mut self) -> Vec<usize> {
        let n = self.vars.len();
        let mut missing = vec![0usize; n];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (v, e) in self.vars.iter().enumerate() {
            let mut parents: Vec<usize> = e.deps.iter().map(|&(p, _)| p).collect();
            parents.sort_unstable();
            parents.dedup();
            missing[v] = parents.len();
            for p in parents {
                children[p].push(v);
            }
        }
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..n).filter(|&v| missing[v] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(v)) = ready.pop() {
            order.push(v);
            for &c in &children[v] {
                missing[c] -= 1;
                if missing[c] == 0 {
                    ready.push(Reverse(c));
                }
            }
        }
        if order.len() < n {
            self.report_cycles(&missing);
        }
        order
    }

    /// Every variable left with `missing > 0` has a parent also left, so
    /// walking parents from one of them must close a cycle.
    fn report_cycles(&mut self, missing: &[usize]) {
        let n = self.vars.len();
        let mut reported = vec![false; n];
        for start in 0..n {
            if missing[start] == 0 || reported[start] {
                continue;
            }
            let mut path = vec![start];
            let mut pos = vec![usize::MAX; n];
            pos[start] = 0;
            let cycle = loop {
                let v = *path.last().unwrap_or(&start);
                let next = self.vars[v]
                    .deps
                    .iter()
                    .map(|&(p, _)| p)
                    .find(|&p| missing[p] > 0);
                let Some(p) = next else { break None };
                if pos[p] != usize::MAX {
                    break Some(path[pos[p]..].to_vec());
                }
                pos[p] = path.len();
                path.push(p);
            };
            for &v in &path {
                self.vars[v].ok = false;
            }
            let Some(mut cycle) = cycle else { continue };
            if cycle.iter().any(|&v| reported[v]) {
                continue;
            }
            for &v in &cycle {
                reported[v] = true;
            }
            // Walking parents gives child → parent; report in declaration
            // direction starting from the earliest declared variable.
            let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
            cycle.rotate_left(first);
            let a = cycle[0];
            let b = cycle.get(1).copied().unwrap_or(a);
            let span = self.vars[a]
                .deps
                .iter()
                .find(|&&(p, _)| p == b)
                .map_or(self.vars[a].name_span, |&(_, s)| s);
            let mut names: Vec<&str> = cycle.iter().map(|&v| self.vars[v].name.as_str()).collect();
            names.push(&self.vars[a].name);
            let message = if cycle.len() == 1 {
                format!("`{}` depends on itself", self.vars[a].name)
            } else {
                format!("cyclic dependency: {}", names.join(" → "))
            };
            let label = format!("`{}` uses `{}` here", self.vars[a].name, self.vars[b].name);
            self.error(
                Diagnostic::new(Code::Cycle, span, message)
                    .label(label)
                    .hint("a model is a directed acyclic graph; unroll a chain over time: `z2 ~ Categorical(A[z1])`"),
            );
        }
    }
}
