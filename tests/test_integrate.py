"""Tests of multibody.integrate: explicit Runge-Kutta methods, dense output, step control.

Every expected value comes from mathematics: analytic solutions, orders of the methods,
order conditions, evaluation counts implied by the stage structure.
"""
import dataclasses
import re

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from multibody.integrate import (DOP853, DOPRI5, TABLEAUX, IntegrationError, RungeKutta,
                                 StepController, Tableau, error_norm, solve)

ADAPTIVE = ["dopri5", "dop853"]
SLOPE_TOL = 0.3  # allowed deviation of a fitted convergence order


# ---------------------------------------------------------------- problems with exact solutions
def oscillator(t, y):
    return np.array([y[1], -y[0]])


def oscillator_exact(t, t0=0.0, y0=(1.0, 0.0)):
    """Rotation of y0 by the angle t - t0; t scalar -> (2,), t (k,) -> (2, k)."""
    dt = np.asarray(t) - t0
    c, s = np.cos(dt), np.sin(dt)
    return np.array([c * y0[0] + s * y0[1], -s * y0[0] + c * y0[1]])


def cos_growth(t, y):  # y' = cos(t) y, y = exp(sin t)
    return np.cos(t) * y


def cos_growth_exact(t):
    return np.exp(np.sin(np.asarray(t)))[None]


PROBLEMS = {
    "oscillator": (oscillator, oscillator_exact, [1.0, 0.0]),
    "cos_growth": (cos_growth, cos_growth_exact, [1.0]),
}


def fitted_order(hs, errors):
    return np.polyfit(np.log(hs), np.log(errors), 1)[0]


def fixed_step_sizes(tableau, span):
    """Step sizes in the asymptotic range, with errors well above round-off."""
    n = [6, 8, 12, 16] if tableau.order >= 8 else [8, 16, 32, 64]
    return span / np.array(n)


# ---------------------------------------------------------------- tableaux
@pytest.mark.parametrize("name", TABLEAUX)
def test_quadrature_order_conditions(name):
    tab = TABLEAUX[name]
    for k in range(1, tab.order + 1):  # sum_i b_i c_i^(k-1) = 1/k
        assert tab.b @ tab.c ** (k - 1) == pytest.approx(1 / k, abs=1e-13)
    embedded = {"dopri5": [(DOPRI5.e, 4)], "dop853": [(DOP853.e, 5), (DOP853.e3, 3)]}
    for e, order in embedded.get(name, []):  # b_hat = b - e
        for k in range(1, order + 1):
            assert (tab.b - e) @ tab.c ** (k - 1) == pytest.approx(1 / k, abs=1e-13)


@pytest.mark.parametrize("name", TABLEAUX)
def test_continuous_extension_conditions(name):
    """b_i(theta) = sum_j p_ij theta^j satisfies sum_i b_i(theta) c_i^(k-1) = theta^k / k."""
    tab = TABLEAUX[name]
    c = np.concatenate([tab.c, [] if tab.fsal else [1.0], tab.c_extra])
    for theta in (0.3, 0.7, 1.0):
        b_theta = tab.p @ theta ** np.arange(1, tab.p.shape[1] + 1)
        for k in range(1, tab.dense_order + 1):
            assert b_theta @ c ** (k - 1) == pytest.approx(theta ** k / k, abs=1e-12)
        # the evaluated form: theta b + theta (1 - theta) sum_j p_bubble_j theta^j
        b_pad = np.zeros(len(c))
        b_pad[:tab.n_stages] = tab.b
        bubble = tab.p_bubble @ theta ** np.arange(tab.p_bubble.shape[1])
        np.testing.assert_allclose(theta * b_pad + theta * (1 - theta) * bubble, b_theta,
                                   rtol=0, atol=1e-12)


def test_inconsistent_tableau_is_rejected():
    a = np.array(DOPRI5.a)
    a[1, 0] += 0.1  # row sum no longer equals c[1]
    with pytest.raises(ValueError, match="row sums"):
        dataclasses.replace(DOPRI5, a=a)


