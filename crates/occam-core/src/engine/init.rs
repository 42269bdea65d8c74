//! Initialisation of every q (prior, random draw, given values, k-means++ for mixture indices).

use super::*;

mod categorical;

use categorical::Given;

/// How much sharper than the prior a random start's q is (its precision over the prior's): see
/// the `Init::Random` arm of [`Vmp::initialize`].
pub(super) const RANDOM_START_SHARPNESS: f64 = 1e6;

impl Vmp {
    /// Initialises every latent q (in topological order) and every deterministic node's moments.
    pub fn initialize(&mut self, seed: u64) -> Result<(), RunError> {
        self.changed_all();
        let mut rng = Rng::seed_from_u64(seed);
        // A gated block's default start from the data (`gated_linear/start.rs`).
        let gated = self.gated_data_starts(seed);
        let started = self.start_nodes(&mut rng);
        self.finish_gated_data_starts(gated, started)?;
        for i in 0..self.nodes.len() {
            self.forget_gated_dense(i);
        }
        self.initialized = true;
        Ok(())
    }

    /// Starts every node in node order: deterministic nodes' moments, and each stochastic node
    /// or chain by its block (`QBlock::start`).
    fn start_nodes(&mut self, rng: &mut Rng) -> Result<(), RunError> {
        for i in 0..self.nodes.len() {
            match &self.nodes[i].body {
                Body::Deterministic(_) => self.refresh(i),
                Body::Constant => {}
                Body::Stochastic(_) | Body::Chain(_) => {
                    let blocks = self.blocks.clone();
                    let b = self.block_of[i].expect("stochastic nodes and chains are in blocks");
                    blocks[b as usize].start(self, i, rng)?;
                }
            }
        }
        Ok(())
    }

    /// Starts chain `i`: q = the chain given its parents' initial moments (no messages yet), or a
    /// random path (`chain/start.rs`).
    pub(super) fn start_chain(&mut self, i: usize, rng: &mut Rng) -> Result<(), RunError> {
        let node = &self.nodes[i];
        let random = matches!(node.init, Some(Init::Random));
        let default = node.init.is_none() && self.chain_is_symmetric(i);
        self.update_chain(i, vec![0.0; node.n * node.len])?;
        if default {
            // As a mixture index's k-means++ (`start`): every state would otherwise
            // start alike and stay alike (the symmetric saddle).
            if !self.kmeans_chain_start(i, rng)? {
                self.random_chain_start(i, rng)?;
            }
        } else if random {
            self.random_chain_start(i, rng)?;
        }
        Ok(())
    }

    /// Starts stochastic node `i` from its `Init`, or from the default start ([`Vmp::start`]).
    pub(super) fn start_stochastic(&mut self, i: usize, rng: &mut Rng) -> Result<(), RunError> {
        let Body::Stochastic(dist) = &self.nodes[i].body else {
            unreachable!("started as a stochastic node")
        };
        let dist = dist.clone();
        // The node's own start is read in place (a given moment array may be N·(Q + Q²)
        // values: not copied) from the shared static node.
        if let Some(init) = self.nodes[i].start_override.clone() {
            return self.start_node(i, &dist, &init, rng);
        }
        let model = self.nodes[i].model.clone();
        match &model.init {
            Some(init) => self.start_node(i, &dist, init, rng),
            None => {
                let init = self.start(i).into_owned();
                self.start_node(i, &dist, &init, rng)
            }
        }
    }

