//! The static model: what the user built with [`crate::graph::Graph`] — nodes with their family or
//! factor, plates, parent edges, mixture selectors, chains and tree q-blocks, observed values and
//! masks, MAP flags and initialisation specs. It holds no inference state: compilation
//! ([`crate::engine::Vmp`], `engine/compile.rs`) allocates every node's natural parameters, moments,
//! log-partitions and caches from it.

use std::sync::Arc;

use crate::dist::{Dist, DistVisitor, ExpFamily};
use crate::error::BuildError;
use crate::factor::Factor;
use crate::moments::MomentKind;
use crate::plate::{count, Axis, IndexRule};

/// What a node computes.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    Stochastic(Dist),
    Deterministic(Factor),
    /// Known values with per-element moments (e.g. regressors); contributes nothing to the bound.
    Constant,
    /// A q-block: one joint q over the time plate of each sequence (module `chain`).
    Chain(Chain),
}

/// Where a parent slot's moments come from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Node(usize),
    /// Fixed moments of a constant (already stacked), shared by every element.
    Const(Vec<f64>),
}

/// A parent slot: for every extended child element (element × selector configuration) and stacked
/// index, the parent element it reads, by an index rule (plate strides, or the broadcast rule for a
/// parent without plates read unstacked; `plate::IndexRule`), never a per-element map.
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub source: Source,
    pub rule: IndexRule,
    pub stack: usize,
    pub plen: usize,
}

impl Edge {
    /// The parent element read by extended child element `ext` (unstacked).
    #[inline]
    pub(crate) fn at(&self, ext: usize) -> usize {
        self.rule.at(ext)
    }

    /// Adds a message for extended child element `ext` (`stack` parent messages back to back) into
    /// the parents' accumulator `out`.
    pub(crate) fn scatter(&self, ext: usize, m: &[f64], out: &mut [f64]) {
        for t in 0..self.stack {
            let pe = self.at(ext * self.stack + t);
            let src = &m[t * self.plen..(t + 1) * self.plen];
            out[pe * self.plen..(pe + 1) * self.plen]
                .iter_mut()
                .zip(src)
                .for_each(|(o, v)| *o += v);
        }
    }
}

/// A Categorical index of a mixture node: `rule.at(e)` is the index node's element for child
/// element e.
#[derive(Clone, Debug)]
pub(crate) struct Selector {
    pub node: usize,
    pub k: usize,
    pub rule: IndexRule,
}

impl Selector {
    /// The index node's element selecting for child element `e`.
    #[inline]
    pub(crate) fn at(&self, e: usize) -> usize {
        self.rule.at(e)
    }
}

/// How a child is attached to a parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Slot(usize),
    Selector(usize),
}

/// How a latent node's q starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// q = the prior given the parents' initial moments (Winn §2.5.1, method 2).
    Prior,
    /// Moments of a draw from the prior, seeded (symmetry breaking, method 1).
    Random,
    /// For the index of a mixture with observed children: k-means ([`crate::kmeans`]: greedy
    /// k-means++ seeding, then Lloyd iterations) on the observed values each index element selects,
    /// and a hard assignment of every element to its cluster. The default for mixture indices
    /// (scikit-learn's default is k-means too); falls back to `Random` when the index has no
    /// observed mixture child.
    KMeansPlusPlus,
    /// Given moment vectors, one per element (e.g. responsibilities of a Categorical).
    Moments(Vec<f64>),
    /// Given natural parameters, one vector per element.
    Natural(Vec<f64>),
}

/// Which chain a q-block is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ChainKind {
    Discrete { k: usize },
    Gaussian { d: usize },
}

/// The static part of a chain node.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub kind: ChainKind,
    pub steps: usize,
    pub lengths: Vec<usize>,
    /// Observed inputs (controls) of a Gaussian chain, P values per step, sequences × steps × P
    /// (empty: none).
    pub inputs: Vec<f64>,
    /// P, the input dimension (0: no inputs).
    pub n_inputs: usize,
}