# ---------------------------------------------------------------- fixed-step convergence
@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("name", TABLEAUX)
def test_fixed_step_order(name, problem):
    fun, exact, y0 = PROBLEMS[problem]
    tab, span = TABLEAUX[name], 4.0
    hs = fixed_step_sizes(tab, span)
    errors = []
    for h in hs:
        t, y, _ = solve(fun, (0.0, span), y0, method=name, fixed_step=h)
        assert len(t) == round(span / h) + 1 and t[-1] == span
        errors.append(np.abs(y - exact(t)).max())
    assert fitted_order(hs, errors) == pytest.approx(tab.order, abs=SLOPE_TOL)


def one_step(fun, t0, y0, h, tableau):
    """One fixed step from exact data; returns (error_norm with atol=1, rtol=0, dense)."""
    solver = RungeKutta(fun, t0, y0, t0 + h, tableau=tableau, fixed_step=h, rtol=0.0, atol=1.0)
    step = solver.step()
    return step.error_norm, step.dense


@pytest.mark.parametrize("tableau, q", [
    (DOPRI5, 4),
    (DOP853, 7),                                                   # Hairer's 5-3 combination
    (dataclasses.replace(DOP853, e3=None, error_order=5), 5),      # b - b_hat5 alone
    (dataclasses.replace(DOP853, e=DOP853.e3, e3=None, error_order=3), 3),  # b - b_hat3
])
def test_embedded_estimate_order(tableau, q):
    """The local error estimate of an order-q formula is O(h^(q+1))."""
    t0, hs = 1.0, 0.5 * 2.0 ** -np.arange(4)
    y0 = oscillator_exact(t0)
    estimates = [one_step(oscillator, t0, y0, h, tableau)[0] for h in hs]
    assert fitted_order(hs, estimates) == pytest.approx(q + 1, abs=SLOPE_TOL)


# ---------------------------------------------------------------- dense output
@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("name", TABLEAUX)
def test_dense_output_local_order(name, problem):
    """Continuous extension of order p*: local error O(h^(p*+1)) at interior points."""
    fun, exact, _ = PROBLEMS[problem]
    tab, t0 = TABLEAUX[name], 1.0
    hs = 2.0 ** (-np.arange(4) / 2) if tab.order >= 8 else 0.4 * 2.0 ** -np.arange(4)
    errors = []
    for h in hs:
        t_inner = t0 + h * np.array([0.2, 0.4, 0.6, 0.8])
        _, dense = one_step(fun, t0, exact(t0), h, tab)
        errors.append(np.abs(dense(t_inner) - exact(t_inner)).max())
    assert fitted_order(hs, errors) >= tab.dense_order + 1 - SLOPE_TOL


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("name", TABLEAUX)
def test_dense_output_global_order(name, problem):
    fun, exact, y0 = PROBLEMS[problem]
    tab, span = TABLEAUX[name], 4.0
    hs = fixed_step_sizes(tab, span)
    errors = []
    for h in hs:
        t_eval = (np.arange(round(span / h)) + 0.37) * h  # one interior point per step
        t, y, _ = solve(fun, (0.0, span), y0, method=name, fixed_step=h, t_eval=t_eval)
        errors.append(np.abs(y - exact(t)).max())
    assert fitted_order(hs, errors) >= tab.dense_order - SLOPE_TOL


@pytest.mark.parametrize("name", TABLEAUX)
def test_dense_output_shapes_and_step_ends(name):
    solver = RungeKutta(oscillator, 0.0, [1.0, 0.0], 1.0, tableau=name, fixed_step=0.3)
    y_old = solver.y.copy()
    step = solver.step()
    assert step.dense(0.1).shape == (2,)
    assert step.dense(np.array([0.1, 0.2, 0.25])).shape == (2, 3)
    np.testing.assert_array_equal(step.dense(step.t_old), y_old)
    np.testing.assert_array_equal(step.dense(step.t), step.y)
    np.testing.assert_array_equal(step.dense(np.array([step.t_old, step.t])),
                                  np.column_stack([y_old, step.y]))


def test_dop853_extra_dense_stages_are_lazy_and_counted():
    solver = RungeKutta(oscillator, 0.0, [1.0, 0.0], 1.0, tableau="dop853", fixed_step=0.5)
    step = solver.step()
    nfev = solver.nfev
    step.dense(0.25)
    step.dense(0.3)
    assert solver.nfev == nfev + len(DOP853.c_extra)


