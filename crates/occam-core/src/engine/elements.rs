//! What a node's elements read: their parents' moments (gathered per element and selector
//! configuration), their expected priors (per element, per group of elements sharing parents, per
//! mixture component), and the cached sums over elements that messages and bound terms multiply.

use super::*;

/// Parent moments of one extended element: borrowed slices (stacked slots are gathered into `buf`).
pub(super) fn gather<'a>(
    nodes: &'a [Node],
    node: &'a Node,
    ext: usize,
    buf: &'a mut Vec<f64>,
) -> [&'a [f64]; MAX_SLOTS] {
    buf.clear();
    for edge in &node.parents {
        if edge.stack > 1 {
            if let Source::Node(p) = edge.source {
                for t in 0..edge.stack {
                    let pe = edge.at(ext * edge.stack + t);
                    buf.extend_from_slice(&nodes[p].q.u[pe * edge.plen..(pe + 1) * edge.plen]);
                }
            }
        }
    }
    let mut out: [&[f64]; MAX_SLOTS] = [&[]; MAX_SLOTS];
    let mut offset = 0;
    let buf: &'a [f64] = buf;
    for (s, edge) in node.parents.iter().enumerate() {
        out[s] = match &edge.source {
            Source::Const(m) => m,
            Source::Node(p) if edge.stack == 1 => {
                let pe = edge.at(ext);
                &nodes[*p].q.u[pe * edge.plen..(pe + 1) * edge.plen]
            }
            Source::Node(_) => {
                let len = edge.stack * edge.plen;
                offset += len;
                &buf[offset - len..offset]
            }
        };
    }
    out
}

/// Weight of selector configuration q for child element e: ∏_m Q(z_m = k_m).
pub(super) fn config_weight(nodes: &[Node], node: &Node, e: usize, mut q: usize) -> f64 {
    let mut w = 1.0;
    for sel in node.selectors.iter().rev() {
        let k = q % sel.k;
        q /= sel.k;
        let ie = sel.at(e);
        w *= nodes[sel.node].q.u[ie * sel.k + k];
    }
    w
}

/// Digit of selector m in configuration q.
pub(super) fn config_digit(node: &Node, m: usize, q: usize) -> usize {
    let inner: usize = node.selectors[m + 1..].iter().map(|s| s.k).product();
    (q / inner) % node.selectors[m].k
}

/// [`prior_of`] for a family known only as a [`Dist`] (the samplers, which visit one node at a
/// time): writes φ_p into `phi`, returns ⟨A⟩.
pub(super) fn dist_prior_of(
    dist: &Dist,
    nodes: &[Node],
    node: &Node,
    e: usize,
    phi: &mut [f64],
    tmp: &mut [f64],
    buf: &mut Vec<f64>,
) -> f64 {
    struct Prior<'a>(
        &'a [Node],
        &'a Node,
        usize,
        &'a mut [f64],
        &'a mut [f64],
        &'a mut Vec<f64>,
    );
    impl DistVisitor for Prior<'_> {
        type Output = f64;
        fn visit<D: ExpFamily>(self, d: &D) -> f64 {
            prior_of(d, self.0, self.1, self.2, self.3, self.4, self.5)
        }
    }
    dist.visit(Prior(nodes, node, e, phi, tmp, buf))
}

/// [`crate::dist::ExpFamily::draw_given_parents`] of element e (configuration 0) given its
/// parents' current moments, the draws in ancestral and predictive sampling: whether the family
/// drew x itself.
pub(super) fn dist_draw_given(
    dist: &Dist,
    nodes: &[Node],
    node: &Node,
    e: usize,
    rng: &mut Rng,
    x: &mut [f64],
) -> bool {
    let mut buf = Vec::new();
    let pa = gather(nodes, node, e * node.configs, &mut buf);
    dist.draw_given_parents(&pa[..node.parents.len()], rng, x)
}