/// A node as built: what it is and how it is connected, its data and its start.
#[derive(Clone, Debug)]
pub(crate) struct ModelNode {
    pub name: String,
    pub plates: Vec<usize>,
    pub axes: Vec<Axis>,
    pub n: usize,
    pub len: usize,
    pub kind: MomentKind,
    pub body: Body,
    pub parents: Vec<Edge>,
    pub selectors: Vec<Selector>,
    pub configs: usize,
    pub children: Vec<(usize, Role)>,
    /// Which elements are data.
    pub observed: Observed,
    /// Observed values, or a constant's values (row-major, `value_len` per element). Shared, not
    /// copied: the caller's data set and every graph built from it hold the same array
    /// ([`Graph::constant_shared`](crate::graph::Graph::constant_shared)).
    pub data: Arc<Vec<f64>>,
    pub map: bool,
    pub init: Option<Init>,
    /// The tree-structured q-block the node is a member of (`engine/tree`).
    pub block: Option<usize>,
    /// A concatenation whose parents share one Gaussian q-block (`engine/joint_gaussian`).
    pub joint_gaussian: bool,
    /// The node's part in a gated linear-Gaussian q-block (`engine/gated_linear`).
    pub gated: Option<GatedRole>,
    /// Keeps q factorised over the node's elements where the engine would otherwise give it a
    /// joint q automatically (the softmax q-block, `engine/softmax_joint`).
    pub mean_field: bool,
}

/// The parts of a gated linear-Gaussian q-block (`Graph::gated_q`): y[N, D] gated by s[N] over
/// the components of mean[N, K, D] = dot(W[K, D], x[N, K]) + μ[K, D].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GatedRole {
    /// The index s, a Categorical over K.
    Index,
    /// The latent vectors x, one per point and component.
    Latent,
    /// The dot product W · x.
    Product,
    /// The sum of the product and the offsets μ.
    Mean,
    /// The observed mixture y.
    Data,
}

impl ModelNode {
    pub(crate) fn new(
        name: String,
        plates: Vec<usize>,
        axes: Vec<Axis>,
        body: Body,
        kind: MomentKind,
        parents: Vec<Edge>,
        selectors: Vec<Selector>,
    ) -> Self {
        let n = count(&axes);
        let len = kind.len();
        let configs = selectors.iter().map(|s| s.k).product();
        ModelNode {
            name,
            plates,
            axes,
            n,
            len,
            kind,
            body,
            parents,
            selectors,
            configs,
            children: Vec::new(),
            observed: Observed::None,
            data: Arc::default(),
            map: false,
            init: None,
            block: None,
            joint_gaussian: false,
            mean_field: false,
            gated: None,
        }
    }

    /// Takes `values` (one copy of the data in the whole program: the caller hands its array
    /// over or shares it) and checks them; `mask[e] == false` marks element e as missing.
    pub(crate) fn set_data(
        &mut self,
        values: Arc<Vec<f64>>,
        mask: Option<&[bool]>,
    ) -> Result<(), BuildError> {
        let dist = match &self.body {
            Body::Stochastic(d) => d.clone(),
            Body::Deterministic(_) | Body::Constant | Body::Chain(_) => {
                return Err(BuildError::Shape {
                    node: self.name.clone(),
                    what: "only stochastic nodes can be observed".into(),
                })
            }
        };
        let vlen = value_len(&dist);
        if values.len() != self.n * vlen {
            return Err(BuildError::Shape {
                node: self.name.clone(),
                what: format!(
                    "expected {} observed values ({} elements × {vlen}), got {}",
                    self.n * vlen,
                    self.n,
                    values.len()
                ),
            });
        }
        if let Some(m) = mask {
            if m.len() != self.n {
                return Err(BuildError::Shape {
                    node: self.name.clone(),
                    what: format!("mask has {} entries for {} elements", m.len(), self.n),
                });
            }
        }
        let observed = Observed::from_mask(mask);
        // Checked here; u(x) and f(x) are formed at compilation, for the nodes that keep them
        // (`observed_state`: the data of a linear-Gaussian structure keeps its values only).
        check_values(&dist, self.len, &values, &observed).map_err(|(e, why)| {
            BuildError::Value {
                node: self.name.clone(),
                element: e,
                why,
            }
        })?;
        self.observed = observed;
        self.data = values;
        Ok(())
    }
}

pub(crate) fn value_len(d: &Dist) -> usize {
    struct V;
    impl DistVisitor for V {
        type Output = usize;
        fn visit<D: ExpFamily>(self, d: &D) -> usize {
            d.value_len()
        }
    }
    d.visit(V)
}

