"""Errors raise exceptions of occam's hierarchy carrying the CLI's located message; bad input
through Python never crashes."""

import numpy as np
import pytest

import occam
from conftest import TUTORIAL

Y = np.array([1.0, 2.0, 0.5])


def test_syntax_error_is_located(tmp_path):
    path = tmp_path / "m.occam"
    path.write_text("plate N from data y\nmu ~ Gaussian(0, 1\ny[N] ~ Gaussian(mu, 1)\n")
    with pytest.raises(occam.ModelError) as e:
        occam.Model(path)
    assert f"{path}:2:19" in str(e.value) and "expected `)`" in str(e.value)
    assert isinstance(e.value, occam.OccamError) and isinstance(e.value, ValueError)


def test_resolution_errors_raise_at_from_string():
    # Errors in the text itself (unknown distribution or name, a non-conjugate parent) need no
    # data: Model.from_string raises them at once, located, as the guide's example says.
    with pytest.raises(occam.ModelError) as e:
        occam.Model.from_string("plate N from data y\nmu ~ Gausian(0, 1)\ny[N] ~ Gaussian(mu, 1)\n", name="m.occam")
    msg = str(e.value)
    assert "m.occam:2:6" in msg and "unknown distribution `Gausian`" in msg and "did you mean `Gaussian`?" in msg
    with pytest.raises(occam.ModelError, match="m.occam:3:17"):
        occam.Model.from_string("plate N from data y\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(muu, 1)\n", name="m.occam")
    with pytest.raises(occam.ModelError, match="m.occam:3:39"):
        occam.Model.from_string(
            "plate N from data y\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mean = 0, precision = mu)\n", name="m.occam")
    # The guide's example (docs/guide/07-python.md).
    with pytest.raises(occam.ModelError, match="did you mean `Gaussian`"):
        occam.Model.from_string("mu ~ Gausian(0, 1)\n", name="bad.occam")


def test_model_file_with_an_unknown_name_raises_at_once(tmp_path):
    p = tmp_path / "m.occam"
    p.write_text("mu ~ Gaussian(0, 1)\ny ~ Gaussian(muu, 1)\n")
    with pytest.raises(occam.ModelError, match="m.occam:2:14"):
        occam.Model(p)


def test_nan_bounds_raise():
    with pytest.raises(occam.UsageError, match=r"bounds\[0\]"):
        occam.probabilities([float("nan"), 1.0])
    with pytest.raises(occam.UsageError, match=r"priors\[1\]"):
        occam.probabilities([0.0, 1.0], priors=[1.0, float("inf")])


@pytest.mark.parametrize("field", ["hidden", "components", "restarts"])
def test_huge_network_settings_raise_instead_of_panicking(field):
    # These overflowed a capacity computation (pyo3_runtime.PanicException, not an OccamError)
    # or aborted the interpreter allocating (hidden = 2**32).
    x = np.random.default_rng(0).normal(size=(20, 2))
    t = x[:, 0] + 0.1 * x[:, 1]
    for value in [2**64 - 1, 2**32]:
        with pytest.raises(occam.OccamError, match=field):
            occam.nn.BayesianMLP(**{field: value}).fit(x, t)


def test_a_target_whose_spread_overflows_raises():
    x = np.random.default_rng(0).normal(size=(20, 2))
    t = x[:, 0].copy()
    t[3] = -1e308
    with pytest.raises(occam.OccamError, match="overflow"):
        occam.nn.BayesianMLP(restarts=1).fit(x, t)


def test_message_is_what_the_cli_prints(tmp_path):
    # The CLI prints Error::render_plain(); the exception's message is that text.
    m = occam.Model.from_string("plate D = 2\nplate N from data x\nmu[D] ~ Gaussian(0, 1)\nx[N, D] ~ Gaussian(mu, 1)\n",
                                name="m.occam")
    with pytest.raises(occam.ModelError) as e:
        m.fit(data={"x": np.ones((2, 3))})
    msg = str(e.value)
    assert msg.startswith("error: ") and "--> m.occam:4:1" in msg and "data `x` has shape 2 × 3" in msg


