//! Building a model: plates, nodes, parents, data. Every check that can be made before inference —
//! conjugacy of each parent slot (Winn Table 2.1), dimensions, plates, data values — is made here,
//! when the node is added, so errors name the node and slot at fault.

use std::sync::Arc;

use crate::dist::{Dist, SlotInput};
use crate::error::{BuildError, ValueError};
use crate::factor::Factor;
use crate::moments::MomentKind;
use crate::network::{Body, Edge, Init, ModelNode, Role, Selector, Source};
use crate::plate::{count, Axis, IndexRule};

/// Maximum number of parent slots of one node.
pub const MAX_SLOTS: usize = 16;

/// The most values a node may hold: its elements (over its plates and any selected or stacked
/// plate) times its moment length. One array of them is 16 GiB; element indices stay within `u32`.
pub const MAX_NODE_VALUES: usize = 1 << 31;

/// The most state values the nodes of one model may hold together (natural parameters φ and
/// moments u, elements × moment length each, and one normaliser per element): 2³⁰ values, 8 GiB.
/// The engine's messages, scratch and the data take about as much again, so a model at the limit
/// still fits the 24 GiB the project targets. Checked by [`Graph::state_values`] before compiling.
pub const MAX_MODEL_VALUES: usize = 1 << 30;

/// Number of values of `axes` times `per`, if within [`MAX_NODE_VALUES`].
fn node_values(axes: &[Axis], per: usize) -> Option<usize> {
    axes.iter()
        .try_fold(per.max(1), |a, x| a.checked_mul(x.size))
        .filter(|&v| v <= MAX_NODE_VALUES)
}

/// Handle of a plate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlateId(pub(crate) usize);

/// Handle of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(pub(crate) usize);

impl NodeId {
    /// Position of the node in insertion (topological) order.
    pub fn index(self) -> usize {
        self.0
    }
}

/// What fills a parent slot.
#[derive(Clone, Debug)]
pub enum ParentSpec {
    /// Another node (for a stacked slot, the plate to stack along is inferred: the one plate of the
    /// parent that the child lacks and whose size matches).
    Node(NodeId),
    /// Another node, stacked along the named plate.
    Stacked(NodeId, PlateId),
    /// A constant value, shared by every element (for a stacked slot: one value repeated, or one per
    /// stacked element).
    Const(Vec<f64>),
}

/// A node parent.
pub fn p(node: NodeId) -> ParentSpec {
    ParentSpec::Node(node)
}
/// A scalar constant parent.
pub fn c(value: f64) -> ParentSpec {
    ParentSpec::Const(vec![value])
}
/// A vector or matrix constant parent (row-major).
pub fn cv(values: Vec<f64>) -> ParentSpec {
    ParentSpec::Const(values)
}

/// A Bayesian network under construction.
#[derive(Default)]
pub struct Graph {
    pub(crate) plates: Vec<(String, usize)>,
    pub(crate) nodes: Vec<ModelNode>,
    /// Node index by name (a scan per added node made 10⁴ nodes quadratic).
    names: std::collections::HashMap<String, usize>,
    /// Plate indices by name, in declaration order (a scan per declared plate made 5·10⁴ plate
    /// lines take over a minute).
    plate_names: std::collections::HashMap<String, Vec<usize>>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a plate; a plate with the same name and size is returned again.
    pub fn plate(&mut self, name: &str, size: usize) -> PlateId {
        let same = self.plate_names.entry(name.to_string()).or_default();
        if let Some(&i) = same.iter().find(|&&i| self.plates[i].1 == size) {
            return PlateId(i);
        }
        same.push(self.plates.len());
        self.plates.push((name.to_string(), size));
        PlateId(self.plates.len() - 1)
    }

    /// Checked plate declaration: an error for a zero size or a name reused with another size.
    pub fn try_plate(&mut self, name: &str, size: usize) -> Result<PlateId, BuildError> {
        if size == 0 {
            return Err(BuildError::Shape {
                node: name.into(),
                what: "plate size must be positive".into(),
            });
        }
        let declared = self.plate_names.get(name).into_iter().flatten();
        if let Some((_, s)) = declared.map(|&i| &self.plates[i]).find(|(_, s)| *s != size) {
            return Err(BuildError::Shape {
                node: name.into(),
                what: format!("plate `{name}` declared with size {size} and {s}"),
            });
        }
        Ok(self.plate(name, size))
    }

