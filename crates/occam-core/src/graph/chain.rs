//! The chain q-blocks' builders: a discrete or Gaussian Markov chain (with inputs) as one node
//! over the sequence plates and the time plate (the chains themselves are compiled and solved in
//! `engine/chain`).

use super::*;
use crate::network::{Chain, ChainKind};

/// A discrete Markov chain over a time plate: z_0 ~ Categorical(p0), z_t | z_{t−1} ~
/// Categorical(A[z_{t−1}]), one independent chain per element of the node's other plates.
#[derive(Clone, Debug)]
pub struct MarkovChain {
    /// Number of states K.
    pub k: usize,
    /// The time plate (steps); its size is the longest sequence's length.
    pub time: PlateId,
    /// Length of each sequence (row-major over the other plates), each at most the time plate's
    /// size; `None`: every sequence is as long as the time plate. Steps beyond a sequence's end
    /// are not part of the model: children must leave them missing.
    pub lengths: Option<Vec<usize>>,
}

/// A Gaussian Markov chain (linear dynamical system) over a time plate, one independent chain per
/// element of the node's other plates. Parents: initial mean (Gaussian D-vector), initial precision
/// (Wishart D×D), dynamics (D rows, each a Gaussian D-vector, in a plate of size D: row i is
/// a_i with ⟨x_{t,i}⟩ = a_iᵀ x_{t−1}), noise precisions (D Gamma in a plate of size D); each may be
/// a constant.
#[derive(Clone, Debug)]
pub struct GaussianMarkovChain {
    /// State dimension D.
    pub d: usize,
    /// The time plate; its size is the longest sequence's length.
    pub time: PlateId,
    /// Length of each sequence (`None`: all as long as the time plate); see [`MarkovChain`].
    pub lengths: Option<Vec<usize>>,
}

/// What a Gaussian chain's four state slots take: initial mean and precision, the dynamics' rows
/// (one Gaussian d-vector per state dimension) and the noise precisions (one Gamma per dimension).
pub(crate) fn state_slots(d: usize) -> [SlotInput; 4] {
    let g = MomentKind::Gaussian { d };
    [
        SlotInput::single(g),
        SlotInput::single(MomentKind::Wishart { d }),
        SlotInput { kind: g, stack: d },
        SlotInput {
            kind: MomentKind::Gamma,
            stack: d,
        },
    ]
}

impl Graph {
    /// Adds chain node `name` over `plates` and the time plate (last), with lengths checked and
    /// parent edges mapping each sequence to its parents' elements.
    #[allow(clippy::too_many_arguments)]
    fn add_chain(
        &mut self,
        name: &str,
        kind: ChainKind,
        moments: MomentKind,
        time: PlateId,
        lengths: Option<Vec<usize>>,
        plates: &[PlateId],
        selectors: &[(NodeId, PlateId)],
        parents: Vec<ParentSpec>,
        inputs: &[SlotInput],
        names: &[&str],
    ) -> Result<NodeId, BuildError> {
        let shape = |what: String| BuildError::Shape {
            node: name.into(),
            what,
        };
        if plates.contains(&time) {
            return Err(shape(format!(
                "the time plate `{}` is also one of the sequence plates",
                self.plates[time.0].0
            )));
        }
        let steps = self.plates[time.0].1;
        let seqs: usize = plates.iter().map(|p| self.plates[p.0].1).product();
        let lengths = lengths.unwrap_or_else(|| vec![steps; seqs]);
        if lengths.len() != seqs {
            return Err(shape(format!(
                "{} sequence length(s) given for {seqs} sequence(s)",
                lengths.len()
            )));
        }
        if let Some((s, l)) = lengths.iter().enumerate().find(|(_, &l)| l > steps) {
            return Err(shape(format!(
                "sequence {s} has length {l}, longer than the time plate `{}` ({steps})",
                self.plates[time.0].0
            )));
        }
        let chain = Chain {
            kind,
            steps,
            lengths,
            inputs: Vec::new(),
            n_inputs: 0,
        };
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        // Edges map the sequences (the node's plates without time) to parent elements; selectors
        // (per-sequence Categoricals) are read per sequence too, so one that varies along time is
        // refused by the plate check.
        let id = self.add_node(
            name,
            Body::Chain(chain),
            moments,
            plates,
            selectors,
            parents,
            inputs,
            &names,
            &vec![false; inputs.len()],
        )?;
        let node = &mut self.nodes[id.0];
        node.plates.push(time.0);
        node.axes.push(crate::plate::Axis {
            id: time.0,
            size: steps,
        });
        node.n = seqs * steps;
        Ok(id)
    }

