"""One initialisation (``n_init=1``) reaches the optimum of five on standardised iris.

Measured before the estimator ended each initialisation with the engine's pruning stage
(K = 10, seeds 0–9, Occam's complete bound): ``n_init=1`` ended 29 nats (Dirichlet distribution)
and 33 nats (Dirichlet process) below ``n_init=5`` on average, up to 58 and 63 nats: k-means' ten
clusters split iris' natural ones into components that VMP does not merge, and under the
stick-breaking prior an empty component left before the occupied ones costs about ln(α0 / N)
≈ −7 nats each.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning

from occam.sklearn import BayesianGaussianMixture

# The largest shortfall of n_init=1 below n_init=5 allowed on any seed (nats).
TOLERANCE = 1.0


@pytest.fixture(scope="module")
def iris():
    x = load_iris().data
    return (x - x.mean(axis=0)) / x.std(axis=0)


@pytest.mark.parametrize("prior_type", ["dirichlet_distribution", "dirichlet_process"])
def test_one_initialisation_reaches_the_optimum_of_five(iris, prior_type):
    def bound(seed, n_init):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return BayesianGaussianMixture(n_components=10, weight_concentration_prior_type=prior_type,
                                           n_init=n_init, random_state=seed, max_iter=1000).fit(iris).lower_bound_

    one = np.array([bound(seed, 1) for seed in range(10)])
    five = np.array([bound(seed, 5) for seed in range(10)])
    print(prior_type, "n_init=1:", np.round(one, 2), "n_init=5:", np.round(five, 2))
    assert np.all(one >= five - TOLERANCE), (one, five)
