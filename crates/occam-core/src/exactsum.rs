//! Exact sums of floats, rounded once: the sum of the shards' messages to a global and of their
//! local bound terms ([`crate::engine::Sharded`], the CLI's `--shards` and `--stream` fits).
//!
//! Plain addition rounds at every step, so a sum over shards depends on their order and grouping
//! in its last bits. Here nothing is rounded until the end: each sum is held as a
//! non-overlapping expansion (Shewchuk, "Adaptive precision floating-point arithmetic and fast
//! robust geometric predicates", 1997: "Grow-Expansion" with zero elimination, each step Knuth's
//! two-sum after ordering by magnitude), and the expansion is rounded once, correctly (to
//! nearest, ties to even, as Python's `math.fsum`). The result is the correctly rounded sum of
//! the values, whatever their order or grouping — the same bits as `occam.distributed`, whose
//! workers send such expansions and whose client rounds them once (`python/occam/_exactsum.py`).
//!
//! Edge cases (those of `_exactsum`, each the same whatever the order):
//! - the sum is −0.0 only when every value is −0.0 (as IEEE addition gives), else an exact zero
//!   is +0.0;
//! - an infinite value makes the sum that infinity;
//! - a NaN, or +inf with −inf, is no sum: [`NotASum`];
//! - a partial sum beyond the float range (finite values whose running sum overflows, e.g.
//!   1e308 + 1e308 − 1e308) is [`NotASum::Overflow`], as `math.fsum` raises
//!   ("intermediate overflow"); `_exactsum` instead adds such a column as exact fractions.

use crate::error::RunError;

/// Why values have no sum (or none this module can round).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotASum {
    /// A value is NaN.
    #[error("element {element}: a value is NaN")]
    Nan {
        /// The element (0 for a single sum).
        element: usize,
    },
    /// +inf and −inf among the values.
    #[error("element {element}: values of +inf and -inf")]
    OppositeInfinities {
        /// The element (0 for a single sum).
        element: usize,
    },
    /// A partial sum of finite values is beyond the float range.
    #[error("element {element}: a partial sum of finite values overflows the float range")]
    Overflow {
        /// The element (0 for a single sum).
        element: usize,
    },
    /// A vector of another length than the sum's.
    #[error("a vector of {got} values added to a sum of {expected}")]
    Length {
        /// The sum's length.
        expected: usize,
        /// The vector's.
        got: usize,
    },
}

impl NotASum {
    /// The element without a sum (0 for a single sum or a length mismatch).
    pub fn element(&self) -> usize {
        match *self {
            NotASum::Nan { element }
            | NotASum::OppositeInfinities { element }
            | NotASum::Overflow { element } => element,
            NotASum::Length { .. } => 0,
        }
    }

    /// Why, without the element.
    pub fn reason(&self) -> String {
        match self {
            NotASum::Nan { .. } => "a value is NaN".into(),
            NotASum::OppositeInfinities { .. } => "values of +inf and -inf".into(),
            NotASum::Overflow { .. } => {
                "a partial sum of finite values overflows the float range".into()
            }
            other => other.to_string(),
        }
    }

    /// The error of a reduction whose shards' messages to global `node` have no sum.
    pub fn messages_to(self, node: &str) -> RunError {
        RunError::Numerical {
            node: node.to_string(),
            element: self.element(),
            what: format!("the shards' messages to it have no sum: {}", self.reason()),
        }
    }

    /// The same reason at element `element` of a vector.
    fn at(self, element: usize) -> NotASum {
        match self {
            NotASum::Nan { .. } => NotASum::Nan { element },
            NotASum::OppositeInfinities { .. } => NotASum::OppositeInfinities { element },
            NotASum::Overflow { .. } => NotASum::Overflow { element },
            other => other,
        }
    }
}

/// One exact sum: the values added so far as a non-overlapping expansion (increasing magnitude,
/// no zeros), rounded once by [`ExactSum::rounded`].
#[derive(Clone, Debug, Default)]
pub struct ExactSum {
    partials: Vec<f64>,
    /// The values added so far.
    count: usize,
    /// Every value added so far was −0.0.
    negative_zeros: usize,
    nan: bool,
    plus_inf: bool,
    minus_inf: bool,
    overflow: bool,
}

impl ExactSum {
    /// An empty sum (0.0).
    pub fn new() -> ExactSum {
        ExactSum::default()
    }

