//! States moved between replicas: the globals' q ([`GlobalState`], also as bytes for other
//! processes), and a single-process model's state cut into shards (the same start for a sharded
//! and a single-process fit).

use super::*;

/// The q of named latent nodes (φ, u, A of each element): the globals, and for a shard's start
/// its rows of the locals ([`Vmp::rows_state`]).
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalState {
    nodes: Vec<(String, NodeState)>,
}

impl GlobalState {
    /// The state as bytes: per node its name and φ, u, A (lengths as u64, values as f64, all
    /// little-endian) — 8·(3 + Σ lengths) bytes plus the names.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let word = |out: &mut Vec<u8>, w: u64| out.extend_from_slice(&w.to_le_bytes());
        word(&mut out, self.nodes.len() as u64);
        for (name, q) in &self.nodes {
            word(&mut out, name.len() as u64);
            out.extend_from_slice(name.as_bytes());
            for part in [&q.phi, &q.u, &q.a] {
                word(&mut out, part.len() as u64);
                for v in part.iter() {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        out
    }

    /// Reads [`GlobalState::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<GlobalState, SplitError> {
        let mut r = Reader { bytes, at: 0 };
        let count = r.word()?;
        let mut nodes = Vec::with_capacity(count.min(1 << 16));
        for _ in 0..count {
            let len = r.word()?;
            let name = String::from_utf8(r.take(len)?.to_vec()).map_err(|_| Reader::bad())?;
            let mut parts = [Vec::new(), Vec::new(), Vec::new()];
            for part in &mut parts {
                let len = r.word()?;
                let raw = r.take(len.checked_mul(8).ok_or_else(Reader::bad)?)?;
                *part = raw
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect();
            }
            let [phi, u, a] = parts;
            nodes.push((name, NodeState { phi, u, a }));
        }
        if r.at != bytes.len() {
            return Err(Reader::bad());
        }
        Ok(GlobalState { nodes })
    }

    /// The number of f64 values the state holds.
    pub fn values(&self) -> usize {
        self.nodes
            .iter()
            .map(|(_, q)| q.phi.len() + q.u.len() + q.a.len())
            .sum()
    }
}

/// A cursor over the bytes of a [`GlobalState`].
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bad() -> SplitError {
        SplitError::Mismatch("truncated or malformed global state bytes".into())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], SplitError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(Self::bad)?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn word(&mut self) -> Result<usize, SplitError> {
        let b: [u8; 8] = self.take(8)?.try_into().expect("8 bytes");
        usize::try_from(u64::from_le_bytes(b)).map_err(|_| Self::bad())
    }
}

impl Vmp {
    /// The q of every latent global (its block's snapshot).
    pub fn global_state(&self, split: &Split) -> GlobalState {
        let nodes = (0..self.nodes.len())
            .filter(|&i| !split.local[i] && self.nodes[i].has_latent())
            .map(|i| {
                let q = match self.block_of(i) {
                    Some(b) => b.snapshot(self, i),
                    None => self.nodes[i].q.clone(),
                };
                (self.nodes[i].name.clone(), q)
            })
            .collect();
        GlobalState { nodes }
    }

    /// Puts a [`Vmp::global_state`] (of any replica) into this one and refreshes what reads it.
    pub fn set_global_state(
        &mut self,
        split: &Split,
        state: &GlobalState,
    ) -> Result<(), SplitError> {
        if let Some((name, _)) = state.nodes.iter().find(|(name, _)| {
            self.nodes
                .iter()
                .position(|n| n.name == *name)
                .is_none_or(|i| split.local[i])
        }) {
            return Err(SplitError::Mismatch(format!("no latent global `{name}`")));
        }
        self.set_state(split, state)
    }