/// Expected prior of element e: φ_p = Σ_q w_q ⟨φ(pa_q)⟩, returns Σ_q w_q ⟨A(pa_q)⟩ (Winn (2.52)).
pub(super) fn prior_of<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    node: &Node,
    e: usize,
    phi: &mut [f64],
    tmp: &mut [f64],
    buf: &mut Vec<f64>,
) -> f64 {
    if let Some((fixed, a)) = &node.fixed_prior {
        phi.copy_from_slice(fixed);
        return *a;
    }
    if node.configs == 1 {
        let pa = gather(nodes, node, e, buf);
        return d.prior(&pa[..node.parents.len()], phi);
    }
    phi.iter_mut().for_each(|v| *v = 0.0);
    let mut a = 0.0;
    for q in 0..node.configs {
        let w = config_weight(nodes, node, e, q);
        if w == 0.0 {
            continue;
        }
        let pa = gather(nodes, node, e * node.configs + q, buf);
        a += w * d.prior(&pa[..node.parents.len()], tmp);
        phi.iter_mut()
            .zip(tmp.iter())
            .for_each(|(p, t)| *p += w * t);
    }
    a
}

/// The prior (⟨φ⟩, ⟨A⟩) of every element of `node` if it is the same fixed one for all: a
/// stochastic node without selectors whose every parent is an inline constant (`Node::fixed_prior`).
pub(super) fn fixed_prior(node: &Node) -> Option<(Vec<f64>, f64)> {
    struct Prior<'a>(&'a Node);
    impl DistVisitor for Prior<'_> {
        type Output = (Vec<f64>, f64);
        fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
            let node = self.0;
            let pa: Vec<&[f64]> = node
                .parents
                .iter()
                .map(|edge| match &edge.source {
                    Source::Const(m) => &m[..],
                    Source::Node(_) => unreachable!("checked: every parent is constant"),
                })
                .collect();
            let mut phi = vec![0.0; node.len];
            let a = d.prior(&pa, &mut phi);
            (phi, a)
        }
    }
    let Body::Stochastic(d) = &node.body else {
        return None;
    };
    let fixed = node.configs == 1
        && node.selectors.is_empty()
        && node
            .parents
            .iter()
            .all(|edge| matches!(edge.source, Source::Const(_)));
    fixed.then(|| d.visit(Prior(node)))
}

/// For a single-selector mixture whose parents depend only on the component and on the position
/// within runs of P consecutive elements that all read one selector element: P (1 when they depend on
/// the component alone). Runs longer than 1 need every element to take part (no missing leaf entry).
pub(super) fn mixture_period(node: &Node) -> Option<usize> {
    let q = node.configs;
    if node.selectors.len() != 1 || q < 2 || !matches!(node.body, Body::Stochastic(_)) {
        return None;
    }
    let periodic = |p: usize| {
        node.parents.iter().all(|edge| {
            matches!(edge.source, Source::Const(_)) || edge.rule.periodic(p * q * edge.stack)
        })
    };
    if periodic(1) {
        return Some(1);
    }
    // The first run of elements reading the selector's first element; a rule reads one selector
    // element in every later run of that length too.
    let p = node.selectors[0].rule.first_run()?;
    (p > 0 && (0..node.n).all(|e| node.participates(e)) && periodic(p)).then_some(p)
}

/// Groups of elements with identical parent elements in every slot (see `Node::groups`), if there
/// are at most half as many groups as elements.
pub(super) fn element_groups(node: &Node) -> Option<(Vec<u32>, Vec<u32>)> {
    if node.configs != 1 || node.n < 2 || !matches!(node.body, Body::Stochastic(_)) {
        return None;
    }
    // A parent read by no two elements (e.g. a dot product per element) leaves singletons only:
    // decided in one pass, without hashing every element's tuple.
    let injective = |edge: &Edge| edge.stack == 1 && edge.rule.injective();
    if node
        .parents
        .iter()
        .any(|edge| matches!(edge.source, Source::Node(_)) && injective(edge))
    {
        return None;
    }
    // Every element reads the same parent elements (e.g. z[N] with shared weights): one group.
    let shared = |edge: &Edge| edge.rule.periodic(edge.stack);
    if node
        .parents
        .iter()
        .all(|edge| matches!(edge.source, Source::Const(_)) || shared(edge))
    {
        return Some((vec![0; node.n], vec![0]));
    }
    let mut ids = std::collections::HashMap::new();
    let mut group = Vec::with_capacity(node.n);
    let mut reps = Vec::new();
    for e in 0..node.n {
        let key: Vec<u32> = node
            .parents
            .iter()
            .filter(|edge| matches!(edge.source, Source::Node(_)) && !edge.rule.is_broadcast())
            .flat_map(|edge| (e * edge.stack..(e + 1) * edge.stack).map(|x| edge.at(x) as u32))
            .collect();
        let next = ids.len() as u32;
        let g = *ids.entry(key).or_insert_with(|| {
            reps.push(e as u32);
            next
        });
        group.push(g);
        if reps.len() * 2 > node.n {
            return None;
        }
    }
    Some((group, reps))
}

