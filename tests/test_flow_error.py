"""The tangential position error of ``--basis flow`` bounded by its two parts (formulations.flow_error) and the stepper's
estimate of an auxiliary coordinate it rests on (integrate.explicit.RungeKutta's ``integral``)."""
from __future__ import annotations

import numpy as np
import pytest

from multibody.formulations.flow_error import independent_part
from multibody.integrate.explicit import RungeKutta


def _first_attempt(fun, y0, h, measure):
    rk = RungeKutta(fun, 0.0, y0, 1.0, tableau="dopri5", rtol=1e-6, atol=1e-6, first_step=h, error_measure=measure)
    rk.step()


def test_integral_is_the_estimate_of_an_auxiliary_coordinate():
    """h sum_i e_i Y_i, passed as ``integral``, is the embedded estimate of s with s' = y integrated with the step: the
    s-part of the error of the augmented system [y, s]' = [F(y), y] (an explicit Runge-Kutta method integrates every
    component with the same stages; s_1 = s_0 + h sum_i b_i Y_i), to round-off. Pendulum theta'' = -sin theta."""
    pendulum = lambda t, y: np.array([y[1], -np.sin(y[0])])                        # noqa: E731
    augmented = lambda t, z: np.concatenate([pendulum(t, z[:2]), z[:2]])          # noqa: E731
    got, want = {}, {}

    def measure(t_old, y_old, t_new, y_new, err, integral=None):
        got.setdefault("integral", integral)
        return err, y_old, y_new
    measure.integral = True

    def plain(t_old, y_old, t_new, y_new, err):
        want.setdefault("err", err)
        return err, y_old, y_new
    y0 = np.array([2.5, 0.3])
    _first_attempt(pendulum, y0, 0.3, measure)
    _first_attempt(augmented, np.r_[y0, 0.0, 0.0], 0.3, plain)
    assert np.allclose(got["integral"], want["err"][2:], rtol=1e-12, atol=1e-16)
    assert np.all(np.abs(got["integral"]) > 0)


def test_dop853_gets_no_integral():
    """DOP853 controls Hairer's quotient of two estimates, which a bound of one estimate's parts does not bound: its
    measure is not given ``integral`` (formulations.flow_error)."""
    seen = []

    def measure(t_old, y_old, t_new, y_new, err, integral=None):
        seen.append(integral)
        return err, y_old, y_new
    measure.integral = True
    rk = RungeKutta(lambda t, y: -y, 0.0, np.ones(2), 1.0, tableau="dop853", first_step=0.1, error_measure=measure)
    rk.step()
    assert seen and all(s is None for s in seen)


@pytest.mark.parametrize("case", ["random", "straight", "no_quadrature_error"])
def test_independent_part_is_the_triangle_bound(rng, case):
    """T^T (u + d) = |dq| + |c - dq| >= |c| per component (c = T^T u; the triangle inequality for c = dq - (dq - c)),
    tangential (d in span(T)); a path without turn (the chord part c - dq = 0) or without quadrature error (dq = 0)
    keeps the size |c| of the raw estimate (the sign is fixed: formulations.flow_error)."""
    T = np.linalg.qr(rng.standard_normal((7, 3)))[0]
    c = rng.standard_normal(3)
    dq = {"random": rng.standard_normal(3), "straight": c.copy(), "no_quadrature_error": np.zeros(3)}[case]
    d = independent_part(T, T @ c, dq)
    bounded = T.T @ (T @ c + d)
    assert np.allclose(bounded, np.abs(dq) + np.abs(c - dq), rtol=1e-14, atol=1e-15)
    assert np.all(bounded >= np.abs(c) * (1 - 1e-14))
    assert np.allclose(d, T @ (T.T @ d), atol=1e-15)           # tangential: in span(T)
    if case != "random":
        assert np.allclose(bounded, np.abs(c), rtol=1e-14, atol=1e-15)


def test_bound_is_continuous_where_the_raw_estimate_passes_zero(rng):
    """The bounded error does not jump where c = T^T u changes sign (the bottom of a swing, or round-off off the
    manifold): for u of size 1e-17 either way, the bounded part differs by the change of u alone."""
    T = np.linalg.qr(rng.standard_normal((5, 1)))[0]
    dq = np.array([0.3])
    plus, minus = (T[:, 0] * s + independent_part(T, T[:, 0] * s, dq) for s in (1e-17, -1e-17))
    assert np.abs(plus - minus).max() <= 1e-15
