//! The tree-structured q-block's builder: which nodes share one joint q (the block itself is
//! compiled and solved in `engine/tree`).

use super::*;

impl Graph {
    /// Declares `members` — latent Categorical nodes, mixtures whose selectors are members too —
    /// one q-block whose q is joint over all their elements and keeps the dependencies among them
    /// (a tree-structured q, Winn §5.3–5.6). The block is solved exactly by a junction tree over the
    /// moralised, triangulated graph of the members' families; it is updated as a unit whenever
    /// any member is scheduled. A node outside the block may read at most one member element per
    /// element of its own (put such a child in the block). Checked fully when compiling.
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let two = g.plate("two", 2);
    /// let a = g.add("a", Categorical { k: 2 }, &[], [cv(vec![0.3, 0.7])]).unwrap();
    /// // Conditional probability tables: row j is p(· | parent = j).
    /// let dir = MomentKind::Dirichlet { k: 2 };
    /// let tb = g.constant("tb", dir, &[two], &[0.9, 0.1, 0.2, 0.8]).unwrap();
    /// let tx = g.constant("tx", dir, &[two], &[0.6, 0.4, 0.1, 0.9]).unwrap();
    /// let b = g.add_mixture("b", Categorical { k: 2 }, &[], &[(a, two)], [p(tb)]).unwrap();
    /// let x = g.add_mixture("x", Categorical { k: 2 }, &[], &[(b, two)], [p(tx)]).unwrap();
    /// g.observe(x, &[1.0]).unwrap();
    /// g.joint_q(&[a, b]).unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// vmp.run(&RunOptions::default()).unwrap();
    /// // Everything latent is in the block: the bound is the exact ln p(x = 1).
    /// let evidence: f64 = 0.3 * (0.9 * 0.4 + 0.1 * 0.9) + 0.7 * (0.2 * 0.4 + 0.8 * 0.9);
    /// assert!((vmp.bound() - evidence.ln()).abs() < 1e-12);
    /// ```
    ///
    /// Members that are scalar Gaussian nodes instead form a Gaussian q-block (see
    /// [`Graph::joint_gaussian`]).
    pub fn joint_q(&mut self, members: &[NodeId]) -> Result<(), BuildError> {
        let gaussian = |id: &NodeId| {
            self.nodes
                .get(id.0)
                .is_some_and(|n| matches!(n.body, Body::Stochastic(Dist::Gaussian(_))))
        };
        if members.first().is_some_and(gaussian) {
            return self.joint_gaussian(members);
        }
        let block = self
            .nodes
            .iter()
            .filter_map(|n| n.block)
            .max()
            .map_or(0, |b| b + 1);
        let shape = |node: &str, what: &str| BuildError::Shape {
            node: node.into(),
            what: what.into(),
        };
        if members.is_empty() {
            return Err(shape("joint_q", "a q-block needs at least one member"));
        }
        for (m, id) in members.iter().enumerate() {
            let node = &self.nodes[id.0];
            if members[..m].contains(id) {
                return Err(shape(&node.name, "named twice in one q-block"));
            }
            if node.block.is_some() {
                return Err(shape(&node.name, "is already in another q-block"));
            }
            if !matches!(node.body, Body::Stochastic(Dist::Categorical(_))) {
                return Err(shape(
                    &node.name,
                    "only Categorical nodes can share a tree-structured q-block",
                ));
            }
            if node.map {
                return Err(shape(&node.name, "a q-block member cannot be MAP"));
            }
        }
        for id in members {
            self.nodes[id.0].block = Some(block);
        }
        Ok(())
    }
}