    /// Adds a Markov-chain q-block `name` over `plates` (the sequences) and the time plate.
    /// `parents` are the initial probabilities p0 (Dirichlet over K, or a constant) and the
    /// transition matrix A (a Dirichlet in a plate of size K, row j = transitions from state j, or a
    /// K×K row-major constant). The node's moments are per-step Categorical. Its q starts from
    /// its [`Init`]: `Init::Prior` (the default: the chain given its parents' initial moments, no
    /// children's messages yet) or `Init::Random` (a path drawn from the chain's prior).
    /// [`Graph::markov_chain_mixture`] makes the parameters a mixture.
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let t = g.plate("T", 6);
    /// let k = g.plate("K", 2);
    /// let chain = MarkovChain { k: 2, time: t, lengths: None };
    /// let a = g.add("A", Dirichlet { concentration: vec![1.0; 2] }, &[k], []).unwrap();
    /// let z = g.markov_chain("z", chain, &[], [cv(vec![0.5, 0.5]), p(a)]).unwrap();
    /// let mu = g.constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &[-1.0, 1.0]).unwrap();
    /// let x = g.add_mixture("x", Gaussian, &[t], &[(z, k)], [p(mu), c(4.0)]).unwrap();
    /// g.observe(x, &[-1.1, -0.9, 1.2, 0.8, 1.1, -1.0]).unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// vmp.run(&RunOptions::default()).unwrap();
    /// assert_eq!(vmp.viterbi(z).unwrap()[0], [0, 0, 1, 1, 1, 0]);
    /// ```
    pub fn markov_chain(
        &mut self,
        name: &str,
        chain: MarkovChain,
        plates: &[PlateId],
        parents: [ParentSpec; 2],
    ) -> Result<NodeId, BuildError> {
        self.markov_chain_mixture(name, chain, plates, &[], parents)
    }

    /// A Markov chain whose parameters are a mixture: each `(index, plate)` is a Categorical over
    /// `plate`, per sequence (its plates within `plates`), that picks the element of `plate` the
    /// parents are read at — `A[M, K]` with index `c[S]` over M gives sequence s the transition
    /// matrix `A[c_s]` (and `p0[M]` the initial probabilities `p0[c_s]`; a parent without the
    /// plate is shared). In q the chain sees Σ_m q(c_s = m)⟨ln A_m⟩, A_m gets q(c_s = m)·ξ_s and
    /// c_s gets ⟨ln p(z_s | A_m)⟩ per m (Winn (2.52)–(2.54) with the chain as the mixture's
    /// component). An index that varies along the time plate is refused.
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let (s, t, m, k) = (g.plate("S", 2), g.plate("T", 4), g.plate("M", 2), g.plate("K", 2));
    /// let regime = g.add("c", Categorical { k: 2 }, &[s], [cv(vec![0.5, 0.5])]).unwrap();
    /// let a = g.add("A", Dirichlet { concentration: vec![1.0; 2] }, &[m, k], []).unwrap();
    /// let chain = MarkovChain { k: 2, time: t, lengths: None };
    /// let z = g
    ///     .markov_chain_mixture("z", chain, &[s], &[(regime, m)], [cv(vec![0.5, 0.5]), p(a)])
    ///     .unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// vmp.run(&RunOptions::default()).unwrap();
    /// assert_eq!(vmp.chain_lengths(z).unwrap(), [4, 4]);
    /// ```
    pub fn markov_chain_mixture(
        &mut self,
        name: &str,
        chain: MarkovChain,
        plates: &[PlateId],
        index: &[(NodeId, PlateId)],
        parents: [ParentSpec; 2],
    ) -> Result<NodeId, BuildError> {
        let MarkovChain { k, time, lengths } = chain;
        if k < 1 {
            return Err(BuildError::Shape {
                node: name.into(),
                what: "a Markov chain needs at least one state".into(),
            });
        }
        let dir = MomentKind::Dirichlet { k };
        let inputs = [
            SlotInput::single(dir),
            SlotInput {
                kind: dir,
                stack: k,
            },
        ];
        self.add_chain(
            name,
            ChainKind::Discrete { k },
            MomentKind::Categorical { k },
            time,
            lengths,
            plates,
            index,
            parents.into(),
            &inputs,
            &["initial", "transition"],
        )
    }

