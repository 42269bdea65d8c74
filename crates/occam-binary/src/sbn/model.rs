//! The sigmoid belief network on a DAG, in Lawrence's 0/1 coding (Lawrence (2.1)–(2.3)):
//! P(x_i = 1 | pa(i)) = σ(z_i), z_i = b_i + Σ_{j∈pa(i)} w_ij x_j, x ∈ {0,1}.
//!
//! Storage is compressed sparse rows over children: the parents of unit i are
//! `parent[start[i]..start[i+1]]` with weights `weight[start[i]..start[i+1]]` (edge index e).
//! A children index (`child_edges`) lists, for every unit, the edges in which it is the parent.

use super::error::{Result, SbnError};

/// The largest number of units of a network (file readers, layer sizes, construction).
pub const MAX_UNITS: usize = 1 << 20;
/// The largest number of edges of a layered network built from layer sizes.
pub const MAX_EDGES: usize = 1 << 24;

/// A sigmoid belief network (0/1 units).
#[derive(Debug, Clone, PartialEq)]
pub struct Sbn {
    n: usize,
    bias: Vec<f64>,
    start: Vec<usize>,
    parent: Vec<usize>,
    weight: Vec<f64>,
    /// child_start/child_edge: edges e whose parent is unit j, CSR.
    child_start: Vec<usize>,
    child_edge: Vec<usize>,
    /// edge_child[e] = the child of edge e.
    edge_child: Vec<usize>,
    order: Vec<usize>,
}

impl Sbn {
    /// Builds a network from parent lists `(parents[i][k], weights[i][k])` and biases.
    /// Errors: lengths, out-of-range or duplicate parents, cycles, non-finite numbers.
    pub fn new(bias: Vec<f64>, parents: Vec<Vec<(usize, f64)>>) -> Result<Self> {
        let n = bias.len();
        if n > MAX_UNITS {
            return Err(SbnError::Option {
                name: "units".into(),
                why: format!("{n} units is more than the limit of {MAX_UNITS}"),
            });
        }
        if parents.len() != n {
            return Err(SbnError::Length {
                what: "parent lists".into(),
                expected: n,
                got: parents.len(),
            });
        }
        for (i, b) in bias.iter().enumerate() {
            if !b.is_finite() {
                return Err(SbnError::NotFinite {
                    what: format!("bias of unit {i}"),
                    value: *b,
                });
            }
        }
        let mut start = Vec::with_capacity(n + 1);
        let mut parent = Vec::new();
        let mut weight = Vec::new();
        let mut edge_child = Vec::new();
        start.push(0);
        for (i, list) in parents.iter().enumerate() {
            let mut seen: Vec<usize> = Vec::with_capacity(list.len());
            for &(j, w) in list {
                if j >= n {
                    return Err(SbnError::UnitOutOfRange {
                        what: format!("parent of unit {i}"),
                        unit: j,
                        n,
                    });
                }
                if j == i {
                    return Err(SbnError::Cycle { unit: i });
                }
                if seen.contains(&j) {
                    return Err(SbnError::DuplicateParent {
                        child: i,
                        parent: j,
                    });
                }
                if !w.is_finite() {
                    return Err(SbnError::NotFinite {
                        what: format!("weight {j}→{i}"),
                        value: w,
                    });
                }
                seen.push(j);
                parent.push(j);
                weight.push(w);
                edge_child.push(i);
            }
            start.push(parent.len());
        }
        // children index
        let mut count = vec![0usize; n + 1];
        for &j in &parent {
            count[j + 1] += 1;
        }
        for j in 0..n {
            count[j + 1] += count[j];
        }
        let child_start = count.clone();
        let mut fill = count;
        let mut child_edge = vec![0usize; parent.len()];
        for (e, &j) in parent.iter().enumerate() {
            child_edge[fill[j]] = e;
            fill[j] += 1;
        }
        // topological order (Kahn)
        let mut indeg: Vec<usize> = (0..n).map(|i| start[i + 1] - start[i]).collect();
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = (0..n).rev().filter(|&i| indeg[i] == 0).collect();
        while let Some(j) = stack.pop() {
            order.push(j);
            for &e in &child_edge[child_start[j]..child_start[j + 1]] {
                let c = edge_child[e];
                indeg[c] -= 1;
                if indeg[c] == 0 {
                    stack.push(c);
                }
            }
        }
        if order.len() != n {
            let unit = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
            return Err(SbnError::Cycle { unit });
        }
        Ok(Sbn {
            n,
            bias,
            start,
            parent,
            weight,
            child_start,
            child_edge,
            edge_child,
            order,
        })
    }

    /// Fully connected layered network (layer 0 on top; every unit of layer l+1 has all units of
    /// layer l as parents). Units are numbered layer by layer. `weight(l, i, j)` gives the weight
    /// from unit j of layer l to unit i of layer l+1; `bias(l, i)` the bias of unit i of layer l.
    pub fn layered(
        sizes: &[usize],
        mut weight: impl FnMut(usize, usize, usize) -> f64,
        mut bias: impl FnMut(usize, usize) -> f64,
    ) -> Result<Self> {
        let total = sizes
            .iter()
            .try_fold(0usize, |a, &s| a.checked_add(s))
            .filter(|&t| t <= MAX_UNITS)
            .ok_or_else(|| SbnError::Option {
                name: "layers".into(),
                why: format!(
                    "layer sizes {sizes:?} add up to more than the limit of {MAX_UNITS} units"
                ),
            })?;
        sizes
            .windows(2)
            .try_fold(0usize, |a, w| a.checked_add(w[0].checked_mul(w[1])?))
            .filter(|&e| e <= MAX_EDGES)
            .ok_or_else(|| SbnError::Option {
                name: "layers".into(),
                why: format!(
                    "layer sizes {sizes:?} connect more than the limit of {MAX_EDGES} edges"
                ),
            })?;
        let mut b = Vec::with_capacity(total);
        let mut parents = Vec::with_capacity(total);
        let mut offset = 0;
        for (l, &sz) in sizes.iter().enumerate() {
            for i in 0..sz {
                b.push(bias(l, i));
                if l == 0 {
                    parents.push(Vec::new());
                } else {
                    let prev = sizes[l - 1];
                    let poff = offset - prev;
                    parents.push((0..prev).map(|j| (poff + j, weight(l - 1, i, j))).collect());
                }
            }
            offset += sz;
        }
        Sbn::new(b, parents)
    }