    /// Starts latent node `i` (family `dist`) from `start`: its q, moments and log-partitions.
    fn start_node(
        &mut self,
        i: usize,
        dist: &Dist,
        start: &Init,
        rng: &mut Rng,
    ) -> Result<(), RunError> {
        let node = &self.nodes[i];
        if matches!(start, Init::Prior)
            && !node.has_latent()
            && node.block.is_none()
            && !linear::shared::is_shared(node)
        {
            // Nothing to start (every element observed, or not taking part): the prior
            // update below would visit each element only to skip it, and allocate n × len
            // zero messages for it.
            self.changed(i);
            self.share_if_possible(i);
            return Ok(());
        }
        let assigned;
        let init = match start {
            Init::KMeansPlusPlus => match self.kmeans_assignment(i, rng) {
                Some(label) => {
                    // The assignment's one-hot moments are written straight into the node
                    // where it can (no n × K array in between), else formed for the general path.
                    if self.start_categorical(i, Given::Labels(&label))? {
                        return Ok(());
                    }
                    let k = self.nodes[i].len;
                    let mut u = vec![0.0; label.len() * k];
                    for (e, &l) in label.iter().enumerate() {
                        u[e * k + l] = 1.0;
                    }
                    assigned = Init::Moments(u);
                    &assigned
                }
                None => {
                    assigned = Init::Random;
                    &assigned
                }
            },
            other => other,
        };
        if self.init_shared(i, init, rng)? {
            return Ok(());
        }
        if let Init::Moments(values) = init {
            if self.start_categorical(i, Given::Moments(values))? {
                return Ok(());
            }
        }
        let node = &self.nodes[i];
        let zeros = vec![0.0; node.n * node.len];
        let NodeState {
            mut phi,
            mut u,
            mut a,
        } = self.run_update(i, dist, &zeros)?;
        let node = &self.nodes[i];
        let len = node.len;
        match init {
            Init::Prior | Init::KMeansPlusPlus => {}
            Init::Random => {
                // Winn §2.5.1's random start is the point mass at a draw from the prior
                // (BayesPy's `initialize_from_random` too); its entropy is −∞, so the
                // starting state has no bound. Where the family can, the q is instead centred
                // on the draw with the prior's spread shrunk by `RANDOM_START_SHARPNESS`: a
                // distribution (consistent φ and u, a finite bound) whose moments differ
                // from the point mass's by 10⁻⁶ of the prior's variance, so the updates that
                // follow are those of the point-mass start.
                let mut x = vec![0.0; value_len(dist)];
                let mut centred = vec![0.0; len];
                let mut sharp = vec![0.0; len];
                for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                    let r = e * len..(e + 1) * len;
                    sample(dist, &phi[r.clone()], rng, &mut x);
                    sharp
                        .iter_mut()
                        .zip(&phi[r.clone()])
                        .for_each(|(s, p)| *s = RANDOM_START_SHARPNESS * p);
                    // A family that cannot centre a q on the draw keeps its prior q here:
                    // the point mass u(x) beside the prior's φ and A would be no q at all, and
                    // the bound of that state would lie above the bound of any q (its own
                    // term A − φ·u is the prior's cross-entropy, not the point mass's −∞ or,
                    // for a discrete family, its 0).
                    if centred_at(dist, &sharp, &x, &mut centred) {
                        phi[r.clone()].copy_from_slice(&centred);
                        a[e] = moments(dist, &phi[r.clone()], &mut u[r])
                            .map_err(|w| self.numerical(i, e, w.to_string()))?;
                    }
                }
            }
            Init::Moments(values) => {
                if values.len() != node.n * len {
                    return Err(self.numerical(
                        i,
                        0,
                        format!(
                            "initial moments need {} values, got {}",
                            node.n * len,
                            values.len()
                        ),
                    ));
                }
                for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                    u[e * len..(e + 1) * len].copy_from_slice(&values[e * len..(e + 1) * len]);
                }
            }
            Init::Natural(values) => {
                if values.len() != node.n * len {
                    return Err(self.numerical(
                        i,
                        0,
                        format!(
                            "initial parameters need {} values, got {}",
                            node.n * len,
                            values.len()
                        ),
                    ));
                }
                for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                    let r = e * len..(e + 1) * len;
                    phi[r.clone()].copy_from_slice(&values[r.clone()]);
                    a[e] = moments(dist, &phi[r.clone()], &mut u[r])
                        .map_err(|w| self.numerical(i, e, w.to_string()))?;
                }
            }
        }
        let node = &mut self.nodes[i];
        node.q.phi = phi;
        node.q.u = u;
        node.q.a = a;
        self.changed(i);
        self.share_if_possible(i);
        Ok(())
    }

    /// How node `i`'s q starts: its own `init`, else the default — k-means++ for a mixture index,
    /// a draw from the prior for one latent factor of each product of latent factors (see
    /// [`crate::factor::Deterministic::BILINEAR`]; Winn §2.5.1, method 1), and the prior otherwise.
    ///
    /// Of a product's latent factors left at the default, the one with the most plate elements (the
    /// per-datum latent variables, e.g. `X` in `dot(W, X)`; the later one on a tie) is drawn: one
    /// random factor suffices to break the symmetry, and the other factors' first updates then
    /// read it (see [`Vmp::default_order`]). Nothing is drawn when a factor already starts away
    /// from zero by the user's `init`.
    pub(super) fn start(&self, i: usize) -> std::borrow::Cow<'_, Init> {
        use std::borrow::Cow;
        let node = &self.nodes[i];
        if let Some(init) = node.start_override.as_ref().or(node.init.as_ref()) {
            return Cow::Borrowed(init);
        }
        if node
            .children
            .iter()
            .any(|(_, r)| matches!(r, Role::Selector(_)))
        {
            return Cow::Owned(Init::KMeansPlusPlus);
        }
        let latent = |p: usize| self.nodes[p].has_latent();
        let drawn = node.children.iter().any(|&(c, _)| {
            let Body::Deterministic(f) = &self.nodes[c].body else {
                return false;
            };
            if !f.is_bilinear() {
                return false;
            }
            let mut factors: Vec<usize> = self.nodes[c]
                .parents
                .iter()
                .filter_map(|e| match e.source {
                    Source::Node(p) if latent(p) => Some(p),
                    _ => None,
                })
                .collect();
            factors.sort_unstable();
            factors.dedup();
            let broken = factors.iter().any(|&p| {
                matches!(
                    self.nodes[p].init,
                    Some(Init::Random | Init::Moments(_) | Init::Natural(_))
                )
            });
            let chosen = factors
                .iter()
                .copied()
                .filter(|&p| self.nodes[p].init.is_none())
                .max_by_key(|&p| (self.nodes[p].n, p));
            factors.len() >= 2 && !broken && chosen == Some(i)
        });
        Cow::Owned(if drawn { Init::Random } else { Init::Prior })
    }

    /// Whether any latent q's start depends on the seed: a random draw (`init x = random`, or the
    /// default draw of one factor of a product), a mixture index's k-means++ seeds, or a discrete
    /// chain's default k-means or random-path start. When none does, restarts repeat one fit.
    pub fn start_is_random(&self) -> bool {
        (0..self.nodes.len()).any(|i| {
            let node = &self.nodes[i];
            match &node.body {
                Body::Chain(_) => {
                    matches!(node.init, Some(Init::Random))
                        || node.init.is_none() && self.chain_is_symmetric(i)
                }
                Body::Stochastic(_) if node.has_latent() => {
                    matches!(&*self.start(i), Init::Random | Init::KMeansPlusPlus)
                }
                _ => false,
            }
        })
    }

    /// Products of latent factors that are identically zero: for every deterministic node whose
    /// mean is a product of its parents' means ([`crate::factor::Deterministic::BILINEAR`]) and
    /// that has two or more latent factors, the node and its factors when every factor's mean is
    /// exactly 0 in every element. Starting from zero-mean priors keeps such a product at zero for
    /// ever (a saddle of the bound, not an optimum); a fit that ends there learnt nothing from the
    /// data through the product.
    pub fn zero_products(&self) -> Vec<(NodeId, Vec<NodeId>)> {
        let mut out = Vec::new();
        for (c, node) in self.nodes.iter().enumerate() {
            let Body::Deterministic(f) = &node.body else {
                continue;
            };
            if !f.is_bilinear() {
                continue;
            }
            let mut factors: Vec<usize> = node
                .parents
                .iter()
                .filter_map(|e| match e.source {
                    Source::Node(p) if self.nodes[p].has_latent() => Some(p),
                    _ => None,
                })
                .collect();
            factors.sort_unstable();
            factors.dedup();
            let zero_mean = |p: usize| {
                let n = &self.nodes[p];
                let MomentKind::Gaussian { d } = n.kind else {
                    return false;
                };
                if linear::shared::is_shared(n) {
                    // Means first, then the one covariance (`linear::shared`).
                    return n.q.u[..n.n * d].iter().all(|&x| x == 0.0);
                }
                !n.q.u.is_empty()
                    && n.q
                        .u
                        .chunks(n.len)
                        .all(|u| u[..d].iter().all(|&x| x == 0.0))
            };
            if factors.len() >= 2 && factors.iter().all(|&p| zero_mean(p)) {
                out.push((NodeId(c), factors.into_iter().map(NodeId).collect()));
            }
        }
        out
    }

    /// The label of every element of index node `i` from k-means++ seeds over its observed
    /// mixture child's values (see [`Init::KMeansPlusPlus`]); `None` if there is no such child.
    pub(super) fn kmeans_assignment(&self, i: usize, rng: &mut Rng) -> Option<Vec<usize>> {
        let index = &self.nodes[i];
        let MomentKind::Categorical { k } = index.kind else {
            return None;
        };
        let (c, m) = index.children.iter().find_map(|&(c, role)| match role {
            Role::Selector(m) if self.nodes[c].observed.is_all() => Some((c, m)),
            _ => None,
        })?;
        let child = &self.nodes[c];
        let vlen = child.data.len() / child.n;
        let rule = &child.selectors[m].rule;
        // Features of index element j: the values of the child elements it selects, in order, as
        // row j of one contiguous n × width array (the child's data itself when the map is the
        // identity, as for x[N] selected by z[N]).
        let mut counts = vec![0usize; index.n];
        for e in 0..child.n {
            counts[rule.at(e)] += 1;
        }
        let per = counts[0];
        if per == 0 || counts.iter().any(|&c| c != per) {
            return None;
        }
        let width = per * vlen;
        let identity = child.n == index.n && rule.is_identity(child.n);
        let gathered;
        let features: &[f64] = if identity {
            &child.data
        } else {
            let mut f = vec![0.0; index.n * width];
            let mut fill = vec![0usize; index.n];
            for e in 0..child.n {
                let j = rule.at(e);
                let at = j * width + fill[j] * vlen;
                f[at..at + vlen].copy_from_slice(&child.data[e * vlen..(e + 1) * vlen]);
                fill[j] += 1;
            }
            gathered = f;
            &gathered
        };
        Some(crate::kmeans::kmeans(features, index.n, width, k, rng))
    }
}

pub(super) fn sample(d: &Dist, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
    struct S<'a>(&'a [f64], &'a mut Rng, &'a mut [f64]);
    impl DistVisitor for S<'_> {
        type Output = ();
        fn visit<D: ExpFamily>(self, d: &D) {
            d.sample(self.0, self.1, self.2)
        }
    }
    d.visit(S(phi, rng, x))
}

fn centred_at(d: &Dist, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
    struct C<'a>(&'a [f64], &'a [f64], &'a mut [f64]);
    impl DistVisitor for C<'_> {
        type Output = bool;
        fn visit<D: ExpFamily>(self, d: &D) -> bool {
            d.centred_at(self.0, self.1, self.2)
        }
    }
    d.visit(C(phi, x, out))
}

pub(super) fn moments(d: &Dist, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
    struct M<'a>(&'a [f64], &'a mut [f64]);
    impl DistVisitor for M<'_> {
        type Output = Result<f64, OutOfDomain>;
        fn visit<D: ExpFamily>(self, d: &D) -> Result<f64, OutOfDomain> {
            d.moments(self.0, self.1)
        }
    }
    d.visit(M(phi, u))
}
