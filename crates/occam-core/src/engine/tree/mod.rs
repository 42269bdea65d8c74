//! Tree-structured q over discrete variables (Winn §5.3–5.6, Case I): the user names Categorical
//! nodes whose q is one joint distribution ([`Graph::joint_q`]); every element of them is a variable
//! of that q.
//!
//! The block's q is q(x_B) ∝ exp(Σ_v ⟨ln p(x_v | pa_v)⟩ + Σ_v η_v·u(x_v)): one factor per member
//! element (its conditional, with the expectation over everything outside the block — the
//! conditional probability table's Dirichlet rows — and parents inside the block kept as
//! variables, Winn (5.18)), and the summed VMP messages η_v of the children outside the block
//! (2.53). That is the optimal structured update (5.20); when the factors' graph is a tree after
//! moralisation and triangulation, one collect/distribute pass over its junction tree
//! ([`crate::junction`]) gives every marginal exactly (Case I, (5.25)–(5.28)).
//!
//! State: a member's `u` is the marginal of each element, `φ` its logarithm, and `a` holds, per
//! element, the family marginal q(pa = k, x = j) (configurations × K, the table its parents'
//! messages and its bound term need), then one entry: the block's entropy on the first member, 0
//! on the others. Before the first block update (after initialisation) `a` has the ordinary
//! layout and q is the factorised one.
//!
//! Bound: member v's term is Σ_k,j q(pa = k, x = j)(⟨φ_k⟩_j − ⟨A_k⟩) (Winn (2.34)'s prior part with
//! the family's joint weights instead of a product of marginals), and the block's entropy
//! H = Σ cluster entropies − Σ separator entropies (§5.3; the thesis gives no formula) is added
//! once. Children outside the block read one member element each (checked when compiling), so their
//! own terms, which weigh configurations by products of marginals, stay exact.

use super::*;
use crate::junction::{Calibrated, JunctionTree};

mod block;
pub(super) use block::TreeBlock;

/// Largest cluster table a block may need.
const MAX_CLUSTER_ENTRIES: usize = 1 << 22;

/// A compiled tree block.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    /// Member nodes, in node order; the first carries the entropy.
    pub members: Vec<usize>,
    /// The member the schedule updates the block through: the first with latent elements.
    leader: usize,
    /// Per member, per element: its variable (`u32::MAX`: the element takes no part).
    var: Vec<Vec<u32>>,
    /// Each variable's (member, element).
    owners: Vec<(usize, usize)>,
    /// Each family factor's (member, element); factors after these are one unary per variable.
    families: Vec<(usize, usize)>,
    jt: JunctionTree,
}