    /// Number of units.
    pub fn n_units(&self) -> usize {
        self.n
    }
    /// Number of edges.
    pub fn n_edges(&self) -> usize {
        self.parent.len()
    }
    /// Biases b_i.
    pub fn bias(&self) -> &[f64] {
        &self.bias
    }
    /// Edge weights w_e (CSR order).
    pub fn weights(&self) -> &[f64] {
        &self.weight
    }
    /// Mutable biases.
    pub fn bias_mut(&mut self) -> &mut [f64] {
        &mut self.bias
    }
    /// Mutable weights (structure fixed).
    pub fn weights_mut(&mut self) -> &mut [f64] {
        &mut self.weight
    }
    /// Edge range of the parents of unit i.
    #[inline]
    pub fn parent_edges(&self, i: usize) -> std::ops::Range<usize> {
        self.start[i]..self.start[i + 1]
    }
    /// Parent unit of edge e.
    #[inline]
    pub fn edge_parent(&self, e: usize) -> usize {
        self.parent[e]
    }
    /// Child unit of edge e.
    #[inline]
    pub fn edge_child(&self, e: usize) -> usize {
        self.edge_child[e]
    }
    /// Edges in which unit j is the parent.
    #[inline]
    pub fn child_edges(&self, j: usize) -> &[usize] {
        &self.child_edge[self.child_start[j]..self.child_start[j + 1]]
    }
    /// A topological order (parents before children).
    pub fn order(&self) -> &[usize] {
        &self.order
    }
    /// Field z_i = b_i + Σ_j w_ij x_j for a real vector x (means or states).
    #[inline]
    pub fn field(&self, i: usize, x: &[f64]) -> f64 {
        let mut z = self.bias[i];
        for e in self.parent_edges(i) {
            z += self.weight[e] * x[self.parent[e]];
        }
        z
    }
    /// log P(x) for a full 0/1 state (as f64 0.0/1.0), Lawrence (2.4)–(2.5).
    pub fn log_joint(&self, x: &[f64]) -> f64 {
        let mut l = 0.0;
        for i in 0..self.n {
            let z = self.field(i, x);
            l += z * x[i] - occam_core::special::softplus(z);
        }
        l
    }
    /// Replace all parameters by a flat vector [weights..., biases...].
    pub fn set_params(&mut self, p: &[f64]) -> Result<()> {
        let ne = self.n_edges();
        if p.len() != ne + self.n {
            return Err(SbnError::Length {
                what: "parameter vector".into(),
                expected: ne + self.n,
                got: p.len(),
            });
        }
        self.weight.copy_from_slice(&p[..ne]);
        self.bias.copy_from_slice(&p[ne..]);
        Ok(())
    }
    /// Flat parameter vector [weights..., biases...].
    pub fn params(&self) -> Vec<f64> {
        let mut p = self.weight.clone();
        p.extend_from_slice(&self.bias);
        p
    }
}

/// Observed (clamped) units: `value[i] = Some(x)` clamps unit i to x ∈ {0,1}.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    value: Vec<Option<bool>>,
    hidden: Vec<usize>,
}

impl Evidence {
    /// Evidence over `n` units from an optional-value vector.
    pub fn new(value: Vec<Option<bool>>) -> Self {
        let hidden = (0..value.len()).filter(|&i| value[i].is_none()).collect();
        Evidence { value, hidden }
    }
    /// No unit observed.
    pub fn none(n: usize) -> Self {
        Evidence::new(vec![None; n])
    }
    /// Clamp the listed units to the listed 0/1 values.
    pub fn from_pairs(n: usize, pairs: &[(usize, bool)]) -> Result<Self> {
        let mut v = vec![None; n];
        for &(u, x) in pairs {
            if u >= n {
                return Err(SbnError::UnitOutOfRange {
                    what: "evidence".into(),
                    unit: u,
                    n,
                });
            }
            v[u] = Some(x);
        }
        Ok(Evidence::new(v))
    }
    /// Checks the evidence length against a network.
    pub fn check(&self, sbn: &Sbn) -> Result<()> {
        if self.value.len() != sbn.n_units() {
            return Err(SbnError::Length {
                what: "evidence".into(),
                expected: sbn.n_units(),
                got: self.value.len(),
            });
        }
        Ok(())
    }
    /// Value of unit i if observed.
    #[inline]
    pub fn get(&self, i: usize) -> Option<bool> {
        self.value[i]
    }
    /// Hidden units, ascending.
    pub fn hidden(&self) -> &[usize] {
        &self.hidden
    }
    /// Number of units.
    pub fn len(&self) -> usize {
        self.value.len()
    }
    /// True if there are no units.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }
}
