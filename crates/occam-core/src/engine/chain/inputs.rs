//! Inputs (controls) of a Gaussian Markov chain: the builder; the smoother's terms, record sums
//! and messages are in `gaussian` (its module docs give the formulas).

use super::gaussian::GaussianMarkovChain;
use super::*;

impl Graph {
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
        let [mean0, precision0, dynamics, noise] = super::gaussian::state_slots(d);
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
