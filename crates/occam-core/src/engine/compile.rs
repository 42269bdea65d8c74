//! Compilation: the static model a [`Graph`] holds becomes a [`Vmp`] — every node's state
//! allocated, element groups and mixture runs found, chains and tree q-blocks checked and built,
//! deterministic refresh lists, fused mixture indices and the linear-Gaussian structures set up.

use super::*;

impl Graph {
    /// Finishes the graph.
    pub fn compile(self) -> Result<Vmp, BuildError> {
        Vmp::new(self, true)
    }

    /// Compiles without the linear-Gaussian kernels: every dot product is evaluated element by
    /// element (the reference path that tests and benchmarks compare the kernels with).
    #[doc(hidden)]
    pub fn compile_generic(self) -> Result<Vmp, BuildError> {
        Vmp::new(self, false)
    }
}

impl Vmp {
    /// Compiles `graph`; `linear_kernels: false` keeps every dot product on the element-by-element
    /// path (the reference the kernels are tested against).
    pub(crate) fn new(graph: Graph, linear_kernels: bool) -> Result<Vmp, BuildError> {
        let Graph { plates, nodes, .. } = graph;
        // The static model becomes the engine's nodes: all inference state is allocated here.
        let mut nodes: Vec<Node> = nodes
            .into_iter()
            .map(|m| Node::from_model(Arc::new(m)))
            .collect();
        for node in nodes.iter_mut() {
            node.groups = element_groups(node);
            node.fixed_prior = fixed_prior(node);
            // A member's messages and bound read its family's joint q, not products of marginals.
            if node.block.is_some() {
                continue;
            }
            if let Some(period) = mixture_period(node) {
                node.config_only = true;
                node.period = period;
            }
        }
        for n in &nodes {
            if n.map && n.observed.is_all() {
                return Err(BuildError::Shape {
                    node: n.name.clone(),
                    what: "an observed node cannot be MAP".into(),
                });
            }
        }
        chain::check(&nodes)?;
        let trees = tree::build(&nodes)?;
        joint_gaussian::check(&nodes)?;
        gated_linear::check(&nodes)?;
        // Deterministic descendants reached through deterministic nodes only, in topological order.
        // A search along child edges from each node: linear in the edges reached, where a scan of
        // every later node made compiling a chain of 10⁴ variables quadratic. Children come after
        // their parents, so sorted indices are a topological order.
        // Kept for the nodes that are updated (stochastic, chains): a deterministic node's own
        // list is formed when asked for ([`Vmp::refresh_dependents`]), since keeping one per node
        // of a chain of n deterministic variables would hold n²/2 entries (1.6 GB at n = 20,000).
        let mut refresh_after = vec![Vec::new(); nodes.len()];
        let mut mark = vec![usize::MAX; nodes.len()];
        for (i, list) in refresh_after.iter_mut().enumerate() {
            if matches!(nodes[i].body, Body::Deterministic(_)) {
                continue;
            }
            *list = deterministic_descendants(&nodes, i, &mut mark);
        }
        let fused: Vec<bool> = (0..nodes.len())
            .map(|i| nodes[i].block.is_none() && fused::fusable(&nodes, i))
            .collect();
        let (linear, logit) = linear_structures(&mut nodes, linear_kernels);
        for (i, node) in nodes.iter_mut().enumerate() {
            if !node.observed.is_none() && linear[i].as_ref().is_none_or(|l| l.y != i) {
                node.observed_state();
            }
        }
        // The data moments of every fused index's mixture children, packed once for the fit.
        for i in (0..nodes.len()).filter(|&i| fused[i]) {
            for c in nodes[i]
                .children
                .iter()
                .map(|&(c, _)| c)
                .collect::<Vec<_>>()
            {
                nodes[c].packed = packed::Packed::of(&nodes[c]);
            }
        }
        let shared = linear::shared::designate(&nodes, &linear);
        let (blocks, block_of) = qblock::assign(&nodes, &trees, &linear, &shared, &fused);
        let nodes_len = nodes.len();
        Ok(Vmp {
            blocks: blocks.into(),
            block_of,
            nodes,
            plates,
            refresh_after,
            linear,
            logit,
            shared,
            trees,
            passing_order: (0..nodes_len).map(|_| Default::default()).collect(),
            passed: Mutex::default(),
            outside: None,
            screen: None,
            offered: None,
            initialized: false,
            cache: Cache::default(),
        })
    }
}

/// Finds the linear-Gaussian structures (module `linear`) and the data-times-vector kernels (module
/// `logit`), drops the state they make unnecessary (the dot node's moments, constant covariates'
/// outer products) and gives every other constant its moments.
#[allow(clippy::type_complexity)]
fn linear_structures(
    nodes: &mut [Node],
    enabled: bool,
) -> (
    Vec<Option<Arc<linear::Linear>>>,
    Vec<Option<logit::LogitDot>>,
) {
    let mut out: Vec<Option<Arc<linear::Linear>>> = vec![None; nodes.len()];
    if enabled {
        for f in 0..nodes.len() {
            if let Some(mut l) = linear::detect(nodes, f) {
                // y's own term once (its elements are data or missing leaf entries); y keeps
                // neither u(y) nor f(y) per element (formed on request, `Vmp::moments`).
                let yn = &mut nodes[l.y];
                l.own = yn.observed_own();
                (yn.q.u, yn.q.a) = (Vec::new(), Vec::new());
                let l = Arc::new(l);
                let y = l.y;
                for i in [Some(f), l.sum].into_iter().flatten() {
                    let node = &mut nodes[i];
                    (node.q.phi, node.q.u, node.q.a) = (Vec::new(), Vec::new(), Vec::new());
                    out[i] = Some(l.clone());
                }
                out[y] = Some(l);
            }
        }
    }
    let logit: Vec<Option<logit::LogitDot>> = (0..nodes.len())
        .map(|f| {
            (enabled && out[f].is_none())
                .then(|| logit::detect(nodes, f))
                .flatten()
        })
        .collect();
    for i in 0..nodes.len() {
        if !matches!(nodes[i].body, Body::Constant) {
            continue;
        }
        let points_only = nodes[i].children.iter().all(|&(c, role)| {
            out[c]
                .as_ref()
                .is_some_and(|l| l.f == c && l.points && role == Role::Slot(l.row_slot))
                || logit[c].is_some_and(|k| k.x == i && role == Role::Slot(k.x_slot))
        });
        if points_only && !nodes[i].children.is_empty() {
            continue;
        }
        nodes[i].q.u = constant_moments(&nodes[i]);
    }
    (out, logit)
}

/// The deterministic descendants of node `i` reached through deterministic nodes only, sorted
/// (children come after their parents, so this is a topological order). `mark` is scratch of
/// one entry per node: a search along child edges, linear in the edges reached.
pub(super) fn deterministic_descendants(
    nodes: &[Node],
    i: usize,
    mark: &mut [usize],
) -> Vec<usize> {
    let mut list = Vec::new();
    let mut stack = vec![i];
    mark[i] = i;
    while let Some(x) = stack.pop() {
        for (j, role) in &nodes[x].children {
            if matches!(role, Role::Slot(_))
                && mark[*j] != i
                && matches!(nodes[*j].body, Body::Deterministic(_))
            {
                mark[*j] = i;
                list.push(*j);
                stack.push(*j);
            }
        }
    }
    list.sort_unstable();
    list
}