# ---------------------------------------------------------------- adaptive stepping
@pytest.mark.parametrize("name", ADAPTIVE)
def test_lands_exactly_on_t_bound(name):
    t_bound = np.pi  # not a multiple of any step size
    solver = RungeKutta(oscillator, 0.0, [1.0, 0.0], t_bound, tableau=name, rtol=1e-8)
    while solver.status == "running":
        step = solver.step()
        assert step.t_old < step.t <= t_bound
    assert step.t == t_bound and solver.t == t_bound
    np.testing.assert_allclose(solver.y, [-1.0, 0.0], atol=1e-7)
    with pytest.raises(IntegrationError):
        solver.step()


@pytest.mark.parametrize("name", ADAPTIVE)
def test_backward_integration(name):
    t, y, _ = solve(oscillator, (2.0, -1.0), oscillator_exact(2.0), method=name, rtol=1e-9)
    assert t[-1] == -1.0 and np.all(np.diff(t) < 0)
    np.testing.assert_allclose(y, oscillator_exact(t), atol=1e-7)


@pytest.mark.parametrize("name", ADAPTIVE)
def test_global_error_scales_with_rtol(name):
    """With local extrapolation, error ~ tol^(p/(q+1)) = tol^1 for both methods."""
    tab, rtols = TABLEAUX[name], 10.0 ** -np.arange(5, 10)
    assert tab.order / (tab.error_order + 1) == 1
    errors = []
    for rtol in rtols:
        t, y, _ = solve(oscillator, (0.0, 10.0), [1.0, 0.0], method=name, rtol=rtol,
                        atol=1e-3 * rtol)
        errors.append(np.abs(y - oscillator_exact(t)).max())
    assert fitted_order(rtols, errors) == pytest.approx(1.0, abs=SLOPE_TOL)
    assert np.all(np.array(errors) < 10 * rtols)


@pytest.mark.parametrize("name, new_per_try, per_accept", [("dopri5", 6, 0), ("dop853", 11, 1)])
def test_rejections_counted(name, new_per_try, per_accept):
    """An oversized first step is rejected; evaluations follow the stage structure:
    DOPRI5 (FSAL) 6 per attempt, DOP853 11 per attempt + f(t_new, y_new) per accepted step."""
    solver = RungeKutta(oscillator, 0.0, [1.0, 0.0], 10.0, tableau=name, rtol=1e-8,
                        atol=1e-10, first_step=5.0)
    while solver.status == "running":
        solver.step()
    assert solver.n_rejected >= 1
    tries = solver.n_accepted + solver.n_rejected
    assert solver.nfev == 1 + new_per_try * tries + per_accept * solver.n_accepted


def test_dop853_needs_far_fewer_steps():
    """Step sizes ~ tol^(1/(q+1)): at tol = 1e-10 ratio ~ 10^(10*(1/5 - 1/8)) = 5.6."""
    steps = {name: solve(oscillator, (0.0, 10.0), [1.0, 0.0], method=name, rtol=1e-10,
                         atol=1e-12)[2]["n_accepted"] for name in ADAPTIVE}
    assert steps["dop853"] * 3 < steps["dopri5"]


def lorenz(t, y):
    return np.array([10 * (y[1] - y[0]), y[0] * (28 - y[2]) - y[1], y[0] * y[1] - 8 / 3 * y[2]])


def van_der_pol(t, y):
    return np.array([y[1], (1 - y[0] ** 2) * y[1] - y[0]])


@pytest.mark.parametrize("name, scipy_name", [("dopri5", "RK45"), ("dop853", "DOP853")])
@pytest.mark.parametrize("fun, y0, span", [(lorenz, [1.0, 1.0, 1.0], 2.0),
                                           (van_der_pol, [2.0, 0.0], 6.0)])
def test_agrees_with_scipy(name, scipy_name, fun, y0, span):
    t_eval = np.linspace(0.0, span, 13)
    kw = dict(rtol=1e-10, atol=1e-12)
    _, y, _ = solve(fun, (0.0, span), y0, method=name, t_eval=t_eval, **kw)
    ref = solve_ivp(fun, (0.0, span), y0, method=scipy_name, t_eval=t_eval, **kw)
    np.testing.assert_allclose(y, ref.y, rtol=1e-7, atol=1e-7)


