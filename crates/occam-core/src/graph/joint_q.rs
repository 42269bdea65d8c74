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
    pub fn joint_q(&mut self, members: &[NodeId]) -> Result<(), BuildError> {
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