    /// Adds `x`, exactly.
    pub fn add(&mut self, x: f64) {
        self.count += 1;
        if !x.is_finite() {
            if x.is_nan() {
                self.nan = true;
            } else if x > 0.0 {
                self.plus_inf = true;
            } else {
                self.minus_inf = true;
            }
            return;
        }
        if x == 0.0 {
            self.negative_zeros += usize::from(x.is_sign_negative());
            return;
        }
        if self.overflow {
            return;
        }
        // Grow-Expansion (Shewchuk 1997, Theorem 10) with zero elimination: x added to each
        // partial in turn by two-sum (hi + lo = x + y exactly, for |x| ≥ |y|).
        let mut x = x;
        let mut i = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        self.partials.truncate(i);
        if !x.is_finite() {
            self.overflow = true;
            self.partials.clear();
        } else if x != 0.0 {
            self.partials.push(x);
        }
    }

    /// The sum, correctly rounded (to nearest, ties to even); see the module docs for the edge
    /// cases.
    pub fn rounded(&self) -> Result<f64, NotASum> {
        let element = 0;
        if self.nan {
            return Err(NotASum::Nan { element });
        }
        match (self.plus_inf, self.minus_inf) {
            (true, true) => return Err(NotASum::OppositeInfinities { element }),
            (true, false) => return Ok(f64::INFINITY),
            (false, true) => return Ok(f64::NEG_INFINITY),
            (false, false) => {}
        }
        if self.overflow {
            return Err(NotASum::Overflow { element });
        }
        if self.count > 0 && self.negative_zeros == self.count {
            return Ok(-0.0);
        }
        Ok(round(&self.partials))
    }
}

/// The correctly rounded value of a non-overlapping expansion `p` (increasing magnitude):
/// added from the largest down while the sum stays exact; where it first is not, the rounding
/// of hi + lo is to nearest, and a tie (lo half an ulp of hi) is broken by the sign of the
/// partials below, which tell which side of the tie the exact sum lies (the final step of
/// CPython's `math.fsum`, "msum").
fn round(p: &[f64]) -> f64 {
    let Some((&top, rest)) = p.split_last() else {
        return 0.0;
    };
    let mut hi = top;
    let mut lo = 0.0;
    let mut n = rest.len();
    while n > 0 {
        n -= 1;
        let x = hi;
        let y = p[n];
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

/// The correctly rounded sum of `values` (the module docs).
pub fn exact_sum(values: impl IntoIterator<Item = f64>) -> Result<f64, NotASum> {
    let mut s = ExactSum::new();
    values.into_iter().for_each(|x| s.add(x));
    s.rounded()
}

/// Element-wise exact sums of vectors of one length.
#[derive(Clone, Debug)]
pub struct ExactSums {
    sums: Vec<ExactSum>,
}

impl ExactSums {
    /// `len` empty sums.
    pub fn new(len: usize) -> ExactSums {
        ExactSums {
            sums: vec![ExactSum::new(); len],
        }
    }

    /// Adds `v` element-wise, exactly; [`NotASum::Length`] (and nothing added) when its length
    /// is not the sums'.
    pub fn add(&mut self, v: &[f64]) -> Result<(), NotASum> {
        if v.len() != self.sums.len() {
            return Err(NotASum::Length {
                expected: self.sums.len(),
                got: v.len(),
            });
        }
        self.sums.iter_mut().zip(v).for_each(|(s, &x)| s.add(x));
        Ok(())
    }

    /// Every element's sum, correctly rounded; the first element without one names itself.
    pub fn rounded(&self) -> Result<Vec<f64>, NotASum> {
        self.sums
            .iter()
            .enumerate()
            .map(|(j, s)| s.rounded().map_err(|e| e.at(j)))
            .collect()
    }
}

/// The element-wise correctly rounded sum of `vectors` (one length each, at least one).
pub fn exact_sums<'a>(vectors: impl IntoIterator<Item = &'a [f64]>) -> Result<Vec<f64>, NotASum> {
    let mut it = vectors.into_iter();
    let Some(first) = it.next() else {
        return Ok(Vec::new());
    };
    let mut sums = ExactSums::new(first.len());
    sums.add(first)?;
    for v in it {
        sums.add(v)?;
    }
    sums.rounded()
}

#[cfg(test)]
mod tests;