def test_pi_controller_integrates_accurately():
    controller = StepController(beta=0.04)
    t, y, _ = solve(oscillator, (0.0, 10.0), [1.0, 0.0], rtol=1e-8, controller=controller)
    np.testing.assert_allclose(y, oscillator_exact(t), atol=1e-6)


# ---------------------------------------------------------------- controller and norm
def test_controller_formula():
    c = StepController()
    q = 4
    assert c.factor(1.0, None, q) == pytest.approx(c.safety)
    assert c.factor(2.0 ** -5, None, q) == pytest.approx(2 * c.safety)  # err^(-1/(q+1))
    assert c.factor(0.0, None, q) == c.max_factor
    assert c.factor(1e30, None, q) == c.min_factor
    pi = StepController(beta=0.04)
    alpha = 1 / 5 - 0.75 * 0.04
    assert pi.factor(0.5, 0.25, q) == pytest.approx(0.9 * 0.5 ** -alpha * 0.25 ** 0.04)


def test_error_norm_scalar_and_vector_atol():
    err, y = np.array([1.0, 1.0]), np.zeros(2)
    assert error_norm(err, y, y, 0.0, np.array([1.0, 0.5])) == pytest.approx(np.sqrt(2.5))
    # scale uses max(|y_old|, |y_new|): 1 + 1*3 = 4
    assert error_norm(np.array([4.0]), np.array([-3.0]), np.array([1.0]), 1.0, 1.0) == 1.0


# ---------------------------------------------------------------- reset and bad input
@pytest.mark.parametrize("name", ADAPTIVE)
def test_reset_uses_new_state(name):
    solver = RungeKutta(oscillator, 0.0, [1.0, 0.0], 5.0, tableau=name, rtol=1e-9)
    solver.step()
    t1, h, nfev = solver.t, solver.h, solver.nfev
    y_new = solver.y + np.array([0.5, -0.3])  # e.g. a velocity jump
    solver.reset(t1, y_new)
    assert solver.nfev == nfev + 1 and solver.h == h
    step = solver.step()
    np.testing.assert_allclose(step.y, oscillator_exact(step.t, t1, y_new), atol=1e-8)
    fresh = RungeKutta(oscillator, t1, y_new, 5.0, tableau=name, rtol=1e-9, first_step=h)
    np.testing.assert_allclose(step.y, fresh.step().y, rtol=1e-15, atol=0)


def test_reset_with_fixed_step_rk4():
    solver = RungeKutta(oscillator, 0.0, [1.0, 0.0], 1.0, tableau="rk4", fixed_step=0.01)
    solver.step()
    y_new = np.array([0.0, 2.0])
    solver.reset(solver.t, y_new)
    t1 = solver.t
    step = solver.step()
    np.testing.assert_allclose(step.y, oscillator_exact(step.t, t1, y_new), atol=1e-9)


def test_non_finite_rhs_raises_with_time():
    def fun(t, y):
        return np.array([np.nan]) if t >= 0.3 else -y

    solver = RungeKutta(fun, 0.0, [1.0], 1.0, tableau="rk4", fixed_step=0.1)
    with pytest.raises(IntegrationError, match="non-finite") as info:
        while solver.status == "running":
            solver.step()
    t_bad = float(re.search(r"t=([-+0-9.eE]+)", str(info.value)).group(1))
    assert 0.3 <= t_bad <= 0.3 + 0.1


@pytest.mark.parametrize("name", ADAPTIVE)
def test_blow_up_raises(name):
    """y' = y^2, y(0) = 1 has the solution 1/(1-t), singular at t = 1."""
    with pytest.raises(IntegrationError, match=r"t="):
        solve(lambda t, y: y ** 2, (0.0, 2.0), [1.0], method=name)


def test_rk4_requires_fixed_step_and_bad_tolerances():
    with pytest.raises(ValueError, match="fixed_step"):
        RungeKutta(oscillator, 0.0, [1.0, 0.0], 1.0, tableau="rk4")
    with pytest.raises(ValueError, match="atol"):
        RungeKutta(oscillator, 0.0, [1.0, 0.0], 1.0, tableau="dopri5", atol=[1e-6] * 3)
    assert isinstance(TABLEAUX["dop853"], Tableau)