    /// The state of a shard of rows `from..to` of this model (compiled on all the data, or on
    /// more rows than the shard): every latent global, and those rows of every latent local node
    /// (the data plate first in each, as a shard holds whole rows). The state must be per
    /// element, as [`Vmp::initialize`] leaves it (a gated block's x: its rows' means and sums,
    /// `gated_linear/rows.rs`). With [`Vmp::set_state`], it gives a sharded fit
    /// the start of a single-process one.
    pub fn rows_state(
        &self,
        split: &Split,
        from: usize,
        to: usize,
    ) -> Result<GlobalState, SplitError> {
        let rows = self.plate_size(&split.plate);
        let p = self.plates.iter().position(|(n, _)| *n == split.plate);
        let mut state = self.global_state(split);
        for i in (0..self.nodes.len()).filter(|&i| split.local[i] && self.nodes[i].has_latent()) {
            let node = &self.nodes[i];
            let fail = |why: &str| SplitError::Node {
                node: node.name.clone(),
                plate: split.plate.clone(),
                why: why.to_string(),
            };
            if node.plates.first().copied() != p {
                return Err(fail(
                    "a shard holds whole rows: the data plate must be its first",
                ));
            }
            // A gated block's x keeps its rows' means and sums over rows (`gated_linear/rows.rs`).
            if let Some(cut) = self.gated_rows_state(i, from, to) {
                state.nodes.push((node.name.clone(), cut.map_err(fail)?));
                continue;
            }
            // A started sampled node keeps per-slot arrays and its elements' base index
            // (`sampled/layout.rs`).
            if let Some(cut) = self.sampled_rows_state(i, rows, from, to) {
                state.nodes.push((node.name.clone(), cut.map_err(fail)?));
                continue;
            }
            // Arrays row-major with the data plate outermost (per element, or per sequence of a
            // chain): each row's part is a 1/rows share of each array.
            let q = &node.q;
            if linear::shared::is_shared(node) {
                // One covariance for every element (`linear::shared`): φ = [φ₁ per element, Φ₂],
                // u = [m per element, Σ]; a shard takes its elements' rows and the shared part.
                let d = node.kind.value_len();
                let per = node.n / rows.max(1) * d;
                let (lo, hi) = (from * per, to * per);
                let rest = node.n * d;
                let cut = |v: &[f64]| [&v[lo..hi], &v[rest..]].concat();
                let a_per = q.a.len() / rows.max(1);
                state.nodes.push((
                    node.name.clone(),
                    NodeState {
                        phi: cut(&q.phi),
                        u: cut(&q.u),
                        a: q.a[from * a_per..to * a_per].to_vec(),
                    },
                ));
                continue;
            }
            let whole = |v: &[f64]| rows > 0 && v.len().is_multiple_of(rows);
            let laid_out = whole(&q.phi) && whole(&q.u) && whole(&q.a);
            if !matches!(node.body, Body::Stochastic(_) | Body::Chain(_)) || !laid_out {
                return Err(fail(
                    "its state is not per row (take it right after a start)",
                ));
            }
            if from > to || to > rows {
                return Err(SplitError::Mismatch(format!("rows {from}..{to} of {rows}")));
            }
            let cut = |v: &[f64]| {
                let per = v.len() / rows;
                v[from * per..to * per].to_vec()
            };
            state.nodes.push((
                node.name.clone(),
                NodeState {
                    phi: cut(&q.phi),
                    u: cut(&q.u),
                    a: cut(&q.a),
                },
            ));
        }
        Ok(state)
    }

    /// Puts a state into this replica: a [`Vmp::global_state`], or a shard's
    /// [`Vmp::rows_state`] (whose local rows must be this shard's number of rows); refreshes
    /// what reads it.
    pub fn set_state(&mut self, split: &Split, state: &GlobalState) -> Result<(), SplitError> {
        let mut ids = Vec::with_capacity(state.nodes.len());
        for (name, q) in &state.nodes {
            let i = self
                .nodes
                .iter()
                .position(|n| n.name == *name)
                .filter(|&i| self.nodes[i].has_latent())
                .ok_or_else(|| SplitError::Mismatch(format!("no latent node `{name}`")))?;
            let n = &self.nodes[i];
            let fits = if let Some(fits) = self.gated_state_fits(i, q) {
                fits
            } else if let Some(fits) = self.sampled_state_fits(i, q).filter(|_| split.local[i]) {
                fits
            } else if split.local[i] {
                let d = n.kind.value_len();
                let shared = matches!(n.kind, crate::moments::MomentKind::Gaussian { .. })
                    && q.u.len() == n.n * d + d * d
                    && q.phi.len() == q.u.len()
                    && q.a.len() == n.n;
                shared
                    || (q.phi.len(), q.u.len(), q.a.len())
                        == (n.q.phi.len(), n.q.u.len(), n.q.a.len())
            } else {
                self.global_state_fits(i, q)
            };
            if !fits {
                return Err(SplitError::Mismatch(format!(
                    "the state of `{name}` does not fit its {} elements here",
                    n.n
                )));
            }
            ids.push(i);
        }
        let blocks = self.blocks.clone();
        for (&i, (_, q)) in ids.iter().zip(&state.nodes) {
            match self.block_of[i] {
                Some(b) => blocks[b as usize].restore(self, i, q.clone()),
                None => self.nodes[i].q = q.clone(),
            }
        }
        for i in 0..self.nodes.len() {
            if matches!(self.nodes[i].body, Body::Deterministic(_)) {
                self.refresh(i);
            }
        }
        self.changed_all();
        self.initialized = true;
        Ok(())
    }

    /// Whether a global's snapshot `q` fits node i (its moments' length, unless either keeps none;
    /// a gated block's W in either of its layouts, whichever this replica holds now).
    fn global_state_fits(&self, i: usize, q: &NodeState) -> bool {
        if let Some(fits) = self.gated_w_state_fits(i, [q.phi.len(), q.u.len(), q.a.len()]) {
            return fits;
        }
        let own = self.nodes[i].q.u.len();
        q.u.len() == own || own == 0 || q.u.is_empty()
    }
}