/// Builds every block from the members' tags, with the checks [`Graph::joint_q`] defers.
pub(super) fn build(nodes: &[Node]) -> Result<Vec<Tree>, BuildError> {
    let count = nodes
        .iter()
        .filter_map(|n| n.block)
        .max()
        .map_or(0, |b| b + 1);
    let mut blocks = Vec::with_capacity(count);
    for b in 0..count {
        let members: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].block == Some(b))
            .collect();
        let shape = |node: &str, what: String| BuildError::Shape {
            node: node.into(),
            what,
        };
        for &c in &members {
            if let Some(s) = nodes[c]
                .selectors
                .iter()
                .find(|s| nodes[s.node].block != Some(b))
            {
                return Err(shape(
                    &nodes[c].name,
                    format!(
                        "is in a q-block but its mixture index `{}` is not; put `{}` in the block",
                        nodes[s.node].name, nodes[s.node].name
                    ),
                ));
            }
        }
        // Children outside the block read at most one block variable per element.
        for (ci, child) in nodes.iter().enumerate() {
            if child.block == Some(b) {
                continue;
            }
            let reads = child
                .selectors
                .iter()
                .filter(|s| nodes[s.node].block == Some(b))
                .count()
                + child
                    .parents
                    .iter()
                    .filter(|e| matches!(e.source, Source::Node(p) if nodes[p].block == Some(b)))
                    .map(|e| e.stack)
                    .sum::<usize>();
            if reads > 1 {
                return Err(shape(
                    &nodes[ci].name,
                    format!(
                        "reads {reads} variables of the q-block of `{}`; add `{}` to the block",
                        nodes[members[0]].name, nodes[ci].name
                    ),
                ));
            }
        }
        let mut var = Vec::with_capacity(members.len());
        let mut owners = Vec::new();
        let mut cards = Vec::new();
        for &c in &members {
            let node = &nodes[c];
            let v: Vec<u32> = (0..node.n)
                .map(|e| {
                    if node.participates(e) {
                        owners.push((c, e));
                        cards.push(node.len);
                        (owners.len() - 1) as u32
                    } else {
                        u32::MAX
                    }
                })
                .collect();
            var.push(v);
        }
        let pos = |node: usize| members.iter().position(|&m| m == node).expect("a member");
        let mut families = Vec::new();
        let mut scopes = Vec::new();
        for (m, &c) in members.iter().enumerate() {
            let node = &nodes[c];
            for e in (0..node.n).filter(|&e| node.participates(e)) {
                let mut scope: Vec<usize> = node
                    .selectors
                    .iter()
                    .map(|s| var[pos(s.node)][s.at(e)] as usize)
                    .collect();
                scope.push(var[m][e] as usize);
                let mut sorted = scope.clone();
                sorted.sort_unstable();
                if sorted.windows(2).any(|w| w[0] == w[1]) {
                    return Err(shape(
                        &node.name,
                        format!("element {e} reads one variable of its q-block twice"),
                    ));
                }
                families.push((c, e));
                scopes.push(scope);
            }
        }
        scopes.extend((0..owners.len()).map(|v| vec![v]));
        let jt = JunctionTree::new(&cards, &scopes, MAX_CLUSTER_ENTRIES).map_err(|big| {
            shape(
                &nodes[members[0]].name,
                format!(
                    "the q-block's junction tree needs a cluster of {} variables ({} table entries, \
                     at most {MAX_CLUSTER_ENTRIES}); make the block smaller",
                    big.vars, big.entries
                ),
            )
        })?;
        let leader = *members
            .iter()
            .find(|&&c| nodes[c].has_latent())
            .unwrap_or(&members[0]);
        blocks.push(Tree {
            leader,
            members,
            var,
            owners,
            families,
            jt,
        });
    }
    Ok(blocks)
}

/// ⟨ln p(x = j | pa = k)⟩ = ⟨φ_k⟩_j − ⟨A_k⟩ of one member element, configurations × K (Categorical
/// moments are one-hot).
struct FamilyTable<'a> {
    nodes: &'a [Node],
    node: &'a Node,
    e: usize,
}

impl DistVisitor for FamilyTable<'_> {
    type Output = Vec<f64>;
    fn visit<D: ExpFamily>(self, d: &D) -> Vec<f64> {
        let (c, k) = (self.node, self.node.len);
        let mut out = Vec::with_capacity(c.configs * k);
        let (mut phi, mut buf) = (vec![0.0; k], Vec::new());
        for q in 0..c.configs {
            let pa = gather(self.nodes, c, self.e * c.configs + q, &mut buf);
            let a = d.prior(&pa[..c.parents.len()], &mut phi);
            out.extend(phi.iter().map(|p| p - a));
        }
        out
    }
}

fn family_table(nodes: &[Node], node: &Node, e: usize) -> Vec<f64> {
    node.dist()
        .expect("members are stochastic")
        .visit(FamilyTable { nodes, node, e })
}

/// Σ p·t over entries of positive probability (an impossible entry's −∞ weight does not count).
fn expect(p: &[f64], t: &[f64]) -> f64 {
    p.iter()
        .zip(t)
        .filter(|(p, _)| **p > 0.0)
        .map(|(p, t)| p * t)
        .sum()
}