/// u(x) and f(x) of every observed element e of `values` (`observed.get(e)`), one dispatch on the
/// family for all of them: `each(e, u, f)`; stops at the first invalid value.
pub(crate) fn observe_each(
    d: &Dist,
    len: usize,
    values: &[f64],
    observed: &Observed,
    each: impl FnMut(usize, &[f64], f64),
) -> Result<(), (usize, String)> {
    struct O<'a, F>(&'a [f64], &'a Observed, usize, F);
    impl<F: FnMut(usize, &[f64], f64)> DistVisitor for O<'_, F> {
        type Output = Result<(), (usize, String)>;
        fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
            let O(values, observed, len, mut each) = self;
            let (vlen, mut u) = (d.value_len(), vec![0.0; len]);
            let n = values.len() / vlen.max(1);
            for e in (0..n).filter(|&e| observed.get(e)) {
                let f = d.observe_value(&values[e * vlen..(e + 1) * vlen], &mut u);
                each(e, &u, f.map_err(|why| (e, why.to_string()))?);
            }
            Ok(())
        }
    }
    d.visit(O(values, observed, len, each))
}

/// Checks every observed element of `values`: the first invalid one and why. A family whose finite
/// values are all valid ([`ExpFamily::finite_values_are_valid`]: the Gaussians) is checked in
/// blocks for NaN and ±∞ without forming u(x); the first bad block goes through the family's own
/// check, so the verdict and message are those of [`observe_each`].
fn check_values(
    d: &Dist,
    len: usize,
    values: &[f64],
    observed: &Observed,
) -> Result<(), (usize, String)> {
    struct Bulk;
    impl DistVisitor for Bulk {
        type Output = Option<usize>;
        fn visit<D: ExpFamily>(self, d: &D) -> Option<usize> {
            d.finite_values_are_valid().then(|| d.value_len())
        }
    }
    if let (Some(vlen), Observed::All) = (d.visit(Bulk), observed) {
        // Elements per block.
        const BLOCK: usize = 256;
        // Any NaN or ±∞ makes the block's sum of 0·x NaN.
        let bad = values
            .chunks(BLOCK * vlen)
            .position(|b| b.iter().fold(0.0, |s, &x| s + 0.0 * x).is_nan());
        let Some(block) = bad else {
            return Ok(());
        };
        let rest = &values[block * BLOCK * vlen..];
        let sub = Observed::All;
        return observe_each(d, len, rest, &sub, |_, _, _| {})
            .map_err(|(e, why)| (block * BLOCK + e, why));
    }
    observe_each(d, len, values, observed, |_, _, _| {})
}

/// Which elements of a node are data. Complete data cost no per-element flags: the mask is kept
/// only when the caller marks an element missing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Observed {
    /// No element (a latent node).
    #[default]
    None,
    /// Every element.
    All,
    /// Element e is data where `mask[e]` (at least one is not).
    Mask(Vec<bool>),
}

impl Observed {
    /// Every element observed unless `mask` marks one missing.
    pub(crate) fn from_mask(mask: Option<&[bool]>) -> Self {
        match mask {
            Some(m) if !m.iter().all(|&o| o) => Observed::Mask(m.to_vec()),
            _ => Observed::All,
        }
    }

    /// Whether no element is data.
    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Observed::None)
    }

    /// Whether every element is data.
    pub(crate) fn is_all(&self) -> bool {
        matches!(self, Observed::All)
    }

    /// Whether element e is data.
    #[inline]
    pub(crate) fn get(&self, e: usize) -> bool {
        match self {
            Observed::None => false,
            Observed::All => true,
            Observed::Mask(m) => m[e],
        }
    }

    /// How many of the first `n` elements are data.
    pub(crate) fn count(&self, n: usize) -> usize {
        match self {
            Observed::None => 0,
            Observed::All => n,
            Observed::Mask(m) => m[..n].iter().filter(|&&o| o).count(),
        }
    }

    /// Whether no element in `range` is data.
    pub(crate) fn none_in(&self, range: std::ops::Range<usize>) -> bool {
        match self {
            Observed::None => true,
            Observed::All => range.is_empty(),
            Observed::Mask(m) => m[range].iter().all(|&o| !o),
        }
    }
}
