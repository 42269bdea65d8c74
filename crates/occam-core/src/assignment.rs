//! The linear assignment problem: the permutation σ maximising Σ_a m(a, σ(a)) over a square
//! matrix, by the Hungarian method with potentials (Kuhn 1955, Munkres 1957; the O(n³)
//! shortest-augmenting-path form of Jonker & Volgenant 1987). Used to match the components of a
//! mixture's state to those of a fitted q (`occam`'s annealed importance sampling).
//!
//! Written here rather than taken from a crate: `pathfinding`'s `kuhn_munkres`, the well-kept
//! one, requires totally ordered (`Ord`) weights, and the weights here are log-densities (`f64`);
//! scaling them to integers would round away the ties the caller counts.

/// The assignment σ (σ(a) = the column of row a) maximising Σ_a m(a, σ(a)) (entry a·n + σ(a))
/// over an n × n row-major matrix of finite values, and that maximum; `None` if an entry is not
/// finite.
pub fn max_assignment(m: &[f64], n: usize) -> Option<(Vec<usize>, f64)> {
    if m.len() != n * n || m.iter().any(|x| !x.is_finite()) {
        return None;
    }
    if n == 0 {
        return Some((Vec::new(), 0.0));
    }
    // Minimise the cost −m; rows and columns 1-based, 0 the virtual start column.
    let cost = |i: usize, j: usize| -m[(i - 1) * n + (j - 1)];
    let (mut u, mut v) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let (mut delta, mut j1) = (f64::INFINITY, 0);
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0, j) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut sigma = vec![0; n];
    for j in 1..=n {
        sigma[p[j] - 1] = j - 1;
    }
    let total = (0..n).map(|a| m[a * n + sigma[a]]).sum();
    Some((sigma, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The best sum over every permutation of 0..n (Heap's algorithm).
    fn brute(m: &[f64], n: usize) -> f64 {
        let mut p: Vec<usize> = (0..n).collect();
        let score = |p: &[usize]| (0..n).map(|a| m[a * n + p[a]]).sum::<f64>();
        let mut best = score(&p);
        let mut c = vec![0usize; n];
        let mut i = 1;
        while i < n {
            if c[i] < i {
                p.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                best = best.max(score(&p));
                c[i] += 1;
                i = 1;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        best
    }

    #[test]
    fn matches_enumeration_of_every_permutation() {
        // A fixed linear congruential sequence: matrices 1×1 to 7×7, entries of mixed sign and
        // scale (and ties: every entry rounded to a quarter in half of them).
        let mut s: u64 = 12345;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for trial in 0..60 {
            let n = 1 + trial % 7;
            let m: Vec<f64> = (0..n * n)
                .map(|_| {
                    let x = (next() - 0.5) * 10f64.powi((trial % 4) as i32);
                    if trial % 2 == 0 {
                        (x * 4.0).round() / 4.0
                    } else {
                        x
                    }
                })
                .collect();
            let (sigma, total) = max_assignment(&m, n).unwrap();
            let mut seen = sigma.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "a permutation");
            let want = brute(&m, n);
            assert!(
                (total - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "n {n}: {total} vs {want}"
            );
        }
    }

    #[test]
    fn a_non_finite_entry_is_refused() {
        assert!(max_assignment(&[1.0, f64::NEG_INFINITY, 0.0, 2.0], 2).is_none());
        assert!(max_assignment(&[1.0, 2.0, 3.0], 2).is_none());
        assert_eq!(max_assignment(&[], 0), Some((Vec::new(), 0.0)));
    }
}