/// A member's family tables (configurations × K per element, then the entropy entry), if its q
/// has been set by a block update.
pub(super) fn families(node: &Node) -> Option<&[f64]> {
    let per = node.configs * node.len;
    (node.block.is_some() && node.q.a.len() == node.n * per + 1).then(|| &node.q.a[..node.n * per])
}

impl Vmp {
    /// A q-block member's family marginals q(pa = k, x = j), configurations × K per element
    /// (configurations of its mixture indices in the order of [`Graph::add_mixture`]'s selectors,
    /// the first slowest); `None` for other nodes and before the block's first update.
    pub fn family_marginals(&self, node: NodeId) -> Option<&[f64]> {
        families(&self.nodes[node.0])
    }

    /// Whether the schedule can skip node i: a member other than its block's first (updating any
    /// member updates the whole block).
    pub(super) fn tree_follower(&self, i: usize) -> bool {
        self.nodes[i]
            .block
            .is_some_and(|b| self.trees[b].leader != i)
    }

    /// The structured update of block b (module docs): exact marginals of q(x_B) by junction tree.
    pub(super) fn update_tree(&mut self, b: usize) -> Result<(), RunError> {
        let block = &self.trees[b];
        let nodes = &self.nodes;
        // Unary factors: the messages of children outside the block, and the evidence of observed
        // member elements.
        let mut unary: Vec<Vec<f64>> = Vec::with_capacity(block.owners.len());
        for &c in &block.members {
            let eta = self.child_messages_where(c, &|child| nodes[child].block != Some(b));
            let node = &nodes[c];
            for e in (0..node.n).filter(|&e| node.participates(e)) {
                let mut t = eta[e * node.len..(e + 1) * node.len].to_vec();
                if node.is_observed(e) {
                    let u = &node.q.u[e * node.len..(e + 1) * node.len];
                    t.iter_mut().zip(u).for_each(|(t, u)| *t += u.ln());
                }
                unary.push(t);
            }
            self.recycle(eta);
        }
        let tables: Vec<Vec<f64>> = block
            .families
            .iter()
            .map(|&(c, e)| family_table(nodes, &nodes[c], e))
            .collect();
        let refs: Vec<&[f64]> = tables.iter().chain(&unary).map(|t| t.as_slice()).collect();
        let first = block.members[0];
        let Some(cal) = block.jt.calibrate(&refs) else {
            return Err(self.numerical(
                first,
                0,
                "no joint state of the q-block has positive probability".into(),
            ));
        };
        let states = self.tree_states(b, &cal);
        for (c, state) in states {
            let node = &mut self.nodes[c];
            node.q = state;
            self.changed(c);
            self.refresh_dependents(c);
        }
        Ok(())
    }

    /// The members' new (φ, u, a) from a calibrated tree.
    fn tree_states(&self, b: usize, cal: &Calibrated) -> Vec<(usize, NodeState)> {
        let block = &self.trees[b];
        let entropy = block.jt.entropy(cal);
        let mut fam = 0;
        block
            .members
            .iter()
            .enumerate()
            .map(|(m, &c)| {
                let node = &self.nodes[c];
                let (len, per) = (node.len, node.configs * node.len);
                let (mut phi, mut u) = (node.q.phi.clone(), node.q.u.clone());
                let mut a = vec![0.0; node.n * per + 1];
                for e in 0..node.n {
                    let v = block.var[m][e];
                    if v == u32::MAX {
                        continue;
                    }
                    debug_assert_eq!(block.families[fam], (c, e));
                    a[e * per..(e + 1) * per].copy_from_slice(&block.jt.factor_marginal(cal, fam));
                    fam += 1;
                    if !node.is_observed(e) {
                        let q = block.jt.variable_marginal(cal, v as usize);
                        u[e * len..(e + 1) * len].copy_from_slice(&q);
                        for (p, q) in phi[e * len..(e + 1) * len].iter_mut().zip(&q) {
                            *p = q.ln().max(f64::MIN_POSITIVE.ln());
                        }
                    }
                }
                if m == 0 {
                    a[node.n * per] = entropy;
                }
                (c, NodeState { phi, u, a })
            })
            .collect()
    }