/// Expected priors ⟨φ⟩, ⟨A⟩ formed once for many elements: one prior for every element (a node's
/// fixed prior, borrowed in place), or a table with a row per element group (`group_priors`) or,
/// for an ungrouped mixture, per element (`mixture_element_priors`).
pub(super) enum Priors<'a> {
    /// The same prior for every element: φ (len values) and ⟨A⟩ (`Node::fixed_prior`).
    Fixed(&'a [f64], f64),
    /// φ per row (rows × len) and ⟨A⟩ per row.
    Table(pool::Pair),
}

impl Priors<'_> {
    /// φ and ⟨A⟩ of row r (of `len` values): the one prior of every row, or the table's row r.
    pub(super) fn row(&self, r: usize, len: usize) -> (&[f64], f64) {
        match self {
            Priors::Fixed(phi, a) => (phi, *a),
            Priors::Table(t) => (&t.0[r * len..(r + 1) * len], t.1[r]),
        }
    }
}

/// ⟨φ⟩ and ⟨A⟩ of the prior of each element group of node `id` (see `Node::groups`): a fixed
/// prior (every parent constant) borrowed for every group, else a table with φ and ⟨A⟩ per group,
/// kept in the cache until a parent changes (it reads the parents' moments only: the
/// values `prior_of` forms for each group's first element, which copies a fixed prior as it is).
pub(super) fn group_priors<'a, D: ExpFamily>(
    d: &D,
    cache: &Cache,
    nodes: &'a [Node],
    id: usize,
) -> Option<Priors<'a>> {
    let c = &nodes[id];
    let (_, reps) = c.groups.as_ref()?;
    if let Some((phi, a)) = &c.fixed_prior {
        return Some(Priors::Fixed(phi, *a));
    }
    let table = cached(
        cache,
        id,
        |e| &mut e.priors,
        || {
            cache
                .pool
                .pair_with(reps.len() * c.len, reps.len(), |phi, a| {
                    // A grouped node has one configuration (`element_groups`), whose prior
                    // `prior_of` writes straight into φ: it needs no scratch row (and the gather's
                    // scratch for stacked parents comes from the pool).
                    let mut buf = cache.pool.zeroed(0);
                    for (g, &rep) in reps.iter().enumerate() {
                        a[g] = prior_of(
                            d,
                            nodes,
                            c,
                            rep as usize,
                            &mut phi[g * c.len..(g + 1) * c.len],
                            &mut [],
                            &mut buf,
                        );
                    }
                    cache.pool.keep(buf);
                })
        },
    );
    Some(Priors::Table(table))
}

/// The prior of element e: its group's row if `priors` has one per group (or the one prior of
/// every element, or for a node without groups its own row of a per-element table:
/// `mixture_element_priors`), else computed.
#[allow(clippy::too_many_arguments)]
pub(super) fn element_prior<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
    priors: &Option<Priors>,
    e: usize,
    phi: &mut [f64],
    tmp: &mut [f64],
    buf: &mut Vec<f64>,
) -> f64 {
    let row = match (priors, &c.groups) {
        (Some(p @ Priors::Fixed(..)), _) => p.row(0, c.len),
        (Some(p), Some((group, _))) => p.row(group[e] as usize, c.len),
        (Some(p), None) => p.row(e, c.len),
        (None, _) => return prior_of(d, nodes, c, e, phi, tmp, buf),
    };
    phi.copy_from_slice(row.0);
    row.1
}

