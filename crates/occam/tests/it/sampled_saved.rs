//! A saved fit with an importance-sampled node (a Student-t likelihood: sampled; a mixture
//! prior with Gaussian children: q in closed form) loads back: the same posteriors and per-node
//! bound terms, and a warm start from it. A file saved before the sampled node kept its plans
//! and moment variances (4n + 1 entries of `a` instead of 10n + 1) loads too, with the plans
//! chosen again.

use occam::saved::SavedFit;
use occam::{DataSet, Fitted, Model, Settings};

const T_MODEL: &str = "plates N from data y\nmu ~ Gaussian(1, 0.1)\n\
                       y[N] ~ StudentT(nu = 3, scale = 0.8, mean = mu)\nobserve y\n";
const SPIKE: &str = "plates N from data y\nlam ~ Gamma(2, 2)\n\
                     mu ~ GaussianMixture2(0.9, 0, 1000, 0, 1)\ny[N] ~ Gaussian(mu, lam)\nobserve y\n";
const Y: [f64; 6] = [2.1, 1.7, 9.0, 2.4, -6.0, 1.9];

fn data() -> DataSet {
    let mut d = DataSet::new();
    d.insert_array("y", Y.len(), 1, Y.to_vec(), None).unwrap();
    d
}

fn settings() -> Settings {
    Settings {
        seed: 3,
        ..Settings::default()
    }
}

fn round_trip(src: &str) -> (Fitted, SavedFit) {
    let fit = Model::from_source("s.occam", src, &data())
        .unwrap()
        .fit(&settings())
        .unwrap();
    let back = SavedFit::from_json("fit.json", &fit.saved().to_json()).unwrap();
    assert_eq!(back, fit.saved());
    let loaded = Fitted::from_saved(&back).unwrap();
    assert_eq!(loaded.posteriors(), fit.posteriors(), "{src}");
    assert_eq!(
        loaded.outcome().node_bounds,
        fit.outcome().node_bounds,
        "{src}"
    );
    // A warm start on the same data from the saved q: runs and stays at the fit's bound (the
    // Student-t estimate is redrawn, so to its Monte Carlo error only).
    let warm = Model::from_source("s.occam", src, &data())
        .unwrap()
        .fit_from(&settings(), &back, &mut ())
        .unwrap();
    assert!(
        (warm.bound() - fit.bound()).abs() < 0.05,
        "{src}: warm {} against {}",
        warm.bound(),
        fit.bound()
    );
    (fit, back)
}

#[test]
fn a_saved_sampled_fit_loads_back() {
    round_trip(T_MODEL);
    round_trip(SPIKE);
}

#[test]
fn a_fit_saved_before_the_plans_loads_with_them_unset() {
    let (fit, mut back) = round_trip(T_MODEL);
    let node = back.nodes.iter_mut().find(|n| n.name == "mu").unwrap();
    // `mu` is one element; the current layout keeps 10 entries per element, the key and the base.
    let n = 1;
    assert_eq!(node.a.len(), 10 * n + 2, "the current layout");
    node.a.truncate(4 * n + 1);
    let loaded = Fitted::from_saved(&back).unwrap();
    assert_eq!(loaded.posteriors(), fit.posteriors());
    let warm = Model::from_source("s.occam", T_MODEL, &data())
        .unwrap()
        .fit_from(&settings(), &back, &mut ())
        .unwrap();
    assert!((warm.bound() - fit.bound()).abs() < 0.05);
    // Any other length is refused with the node's name.
    let node = back.nodes.iter_mut().find(|n| n.name == "mu").unwrap();
    node.a.pop();
    let e = Fitted::from_saved(&back).err().unwrap().to_string();
    assert!(e.contains("mu"), "{e}");
}

/// A mixture prior in closed form is `Exact` under Gaussian children (their terms read only ⟨x⟩
/// and ⟨x²⟩), but not under a log-link Poisson child, whose ⟨e^x⟩ is taken under the Gaussian
/// with q's two moments rather than under the mixture q: the node, and so the total, say
/// `Approximate` there.
#[test]
fn a_closed_form_prior_is_exact_only_under_children_linear_in_its_moments() {
    use occam::quality::BoundQuality;
    let kind = |src: &str, y: &[f64]| {
        let mut d = DataSet::new();
        d.insert_array("y", y.len(), 1, y.to_vec(), None).unwrap();
        let f = Model::from_source("k.occam", src, &d)
            .unwrap()
            .fit(&settings())
            .unwrap();
        let mu = f
            .outcome()
            .node_qualities
            .iter()
            .find(|(n, _)| n == "mu")
            .map(|(_, q)| *q)
            .unwrap();
        (mu, f.outcome().bound_quality)
    };
    let gaussian = "plates N from data y\nmu ~ GaussianMixture2(0.5, 0, 4, 1, 4)\n\
                    y[N] ~ Gaussian(mu, 2)\nobserve y\n";
    assert_eq!(
        kind(gaussian, &[0.4, 1.1, 0.7]),
        (BoundQuality::Exact, BoundQuality::Exact)
    );
    let poisson = "plates N from data y\nmu ~ GaussianMixture2(0.5, 0, 4, 1, 4)\n\
                   y[N] ~ Poisson(exp(mu))\nobserve y\n";
    let (node, total) = kind(poisson, &[1.0, 3.0, 2.0]);
    assert_eq!(node, BoundQuality::Approximate);
    assert_ne!(total, BoundQuality::Exact);
}