    /// Member i's bound term (module docs); before the first block update, the factorised q's
    /// (prior part weighted by products of marginals, plus the member's own marginal entropies).
    pub(super) fn tree_bound(&self, i: usize) -> f64 {
        let node = &self.nodes[i];
        let per = node.configs * node.len;
        let mut total = 0.0;
        let mut weights = vec![0.0; per];
        let fams = families(node);
        for e in (0..node.n).filter(|&e| node.participates(e)) {
            let table = family_table(&self.nodes, node, e);
            let u = &node.q.u[e * node.len..(e + 1) * node.len];
            let w = match fams {
                Some(f) => &f[e * per..(e + 1) * per],
                None => {
                    for q in 0..node.configs {
                        let wq = config_weight(&self.nodes, node, e, q);
                        for (j, uj) in u.iter().enumerate() {
                            weights[q * node.len + j] = wq * uj;
                        }
                    }
                    if !node.is_observed(e) {
                        total -= expect(u, &u.iter().map(|p| p.ln()).collect::<Vec<_>>());
                    }
                    &weights
                }
            };
            total += expect(w, &table);
        }
        total + fams.map_or(0.0, |_| node.q.a[node.q.a.len() - 1])
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn members_are_checked() {
        let mut g = Graph::new();
        let two = g.plate("two", 2);
        let a = g
            .add("a", Categorical { k: 2 }, &[], [cv(vec![0.5, 0.5])])
            .unwrap();
        let dir = MomentKind::Dirichlet { k: 2 };
        let tb = g
            .constant("tb", dir, &[two], &[0.9, 0.1, 0.2, 0.8])
            .unwrap();
        let b = g
            .add_mixture("b", Categorical { k: 2 }, &[], &[(a, two)], [p(tb)])
            .unwrap();
        let x = g.add("x", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
        let err = g.joint_q(&[a, x]).unwrap_err().to_string();
        assert!(
            err.contains("`x`") && err.contains("only Categorical"),
            "{err}"
        );
        assert!(g
            .joint_q(&[a, a])
            .unwrap_err()
            .to_string()
            .contains("twice"));
        // b's index a is outside b's block.
        g.joint_q(&[b]).unwrap();
        let err = g.compile().err().unwrap().to_string();
        assert!(
            err.contains("`b`") && err.contains("put `a` in the block"),
            "{err}"
        );

        // A child outside the block reading two member variables.
        let mut g = Graph::new();
        let (ka, kb) = (g.plate("KA", 2), g.plate("KB", 2));
        let a = g
            .add("a", Categorical { k: 2 }, &[], [cv(vec![0.5, 0.5])])
            .unwrap();
        let b = g
            .add("b", Categorical { k: 2 }, &[], [cv(vec![0.5, 0.5])])
            .unwrap();
        let table = [0.9, 0.1, 0.2, 0.8, 0.5, 0.5, 0.3, 0.7];
        let t = g
            .constant("t", MomentKind::Dirichlet { k: 2 }, &[ka, kb], &table)
            .unwrap();
        let x = g
            .add_mixture("x", Categorical { k: 2 }, &[], &[(a, ka), (b, kb)], [p(t)])
            .unwrap();
        g.observe(x, &[0.0]).unwrap();
        g.joint_q(&[a, b]).unwrap();
        let err = g.compile().err().unwrap().to_string();
        assert!(
            err.contains("`x`") && err.contains("add `x` to the block"),
            "{err}"
        );
    }
}