/// W (runs × K): Q(z = k) for each run of `period` elements of a `config_only` mixture node (its
/// elements when `period` is 1), zero for elements that do not participate.
pub(super) fn mixture_weights<'a>(nodes: &'a [Node], c: &Node) -> std::borrow::Cow<'a, [f64]> {
    let sel = &c.selectors[0];
    let z = &nodes[sel.node].q.u;
    let runs = c.n / c.period;
    let identity = sel.rule.strided_identity(c.period, runs);
    if identity && z.len() == runs * sel.k && (0..c.n).all(|e| c.participates(e)) {
        return std::borrow::Cow::Borrowed(z);
    }
    let mut w = vec![0.0; runs * sel.k];
    let copy = |(r, row): (usize, &mut [f64])| {
        if c.participates(r * c.period) {
            let ie = sel.at(r * c.period);
            row.copy_from_slice(&z[ie * sel.k..(ie + 1) * sel.k]);
        }
    };
    if kernels::sequential(w.len()) {
        w.chunks_mut(sel.k).enumerate().for_each(copy);
    } else {
        w.par_chunks_mut(sel.k).enumerate().for_each(copy);
    }
    std::borrow::Cow::Owned(w)
}

/// ⟨φ⟩ and ⟨A⟩ of every component of a `config_only` mixture, over a run: Θ (K × period·len), row k
/// the priors of the run's positions back to back, and a (K), their ⟨A⟩ summed.
pub(super) fn component_priors<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
) -> (Vec<f64>, Vec<f64>) {
    let mut theta = vec![0.0; c.configs * c.period * c.len];
    let mut a = vec![0.0; c.configs];
    component_priors_into(d, nodes, c, &mut theta, &mut a);
    (theta, a)
}

/// [`component_priors`] into `theta` and `a`, both zero on entry.
pub(super) fn component_priors_into<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
    theta: &mut [f64],
    a: &mut [f64],
) {
    let row = c.period * c.len;
    let mut buf = Vec::new();
    for q in 0..c.configs {
        for j in 0..c.period {
            let pa = gather(nodes, c, j * c.configs + q, &mut buf);
            let at = q * row + j * c.len;
            a[q] += d.prior(&pa[..c.parents.len()], &mut theta[at..at + c.len]);
        }
    }
}

/// L (runs × K): ⟨ln p_k(x_run)⟩ without f, for a `config_only` mixture.
pub(super) fn component_scores<D: ExpFamily>(d: &D, nodes: &[Node], c: &Node) -> Vec<f64> {
    let (theta, a) = component_priors(d, nodes, c);
    let mut l = vec![0.0; c.n / c.period * c.configs];
    kernels::scores(&c.q.u, c.period * c.len, &theta, &a, &mut l);
    l
}

/// Element e's own part of the bound: A(φ_q) − φ_q·u if latent (by the family's
/// `own_term`, which does not cancel for a sharp Gaussian), f(x) if observed or MAP. `row` is
/// scratch for a fused index's φ, formed here (reused across elements: no allocation per element).
pub(super) fn own_term(c: &Node, e: usize, row: &mut Vec<f64>) -> f64 {
    let r = e * c.len..(e + 1) * c.len;
    let phi = if c.natural_on_request() {
        // A fused mixture index keeps q(z) and A only (`Node::natural_row`, which writes every
        // entry of the row).
        row.resize(c.len, 0.0);
        c.natural_row(e, row);
        &row[..]
    } else {
        &c.q.phi[r.clone()]
    };
    match &c.body {
        Body::Stochastic(d) if !(c.is_observed(e) || c.map) => d.own_term(phi, &c.q.u[r], c.q.a[e]),
        _ => own_of(c.is_observed(e) || c.map, phi, &c.q.u[r], c.q.a[e]),
    }
}

/// `own_term` from an element's arrays (`a` holds f(x) for a point value).
pub(super) fn own_of(point: bool, phi: &[f64], u: &[f64], a: f64) -> f64 {
    if point {
        a
    } else {
        a - natural_dot(phi, u)
    }
}

pub(super) use crate::kernels::map_chunks;

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// φ·u with a term whose statistic u_i is 0 counted as 0 whatever φ_i: under a constant prior
/// that gives a category probability 0, φ_i = ⟨ln p_i⟩ = −∞ while every u_i = ⟨[x = i]⟩ is 0, and
/// the term is 0 (0 ln 0 = 0), where the plain product is NaN.
pub(super) fn natural_dot(phi: &[f64], u: &[f64]) -> f64 {
    phi.iter()
        .zip(u)
        .map(|(&p, &v)| if v == 0.0 { 0.0 } else { p * v })
        .sum()
}

#[cfg(test)]
mod tests;