def test_data_errors_are_located():
    m = occam.Model(TUTORIAL / "single.occam")
    x = np.zeros((5, 2))
    x[3, 1] = np.inf
    with pytest.raises(occam.DataError, match=r"<array x>:4:2: inf is not a finite number"):
        m.fit(data={"x": x})
    pois = occam.Model.from_string("plate N from data y\nlam ~ Gamma(1, 1)\ny[N] ~ Poisson(lam)\n", name="p.occam")
    with pytest.raises(occam.DataError, match=r"<array y>:2:1: .*-2 is not a non-negative count"):
        pois.fit(data={"y": np.array([1.0, -2.0, 3.0])})


def test_wrong_dtype_raises_type_error():
    m = occam.Model(TUTORIAL / "single.occam")
    for bad in (np.array([["a", "b"]]), np.array([[1 + 2j, 3]]), np.array([[object(), 1]], dtype=object)):
        with pytest.raises(occam.DataTypeError) as e:
            m.fit(data={"x": bad})
        assert isinstance(e.value, TypeError) and "data `x`" in str(e.value)
    with pytest.raises(occam.DataTypeError):
        m.fit(data=[1, 2])
    with pytest.raises(occam.DataTypeError):
        m.fit(data={1: np.ones((3, 2))})
    # Integers and float32 are converted (exactly) to float64.
    a = m.fit(data={"x": np.arange(20).reshape(10, 2)})
    b = m.fit(data={"x": np.arange(20, dtype=np.float64).reshape(10, 2)})
    assert a.bound == b.bound


def test_wrong_shape_raises_value_error():
    m = occam.Model(TUTORIAL / "single.occam")
    with pytest.raises(occam.DataShapeError) as e:
        m.fit(data={"x": np.ones((2, 2, 2))})
    assert isinstance(e.value, ValueError) and "shape (2, 2, 2)" in str(e.value)
    # Non-contiguous views are read in their logical order.
    x = np.asfortranarray(np.random.default_rng(0).standard_normal((30, 2)))
    assert m.fit(data={"x": x}).bound == m.fit(data={"x": np.ascontiguousarray(x)}).bound
    assert m.fit(data={"x": x[::2]}).bound == m.fit(data={"x": np.ascontiguousarray(x[::2])}).bound


def test_nan_where_not_allowed():
    # A covariate (data input) cannot be missing.
    m = occam.Model(TUTORIAL.parents[1] / "examples" / "models" / "regression.occam")
    X = np.ones((4, 2))
    X[1, 0] = np.nan
    with pytest.raises(occam.DataError) as e:
        m.fit(data={"X": X, "y": np.arange(4.0)})
    assert str(e.value) == "error: <array X>:2:1: data input `X` cannot have missing values"


def test_unknown_names_raise_key_error(tutorial_x):
    m = occam.Model(TUTORIAL / "single.occam")
    with pytest.raises(occam.UnknownNameError) as e:
        m.fit(data={"x": tutorial_x, "xx": tutorial_x})
    assert isinstance(e.value, KeyError)
    assert "data `xx` (<array xx>): the model has no variable named `xx`; did you mean `x`?" in str(e.value)
    r = m.fit(data={"x": tutorial_x})
    with pytest.raises(KeyError, match="no variable named `nope`"):
        r.posterior("nope")
    with pytest.raises(KeyError, match="no parameter `foo`"):
        r.posterior("mu")["foo"]


def test_bad_settings_raise_value_error(tutorial_x):
    m = occam.Model(TUTORIAL / "single.occam")
    for kw in ({"max_iter": 0}, {"restarts": 0}, {"tol": -1.0}, {"tol": float("nan")}, {"seed": -1}, {"seed": 1.5}):
        with pytest.raises(occam.UsageError):
            m.fit(data={"x": tutorial_x}, **kw)
    with pytest.raises(TypeError):
        m.fit(data={"x": tutorial_x}, callback=3)
    with pytest.raises(occam.UsageError):
        occam.compare([m], data={"x": tutorial_x}, priors=[1.0, 2.0])
    with pytest.raises(occam.UsageError):
        m.sample(plates={"N": 0})


def test_missing_files():
    with pytest.raises(occam.FileError) as e:
        occam.Model("no/such/model.occam")
    assert isinstance(e.value, OSError) and "no/such/model.occam" in str(e.value)
    with pytest.raises(TypeError):
        occam.Model(42)
