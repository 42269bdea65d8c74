//! Sums over a node's elements kept in the cache (`NodeCache`) until an input changes: a
//! mixture's component priors and statistics Wᵀ U, its scores, each element group's Σ u, a node's
//! own part of the bound. Formed from the per-element functions of `elements`, their arrays from
//! the cache's pool (module `pool`).

use super::*;

/// [`component_priors`] of `config_only` mixture node `id`, from the cache when valid.
pub(super) fn cached_component_priors<D: ExpFamily>(
    d: &D,
    cache: &Cache,
    nodes: &[Node],
    id: usize,
) -> pool::Pair {
    cached(
        cache,
        id,
        |e| &mut e.priors,
        || {
            let c = &nodes[id];
            cache
                .pool
                .pair_with(c.configs * c.period * c.len, c.configs, |theta, a| {
                    component_priors_into(d, nodes, c, theta, a)
                })
        },
    )
}

/// The entry of node `id` that `field` selects, from the cache when valid, else computed and kept.
pub(super) fn cached<T: Clone>(
    cache: &Cache,
    id: usize,
    field: fn(&mut NodeCache) -> &mut Option<T>,
    compute: impl FnOnce() -> T,
) -> T {
    let mut guard = cache.lock().expect("cache lock");
    if let Some(v) = guard.get_mut(&id).and_then(|e| field(e).clone()) {
        return v;
    }
    drop(guard);
    let v = compute();
    guard = cache.lock().expect("cache lock");
    *field(guard.entry(id).or_default()) = Some(v.clone());
    v
}

/// S = Wᵀ U and the totals of W for mixture node `id`.
pub(super) fn cached_stats(cache: &Cache, nodes: &[Node], id: usize) -> pool::Pair {
    cached(
        cache,
        id,
        |e| &mut e.stats,
        || {
            let c = &nodes[id];
            let w = mixture_weights(nodes, c);
            let len = c.period * c.len;
            cache
                .pool
                .pair_with(c.configs * len, c.configs, |s, totals| {
                    kernels::weighted_sums_into(&w, c.configs, &c.q.u, len, s, totals)
                })
        },
    )
}

/// L for mixture node `id`.
pub(super) fn cached_scores<D: ExpFamily>(
    d: &D,
    cache: &Cache,
    nodes: &[Node],
    id: usize,
) -> Arc<Vec<f64>> {
    cached(
        cache,
        id,
        |e| &mut e.scores,
        || Arc::new(component_scores(d, nodes, &nodes[id])),
    )
}

/// Σ u and the number of participating elements of each element group of node `id`.
pub(super) fn cached_group_sums(cache: &Cache, nodes: &[Node], id: usize) -> pool::Pair {
    cached(
        cache,
        id,
        |e| &mut e.group_sums,
        || {
            let c = &nodes[id];
            let (group, reps) = c.groups.as_ref().expect("group sums of a grouped node");
            // Fixed chunks summed in order (the same bits for any thread count); one chunk when
            // the per-chunk sums would be large (many groups).
            let chunk = if reps.len() * c.len <= 1 << 12 {
                kernels::elements_per_chunk(c.len)
            } else {
                c.n.max(1)
            };
            let add_chunk = |ch: usize, sums: &mut [f64], counts: &mut [f64]| {
                let range = ch * chunk..((ch + 1) * chunk).min(c.n);
                for e in range.filter(|&e| c.participates(e)) {
                    let g = group[e] as usize;
                    counts[g] += 1.0;
                    kernels::add_into(
                        &mut sums[g * c.len..(g + 1) * c.len],
                        &c.q.u[e * c.len..(e + 1) * c.len],
                    );
                }
            };
            let (values, groups) = (reps.len() * c.len, reps.len());
            let chunks = c.n.div_ceil(chunk);
            if chunks <= 1 {
                // One chunk: its sums formed in place (`fill` hands out zeros), then added to
                // zeros as the partial sums below are (0 + x: a −0 sum becomes +0, as there).
                return cache.pool.pair_with(values, groups, |sums, counts| {
                    (0..chunks).for_each(|ch| add_chunk(ch, sums, counts));
                    sums.iter_mut().for_each(|v| *v += 0.0);
                    counts.iter_mut().for_each(|v| *v += 0.0);
                });
            }
            let partials: Vec<(Vec<f64>, Vec<f64>)> = map_chunks(chunks, |ch| {
                let mut sums = vec![0.0; values];
                let mut counts = vec![0.0; groups];
                add_chunk(ch, &mut sums, &mut counts);
                (sums, counts)
            });
            cache.pool.pair_with(values, groups, |sums, counts| {
                for (s, n) in partials {
                    kernels::add_into(sums, &s);
                    kernels::add_into(counts, &n);
                }
            })
        },
    )
}

/// Σ of `own_term` over node `id`'s participating elements (chunks in parallel, summed in order).
pub(super) fn cached_own(cache: &Cache, nodes: &[Node], id: usize) -> f64 {
    cached(
        cache,
        id,
        |e| &mut e.own,
        || {
            let c = &nodes[id];
            let chunk = kernels::elements_per_chunk(c.len);
            kernels::sum_chunks(c.n.div_ceil(chunk), |ch| {
                // One row of scratch per chunk (a fused index's φ), not one per element.
                let mut row = Vec::new();
                (ch * chunk..((ch + 1) * chunk).min(c.n))
                    .filter(|&e| c.participates(e))
                    .map(|e| own_term(c, e, &mut row))
                    .sum::<f64>()
            })
        },
    )
}