    /// Looks a node up by name.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.names.get(name).copied().map(NodeId)
    }

    /// Name and size of a plate.
    pub fn plate_info(&self, id: PlateId) -> (&str, usize) {
        let (n, s) = &self.plates[id.0];
        (n, *s)
    }

    /// Adds a stochastic node with distribution `dist`, replicated over `plates`.
    pub fn add(
        &mut self,
        name: &str,
        dist: impl Into<Dist>,
        plates: &[PlateId],
        parents: impl IntoIterator<Item = ParentSpec>,
    ) -> Result<NodeId, BuildError> {
        self.add_mixture(name, dist, plates, &[], parents)
    }

    /// Adds a mixture node (Winn §2.2.3): its distribution's parameters are selected by Categorical
    /// index nodes. `selectors` pairs each index node with the plate it selects along; component
    /// parents may live in those plates. Several selectors give a conditional probability table.
    ///
    /// A Gaussian mixture with K = 3 components on 1-D data:
    /// ```
    /// use occam_core::prelude::*;
    /// let data = [-5.1, -4.8, -5.3, 0.1, -0.2, 0.3, 5.2, 4.9, 5.0, 5.1];
    /// let mut g = Graph::new();
    /// let n = g.plate("N", data.len());
    /// let k = g.plate("K", 3);
    /// let pi = g.add("pi", Dirichlet { concentration: vec![1.0; 3] }, &[], []).unwrap();
    /// let mu = g.add("mu", Gaussian, &[k], [c(0.0), c(0.01)]).unwrap();
    /// let tau = g.add("tau", Gamma { shape: 1.0 }, &[k], [c(0.1)]).unwrap();
    /// let z = g.add("z", Categorical { k: 3 }, &[n], [p(pi)]).unwrap();
    /// let x = g.add_mixture("x", Gaussian, &[n], &[(z, k)], [p(mu), p(tau)]).unwrap();
    /// g.observe(x, &data).unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// let fit = vmp.run(&RunOptions { seed: 1, restarts: 3, ..Default::default() }).unwrap();
    /// let mut means = vmp.mean(mu).unwrap();
    /// means.sort_by(f64::total_cmp);
    /// assert!((means[0] + 5.05).abs() < 0.1 && means[1].abs() < 0.1 && (means[2] - 5.05).abs() < 0.1);
    /// assert!(fit.bound_trace.windows(2).all(|w| w[1] >= w[0]));
    /// ```
    pub fn add_mixture(
        &mut self,
        name: &str,
        dist: impl Into<Dist>,
        plates: &[PlateId],
        selectors: &[(NodeId, PlateId)],
        parents: impl IntoIterator<Item = ParentSpec>,
    ) -> Result<NodeId, BuildError> {
        let dist = dist.into();
        let parents: Vec<ParentSpec> = parents.into_iter().collect();
        let slots = dist.slots();
        let inputs: Vec<SlotInput> = (0..slots.len()).map(|s| dist.slot_input(s)).collect();
        let names: Vec<String> = slots.iter().map(|s| s.name.to_string()).collect();
        let kind = dist.kind();
        let needs_constant: Vec<bool> =
            (0..slots.len()).map(|s| needs_constant(&dist, s)).collect();
        self.add_node(
            name,
            Body::Stochastic(dist),
            kind,
            plates,
            selectors,
            parents,
            &inputs,
            &names,
            &needs_constant,
        )
    }

    /// Adds a deterministic node (Winn §2.2.2).
    pub fn deterministic(
        &mut self,
        name: &str,
        factor: impl Into<Factor>,
        plates: &[PlateId],
        parents: impl IntoIterator<Item = ParentSpec>,
    ) -> Result<NodeId, BuildError> {
        let factor = factor.into();
        let parents: Vec<ParentSpec> = parents.into_iter().collect();
        let inputs: Vec<SlotInput> = (0..factor.n_slots())
            .map(|s| factor.slot_input(s))
            .collect();
        let names: Vec<String> = (0..factor.n_slots()).map(|s| factor.slot_name(s)).collect();
        let kind = factor.kind();
        let none = vec![false; inputs.len()];
        self.add_node(
            name,
            Body::Deterministic(factor),
            kind,
            plates,
            &[],
            parents,
            &inputs,
            &names,
            &none,
        )
    }

    /// Adds known per-element values of moment kind `kind` (e.g. regressors of a linear model):
    /// children read their fixed moments u(x); the node contributes nothing to the bound.
    pub fn constant(
        &mut self,
        name: &str,
        kind: MomentKind,
        plates: &[PlateId],
        values: &[f64],
    ) -> Result<NodeId, BuildError> {
        self.constant_values(name, kind, plates, values.to_vec())
    }

    /// [`Graph::constant`] taking the values by value (no copy of a large covariate matrix).
    pub fn constant_values(
        &mut self,
        name: &str,
        kind: MomentKind,
        plates: &[PlateId],
        values: Vec<f64>,
    ) -> Result<NodeId, BuildError> {
        self.constant_shared(name, kind, plates, Arc::new(values))
    }

    /// [`Graph::constant`] sharing the caller's array: the node holds another reference to the
    /// same values, so a data set and every graph lowered from it hold a covariate matrix once.
    pub fn constant_shared(
        &mut self,
        name: &str,
        kind: MomentKind,
        plates: &[PlateId],
        values: Arc<Vec<f64>>,
    ) -> Result<NodeId, BuildError> {
        if self.node(name).is_some() {
            return Err(BuildError::Duplicate {
                what: "node",
                name: name.into(),
            });
        }
        let axes = self.axes(plates);
        if node_values(&axes, kind.len()).is_none() {
            return Err(BuildError::Shape {
                node: name.into(),
                what: format!("holds more than the limit of {MAX_NODE_VALUES} values in one node"),
            });
        }
        let mut node = ModelNode::new(
            name.into(),
            plates.iter().map(|p| p.0).collect(),
            axes,
            Body::Constant,
            kind,
            Vec::new(),
            Vec::new(),
        );
        let vlen = kind.value_len();
        if values.len() != node.n * vlen {
            return Err(BuildError::Shape {
                node: name.into(),
                what: format!(
                    "expected {} values ({} elements × {vlen}), got {}",
                    node.n * vlen,
                    node.n,
                    values.len()
                ),
            });
        }
        // Only the values are kept; `compile` forms the moments a child needs (a linear-Gaussian
        // kernel reads the values and never forms the outer products).
        for (e, x) in values.chunks_exact(vlen).enumerate() {
            let valid = match kind {
                MomentKind::Gaussian { .. } => x
                    .iter()
                    .find(|v| !v.is_finite())
                    .map_or(Ok(()), |&value| Err(ValueError::NotFinite { value })),
                _ => kind.fixed_moments(x).map(|_| ()),
            };
            valid.map_err(|why| BuildError::Value {
                node: name.into(),
                element: e,
                why: why.to_string(),
            })?;
        }
        node.data = values;
        self.names.insert(name.to_string(), self.nodes.len());
        self.nodes.push(node);
        Ok(NodeId(self.nodes.len() - 1))
    }

    /// Observes a node: `values` holds one value per plate element (row-major over the node's plates,
    /// last plate fastest), each `value_len` numbers long.
    pub fn observe(&mut self, node: NodeId, values: &[f64]) -> Result<(), BuildError> {
        self.observe_values(node, values.to_vec(), None)
    }

    /// Observes a node with missing entries: `mask[e] == false` marks element e as missing. A
    /// missing element of a node without children is integrated out exactly (it contributes
    /// nothing); one with children becomes a latent element updated by VMP. A mask without a
    /// missing entry is not kept.
    pub fn observe_masked(
        &mut self,
        node: NodeId,
        values: &[f64],
        mask: Option<&[bool]>,
    ) -> Result<(), BuildError> {
        self.observe_values(node, values.to_vec(), mask)
    }

    /// [`Graph::observe_masked`] taking the values over as the model's data (held once, not
    /// copied: for large data the caller hands its array over).
    pub fn observe_values(
        &mut self,
        node: NodeId,
        values: Vec<f64>,
        mask: Option<&[bool]>,
    ) -> Result<(), BuildError> {
        self.observe_shared(node, Arc::new(values), mask)
    }

    /// [`Graph::observe_masked`] sharing the caller's array (as [`Graph::constant_shared`]).
    pub fn observe_shared(
        &mut self,
        node: NodeId,
        values: Arc<Vec<f64>>,
        mask: Option<&[bool]>,
    ) -> Result<(), BuildError> {
        self.nodes[node.0].set_data(values, mask)
    }

    /// Makes a node a MAP (point-estimate) factor — Winn §2.6.1.
    pub fn set_map(&mut self, node: NodeId) {
        self.nodes[node.0].map = true;
    }

    /// Sets how a node's q is initialised.
    pub fn initialize(&mut self, node: NodeId, init: Init) {
        self.nodes[node.0].init = Some(init);
    }

    /// The axes of `plates` (each plate with its size), in order.
    fn axes(&self, plates: &[PlateId]) -> Vec<Axis> {
        plates
            .iter()
            .map(|p| Axis {
                id: p.0,
                size: self.plates[p.0].1,
            })
            .collect()
    }

    /// The name of a node.
    pub fn node_name(&self, node: NodeId) -> &str {
        &self.nodes[node.0].name
    }

    /// Number of elements of a node.
    pub fn elements(&self, node: NodeId) -> usize {
        count(&self.nodes[node.0].axes)
    }

    /// The state values compiling allocates — per node 2 × elements × moment length (φ and u)
    /// plus one per element — summed with checked arithmetic (`None` past `usize`), and the node
    /// holding the most. Compare with [`MAX_MODEL_VALUES`] before [`Graph::compile`].
    pub fn state_values(&self) -> (Option<usize>, Option<NodeId>) {
        let mut total = Some(0usize);
        let mut largest: Option<(usize, usize)> = None;
        for (i, m) in self.nodes.iter().enumerate() {
            let v =
                m.n.checked_mul(m.len)
                    .and_then(|x| x.checked_mul(2))
                    .and_then(|x| x.checked_add(m.n));
            let size = v.unwrap_or(usize::MAX);
            if largest.is_none_or(|(_, s)| size > s) {
                largest = Some((i, size));
            }
            total = total.and_then(|t| v.and_then(|v| t.checked_add(v)));
        }
        (total, largest.map(|(i, _)| NodeId(i)))
    }
}

mod add;
mod chain;
pub use chain::{GaussianMarkovChain, MarkovChain};
mod gated_q;
mod joint_q;
use add::needs_constant;