    /// Adds a Gaussian Markov chain q-block `name` over `plates` (the sequences) and the time
    /// plate; `parents` = [initial mean, initial precision, dynamics rows, noise precisions]. The
    /// node's moments are per-step Gaussian [x, col(xxᵀ)].
    pub fn gaussian_markov_chain(
        &mut self,
        name: &str,
        chain: GaussianMarkovChain,
        plates: &[PlateId],
        parents: [ParentSpec; 4],
    ) -> Result<NodeId, BuildError> {
        let GaussianMarkovChain { d, time, lengths } = chain;
        if d < 1 {
            return Err(BuildError::Shape {
                node: name.into(),
                what: "a Gaussian Markov chain needs a state dimension of at least 1".into(),
            });
        }
        let g = MomentKind::Gaussian { d };
        let inputs = state_slots(d);
        self.add_chain(
            name,
            ChainKind::Gaussian { d },
            g,
            time,
            lengths,
            plates,
            &[],
            parents.into(),
            &inputs,
            &["initial_mean", "initial_precision", "dynamics", "noise"],
        )
    }

    /// A Gaussian Markov chain with observed inputs (controls): x_t = A x_{t−1} + B u_t + noise
    /// for t ≥ 1 (u_0 is not used). `inputs` holds P = `n_inputs` values per step, sequences ×
    /// steps × P (row-major, the time plate's size per sequence); `parents` = those of
    /// [`Graph::gaussian_markov_chain`] and B's rows (D rows in a plate of size D, each a Gaussian
    /// P-vector, or a D×P row-major constant).
    pub fn gaussian_markov_chain_with_inputs(
        &mut self,
        name: &str,
        chain: GaussianMarkovChain,
        plates: &[PlateId],
        n_inputs: usize,
        inputs: &[f64],
        parents: [ParentSpec; 5],
    ) -> Result<NodeId, BuildError> {
        let GaussianMarkovChain { d, time, lengths } = chain;
        let shape = |what: String| BuildError::Shape {
            node: name.into(),
            what,
        };
        if d < 1 || n_inputs < 1 {
            return Err(shape(
                "a Gaussian Markov chain with inputs needs a state and an input dimension of at \
                 least 1"
                    .into(),
            ));
        }
        let seqs: usize = plates.iter().map(|p| self.plate_info(*p).1).product();
        let want = seqs * self.plate_info(time).1 * n_inputs;
        if inputs.len() != want {
            return Err(shape(format!(
                "{} input value(s) given, {want} needed ({seqs} sequence(s) × {} step(s) × \
                 {n_inputs})",
                inputs.len(),
                self.plate_info(time).1
            )));
        }
        if let Some(e) = inputs.iter().position(|v| !v.is_finite()) {
            return Err(BuildError::Value {
                node: name.into(),
                element: e,
                why: format!("input {} is not a finite number", inputs[e]),
            });
        }
        let g = MomentKind::Gaussian { d };
        let [mean0, precision0, dynamics, noise] = state_slots(d);
        let control = SlotInput {
            kind: MomentKind::Gaussian { d: n_inputs },
            stack: d,
        };
        let slots = [mean0, precision0, dynamics, noise, control];
        let id = self.add_chain(
            name,
            ChainKind::Gaussian { d },
            g,
            time,
            lengths,
            plates,
            &[],
            parents.into(),
            &slots,
            &[
                "initial_mean",
                "initial_precision",
                "dynamics",
                "noise",
                "control",
            ],
        )?;
        if let Body::Chain(ch) = &mut self.nodes[id.0].body {
            ch.inputs = inputs.to_vec();
            ch.n_inputs = n_inputs;
        }
        Ok(id)
    }
}