impl Graph {
    /// Declares `members` — latent scalar Gaussian nodes in one plate set, read together by one
    /// `concat` node (in any order) and by nothing else — one q-block whose q is a
    /// full-covariance Gaussian over the concatenated vector at each plate element (Bayesian
    /// ICA's q(x_n) joint over the sources, Lawrence §6.5). Solved by `engine/joint_gaussian`;
    /// updated as a unit whenever any member is scheduled. Checked fully when compiling.
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let n = g.plate("n", 4);
    /// let a = g.add("a", Gaussian, &[n], [c(0.0), c(1.0)]).unwrap();
    /// let b = g.add("b", Gaussian, &[n], [c(0.0), c(2.0)]).unwrap();
    /// let x = g.deterministic("x", Concat { n: 2 }, &[n], [p(a), p(b)]).unwrap();
    /// let w = g.constant("w", MomentKind::Gaussian { d: 2 }, &[], &[1.0, 1.0]).unwrap();
    /// let f = g.deterministic("f", Dot { d: 2 }, &[n], [p(w), p(x)]).unwrap();
    /// let y = g.add("y", Gaussian, &[n], [p(f), c(4.0)]).unwrap();
    /// g.observe(y, &[0.5, -1.0, 2.0, 0.0]).unwrap();
    /// g.joint_q(&[a, b]).unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// vmp.run(&RunOptions::default()).unwrap();
    /// // Everything latent is in the block: the bound is the exact ln p(y), y_n ~ N(0, 1 + ½ + ¼).
    /// let v: f64 = 1.0 + 0.5 + 0.25;
    /// let exact: f64 = [0.5f64, -1.0, 2.0, 0.0]
    ///     .iter()
    ///     .map(|y| -0.5 * (2.0 * std::f64::consts::PI * v).ln() - 0.5 * y * y / v)
    ///     .sum();
    /// assert!((vmp.bound() - exact).abs() < 1e-10);
    /// ```
    pub fn joint_gaussian(&mut self, members: &[NodeId]) -> Result<(), BuildError> {
        let shape = |node: &str, what: &str| BuildError::Shape {
            node: node.into(),
            what: what.into(),
        };
        if members.is_empty() {
            return Err(shape("joint_q", "a q-block needs at least one member"));
        }
        let mut wanted: Vec<usize> = members.iter().map(|m| m.0).collect();
        wanted.sort_unstable();
        if wanted.windows(2).any(|w| w[0] == w[1]) {
            return Err(shape("joint_q", "a member is named twice in one q-block"));
        }
        for &m in &wanted {
            let node = &self.nodes[m];
            if !matches!(node.body, Body::Stochastic(Dist::Gaussian(_))) {
                return Err(shape(
                    &node.name,
                    "a Gaussian q-block's members are all scalar Gaussian nodes",
                ));
            }
            if node.block.is_some() {
                return Err(shape(&node.name, "is already in another q-block"));
            }
        }
        // The concatenation that reads exactly the members.
        let x = (0..self.nodes.len()).find(|&i| {
            let n = &self.nodes[i];
            let Body::Deterministic(Factor::Concat(_)) = n.body else {
                return false;
            };
            let mut read: Vec<usize> = n
                .parents
                .iter()
                .filter_map(|e| match e.source {
                    Source::Node(p) => Some(p),
                    Source::Const(_) => None,
                })
                .collect();
            read.sort_unstable();
            read == wanted && n.parents.len() == wanted.len()
        });
        let Some(x) = x else {
            return Err(shape(
                &self.nodes[wanted[0]].name,
                "a Gaussian q-block's members must be exactly the parts of one `concat`",
            ));
        };
        if self.nodes[x].joint_gaussian {
            return Err(shape(&self.nodes[x].name, "is already a Gaussian q-block"));
        }
        self.nodes[x].joint_gaussian = true;
        Ok(())
    }
}

impl Graph {
    /// Keeps `node`'s q factorised over its elements where the engine would otherwise make it
    /// joint automatically: the weights `W[K] over D` of a softmax regression
    /// `Categorical(softmax(W @ x))` get one Gaussian q over all K·D of them (engine module
    /// `softmax_joint`) unless declared mean-field here (then each class's q is its own, the
    /// per-class q of Winn (2.19), whose sds are too small: see the guide's chapter 12).
    pub fn mean_field(&mut self, node: NodeId) -> Result<(), BuildError> {
        let Some(n) = self.nodes.get_mut(node.0) else {
            return Err(BuildError::Shape {
                node: format!("#{}", node.0),
                what: "no such node".into(),
            });
        };
        n.mean_field = true;
        Ok(())
    }
}
