//! Initialisation of every q (prior, random draw, given values, k-means++ for mixture indices) and
//! ancestral sampling from the prior.

use super::*;

impl Vmp {
    /// Initialises every latent q (in topological order) and every deterministic node's moments.
    pub fn initialize(&mut self, seed: u64) -> Result<(), RunError> {
        self.changed_all();
        let mut rng = Rng::seed_from_u64(seed);
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            let dist = match &node.body {
                Body::Deterministic(_) => {
                    self.refresh(i);
                    continue;
                }
                Body::Constant => continue,
                // q = the chain given its parents' initial moments (no messages yet).
                Body::Chain(_) => {
                    self.update_chain(i, vec![0.0; node.n * node.len])?;
                    continue;
                }
                Body::Stochastic(d) => d.clone(),
            };
            let is_index = node
                .children
                .iter()
                .any(|(_, r)| matches!(r, Role::Selector(_)));
            let init = node.init.clone().unwrap_or(if is_index {
                Init::KMeansPlusPlus
            } else {
                Init::Prior
            });
            let init = match init {
                Init::KMeansPlusPlus => match self.kmeans_assignment(i, &mut rng) {
                    Some(moments) => Init::Moments(moments),
                    None => Init::Random,
                },
                other => other,
            };
            let zeros = vec![0.0; node.n * node.len];
            let (mut phi, mut u, mut a) = self.run_update(i, &dist, &zeros)?;
            let node = &self.nodes[i];
            let len = node.len;
            match init {
                Init::Prior | Init::KMeansPlusPlus => {}
                Init::Random => {
                    let mut x = vec![0.0; value_len(&dist)];
                    for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                        sample(&dist, &phi[e * len..(e + 1) * len], &mut rng, &mut x);
                        observe(&dist, &x, &mut u[e * len..(e + 1) * len])
                            .map_err(|w| self.numerical(i, e, w))?;
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
                        a[e] = moments(&dist, &phi[r.clone()], &mut u[r])
                            .map_err(|w| self.numerical(i, e, w))?;
                    }
                }
            }
            let node = &mut self.nodes[i];
            node.phi = phi;
            node.u = u;
            node.a = a;
            self.changed(i);
        }
        self.initialized = true;
        Ok(())
    }

    /// One-hot moments for index node `i` from k-means++ seeds over its observed mixture child's
    /// values (see [`Init::KMeansPlusPlus`]); `None` if there is no such child.
    pub(super) fn kmeans_assignment(&self, i: usize, rng: &mut Rng) -> Option<Vec<f64>> {
        use rand::Rng as _;
        let index = &self.nodes[i];
        let MomentKind::Categorical { k } = index.kind else {
            return None;
        };
        let (c, m) = index.children.iter().find_map(|&(c, role)| match role {
            Role::Selector(m)
                if !self.nodes[c].observed.is_empty()
                    && self.nodes[c].observed.iter().all(|&o| o) =>
            {
                Some((c, m))
            }
            _ => None,
        })?;
        let child = &self.nodes[c];
        let vlen = child.data.len() / child.n;
        let mut features: Vec<Vec<f64>> = vec![Vec::new(); index.n];
        for e in 0..child.n {
            features[child.selectors[m].map[e] as usize]
                .extend_from_slice(&child.data[e * vlen..(e + 1) * vlen]);
        }
        let width = features[0].len();
        if width == 0 || features.iter().any(|f| f.len() != width) {
            return None;
        }
        let dist2 =
            |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
        let mut seeds = vec![rng.random_range(0..index.n)];
        let mut nearest: Vec<f64> = features
            .iter()
            .map(|f| dist2(f, &features[seeds[0]]))
            .collect();
        while seeds.len() < k.min(index.n) {
            let total: f64 = nearest.iter().sum();
            let next = if total > 0.0 {
                let mut r = rng.random::<f64>() * total;
                nearest
                    .iter()
                    .position(|&d| {
                        r -= d;
                        r <= 0.0
                    })
                    .unwrap_or(index.n - 1)
            } else {
                rng.random_range(0..index.n)
            };
            seeds.push(next);
            for (d, f) in nearest.iter_mut().zip(&features) {
                *d = d.min(dist2(f, &features[next]));
            }
        }
        let mut u = vec![0.0; index.n * k];
        for (e, f) in features.iter().enumerate() {
            let best = (0..seeds.len())
                .min_by(|&a, &b| {
                    dist2(f, &features[seeds[a]]).total_cmp(&dist2(f, &features[seeds[b]]))
                })
                .unwrap_or(0);
            u[e * k + best] = 1.0;
        }
        Some(u)
    }

    /// Ancestral sampling from the generative model (data are ignored): every stochastic node is drawn
    /// from its conditional given its parents' drawn values, in topological order; deterministic
    /// nodes are evaluated on them. Returns the drawn values of every node (empty for deterministic
    /// and constant nodes), row-major over its plates. Leaves each node's moments at u(draw).
    pub fn sample_prior(&mut self, seed: u64) -> Result<Vec<Vec<f64>>, RunError> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut draws = Vec::with_capacity(self.nodes.len());
        for i in 0..self.nodes.len() {
            let dist = match &self.nodes[i].body {
                Body::Stochastic(d) => d.clone(),
                Body::Deterministic(_) => {
                    match self.linear[i].clone().filter(|l| l.f == i) {
                        // The child's prior needs F's moments here: form them from the draws.
                        Some(lin) => self.nodes[i].u = lin.f_moments(&self.nodes),
                        None => self.refresh(i),
                    }
                    draws.push(Vec::new());
                    continue;
                }
                Body::Constant => {
                    draws.push(Vec::new());
                    continue;
                }
                Body::Chain(_) => {
                    let x = self.sample_chain(i, &mut rng);
                    draws.push(x);
                    continue;
                }
            };
            let node = &self.nodes[i];
            let (n, len, vlen) = (node.n, node.len, value_len(&dist));
            let mut phi = vec![0.0; len];
            let mut tmp = vec![0.0; len];
            let mut buf = Vec::new();
            let mut x = vec![0.0; n * vlen];
            let mut u = vec![0.0; n * len];
            struct Prior<'a>(
                &'a [Node],
                &'a Node,
                usize,
                &'a mut [f64],
                &'a mut [f64],
                &'a mut Vec<f64>,
            );
            impl DistVisitor for Prior<'_> {
                type Output = ();
                fn visit<D: ExpFamily>(self, d: &D) {
                    prior_of(d, self.0, self.1, self.2, self.3, self.4, self.5);
                }
            }
            for e in 0..n {
                dist.visit(Prior(&self.nodes, node, e, &mut phi, &mut tmp, &mut buf));
                if moments(&dist, &phi, &mut tmp).is_err() {
                    return Err(self.numerical(
                        i,
                        e,
                        "the prior given the drawn parents is improper".into(),
                    ));
                }
                sample(&dist, &phi, &mut rng, &mut x[e * vlen..(e + 1) * vlen]);
                observe(
                    &dist,
                    &x[e * vlen..(e + 1) * vlen],
                    &mut u[e * len..(e + 1) * len],
                )
                .map_err(|w| self.numerical(i, e, w))?;
            }
            self.nodes[i].u = u;
            self.changed(i);
            draws.push(x);
        }
        Ok(draws)
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

pub(super) fn moments(d: &Dist, phi: &[f64], u: &mut [f64]) -> Result<f64, String> {
    struct M<'a>(&'a [f64], &'a mut [f64]);
    impl DistVisitor for M<'_> {
        type Output = Result<f64, String>;
        fn visit<D: ExpFamily>(self, d: &D) -> Result<f64, String> {
            d.moments(self.0, self.1).map_err(|e| e.0.to_string())
        }
    }
    d.visit(M(phi, u))
}
