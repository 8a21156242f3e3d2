"""The local error of the null-space formulations measured on the physical state [x, v] (formulations.velocity_error;
issue 12): RungeKutta's ``error_measure`` hook, lagrange's norm (Hairer, Norsett & Wanner I, eq. 4.11) over the same
2 n components with the same scales.

Assertions from the mathematics: v = T w is bilinear, so the exact change of v is T w - (T - dT)(w - dw); a change of
the length of T (f = 1) by the factor 1 + c moves v by c v; an error of w alone is the physical error T dw, whose
norm over [x, v] is lagrange's; a normal part of the error is scaled by the weight and a tangent part kept; the exact
reduction theta'' = -k cos theta of the four-bar chains (models.modified_four_bars.crank_angle_exact_cells)
integrated by the same integrator at the same tolerances is the yardstick of a run's crank-tip error."""
from __future__ import annotations

import numpy as np
import pytest

from continued_motion import assert_first_order_change
from multibody.formulations.registry import make_formulation
from multibody.formulations.velocity_error import (physical_error, stage_velocity_change, turn_velocity_change,
                                                   velocity_change)
from multibody.integrate.controllers import error_norm
from multibody.integrate.explicit import solve
from multibody.linalg.rank import row_space_filter
from multibody.linalg.tangent import smooth_reorthogonalize
from multibody.models import MODELS
from multibody.models.four_bars import crank_rate_constant
from multibody.models.modified_four_bars import crank_angle_exact_cells
from multibody.simulation import RunOptions, simulate


def test_velocity_change_is_the_exact_bilinear_difference(rng):
    """dv = T w - (T - dT)(w - dw) = dT w + T dw - dT dw for any T, w, dT, dw; a frozen T (a chart): T dw."""
    T, dT = rng.standard_normal((7, 2)), 1e-3 * rng.standard_normal((7, 2))
    w, dw = rng.standard_normal(2), 1e-3 * rng.standard_normal(2)
    assert np.allclose(velocity_change(T, w, dw, dT), T @ w - (T - dT) @ (w - dw), rtol=0.0, atol=1e-14)
    assert np.array_equal(velocity_change(T, w, dw), T @ dw)


def test_length_error_of_the_basis_moves_the_velocity():
    """f = 1, T = (cos a, sin a, 0), an error dT = c T (the length of T off by the factor 1 + c), dw = 0: the velocity
    v = T w is off by c v, |dv| = |c w| (the flow basis' error counted where it acts: before, only on T's entries)."""
    a, w, c = 0.3, np.array([2.5]), 1e-7
    T = np.array([[np.cos(a)], [np.sin(a)], [0.0]])
    dv = velocity_change(T, w, np.zeros(1), c * T)
    ulp = 4 * np.finfo(float).eps * 2.5        # the difference of two velocities of size |w|: round-off ~eps |w|
    assert np.allclose(dv, c * (T @ w), rtol=0.0, atol=ulp)
    assert abs(np.linalg.norm(dv) - c * 2.5) <= ulp


def test_normal_parts_are_weighted_tangent_parts_kept():
    """One constraint row A = (1, 0, 0): the first component of dx and of dv is normal (scaled by the weight), the
    others tangent (kept)."""
    A = np.array([[1.0, 0.0, 0.0]])
    dx, dv = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    out = physical_error(dx, dv, A, 1, weight=1e-4)
    assert np.allclose(out, [1e-4, 2.0, 3.0, 4e-4, 5.0, 6.0], rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_nullspace_norm_is_lagrange_norm_of_the_same_velocity_error(basis):
    """An error dw of the generalized velocities alone: the null-space measure's norm is lagrange's norm of the
    physical error [0, T dw] over [q, v] with v = T w (ratio 1; before: sqrt(N / (2 n)), the entries of w and T in
    the mean)."""
    model = MODELS["double-four-bar"].factory()
    rtol, atol = 1e-6, 1e-9
    ns, lag = make_formulation("nullspace", model, basis=basis), make_formulation("lagrange", model)
    q, v = model.q0, model.v0
    y = ns.initial_state(0.0, q, v)
    lag.initial_state(0.0, q, v)
    n, f = model.n, ns.f
    T = ns.unpack(y)[2]
    err = np.zeros_like(y)
    err[n:n + f] = 1e-7 * np.ones(f)
    e, p_old, p_new = ns.error_measure(0.0, y, 0.0, y, err)
    got = error_norm(e, p_old, p_new, rtol, atol)
    yl = np.concatenate([q, T @ y[n:n + f]])
    errl = lag.error_filter(0.0, yl, np.concatenate([np.zeros(n), T @ err[n:n + f]]))
    want = error_norm(errl, yl, yl, rtol, atol)
    assert got == pytest.approx(want, rel=1e-9)


def test_window_state_is_measured_as_it_is():
    """Inside the singular window the state is [q, v] (2 n entries): measured unchanged."""
    model = MODELS["double-four-bar"].factory()
    ns = make_formulation("nullspace", model, basis="flow")
    ns.initial_state(0.0, model.q0, model.v0)
    y, e = np.arange(2.0 * model.n), np.full(2 * model.n, 1e-9)
    out = ns.error_measure(0.0, y, 1.0, y, e)
    assert out[0] is e and out[1] is y and out[2] is y


def _reduction_tip_error(cells, t_end, integrator, rtol, atol):
    """The crank-tip error of theta'' = -k cos theta integrated by the same integrator and tolerances."""
    k = crank_rate_constant(cells)
    t, y, _ = solve(lambda t, y: np.array([y[1], -k * np.cos(y[0])]), (0.0, t_end), np.array([np.pi / 2, -1.0]),
                    method=integrator, rtol=rtol, atol=atol)
    exact = crank_angle_exact_cells(t, cells=cells)
    return np.hypot(np.cos(y[0]) - np.cos(exact), np.sin(y[0]) - np.sin(exact)).max()


def _run_tip_error(name, cells, t_end, integrator, rtol, atol, basis):
    run = simulate(MODELS[name].factory(), t_end=t_end, formulation="nullspace", formulation_options={"basis": basis},
                   options=RunOptions(integrator=integrator, rtol=rtol, atol=atol))
    th, exact = run.column("q", "bar1.theta"), crank_angle_exact_cells(run.t, cells=cells)
    return np.hypot(np.cos(th) - np.cos(exact), np.sin(th) - np.sin(exact)).max()


def test_nullspace_tip_error_within_the_exact_reductions():
    """Double four-bar, 10 s, dopri5 at rtol = atol = 1e-6: the crank-tip error of the null-space run is at most that of
    the exact reduction integrated by the same dopri5 with the same tolerances (1.0e-3 m; before the physical measure
    of w: 2.3e-3 m)."""
    assert _run_tip_error("double-four-bar", 2, 10.0, "dopri5", 1e-6, 1e-6, "continuation") <= \
        _reduction_tip_error(2, 10.0, "dopri5", 1e-6, 1e-6)


def test_stage_basis_is_the_state_basis_on_the_manifold():
    """Flow's stages take B = App. A of T at x (NullSpaceEquations._velocity): where T is orthonormal and tangent at
    x (an accepted state), B = T, so the equations on T^T T = I, A T = 0 are paper 000's; off the manifold of a model
    with a redundant row (modified double four-bar, x moved by 1e-3: A has full rank there, its 12th singular value
    ~2e-4 belongs to no motion) B keeps unit length along T (only the generic rank's directions are removed)."""
    model = MODELS["double-four-bar-modified"].factory()
    ns = make_formulation("nullspace", model, basis="flow", fast=False)
    y = ns.initial_state(0.0, model.q0, model.v0)
    x, w, T = ns.unpack(y)
    B = ns._velocity(0.0, x, w, T)[4]
    assert np.abs(B - T).max() <= 1e-12
    moved = x + 1e-3 * np.random.default_rng(3).standard_normal(model.n)
    B = ns._velocity(0.0, moved, w, T)[4]
    assert abs(np.linalg.norm(B) - 1.0) <= 1e-12 and abs(float(B[:, 0] @ T[:, 0])) >= 1 - 1e-4


def test_stage_velocity_change_is_the_first_order_difference(rng):
    """dv = T (dw + K w), K = skew(T^T dT) (velocity_error.stage_velocity_change) is the tangent part of the exact
    difference B(x, T) w - B(x, T - dT)(w - dw) to first order: halving the errors halves dv and quarters the
    remainder (f = 2, x fixed; B = the polar factor of the tangent part of T)."""
    n, f = 6, 2
    A = rng.standard_normal((n - f, n))
    N = np.linalg.svd(A)[2][n - f:].T                    # orthonormal basis of null(A)
    T, w = N @ np.linalg.qr(rng.standard_normal((f, f)))[0], rng.standard_normal(f)
    dT0, dw0 = rng.standard_normal((n, f)), rng.standard_normal(f)

    def exact(c):
        X = (T - c * dT0)
        X = X - np.linalg.pinv(A) @ (A @ X)
        lam, V = np.linalg.eigh(X.T @ X)
        return T @ w - (X @ (V / np.sqrt(lam)) @ V.T) @ (w - c * dw0)

    rest = [np.abs(exact(c) - stage_velocity_change(T, w, c * dw0, c * dT0)).max() for c in (1e-4, 5e-5)]
    assert 3.5 <= rest[0] / rest[1] <= 4.5       # second order remainder
    assert np.abs(stage_velocity_change(T, w, dw0, 0 * dT0) - T @ dw0).max() == 0.0


@pytest.mark.parametrize("integrator", ["dop853", "dopri5"])
def test_flow_tip_error_within_twice_the_exact_reduction(integrator):
    """Double four-bar, 10 s, rtol = atol = 1e-8: the flow basis' crank-tip error is at most twice that of the exact
    reduction theta'' = -k cos theta integrated by the same integrator with the same tolerances (the range of
    lagrange's runs, issue 12; before the stage basis dop853 ended 4.9 times it)."""
    assert _run_tip_error("double-four-bar", 2, 10.0, integrator, 1e-8, 1e-8, "flow") <= \
        2.0 * _reduction_tip_error(2, 10.0, integrator, 1e-8, 1e-8)


def _continued(ns, y):
    """[q, v] the run continues from after the step that ends at y (NullSpaceEquations.after_step: x projected onto
    Phi = 0, eqs 12-13; T re-orthogonalised at the projected x, App. A; w = T_new^T v, so v = T_new T_new^T x')."""
    x, w, T = ns.unpack(y)
    v = ns.split(0.0, y)[1]
    q = ns._project(0.0, x)
    T_new = smooth_reorthogonalize(T, ns.ws.velocity_constraints(0.0, q, v)[1], ns.reg)
    return np.concatenate([q, T_new @ (T_new.T @ v)])


@pytest.mark.parametrize("name", ["double-four-bar", "double-four-bar-modified"])
def test_flow_measure_is_the_first_order_change_of_the_continued_motion(name):
    """The flow measure (NullSpaceEquations._physical_error, velocity_error module docstring "The measure") is the
    derivative of the motion the run continues from (_continued) with respect to the state's error [dx, dw, dT], for
    dx tangent (its normal part is weighted, not measured): the remainder is of second order (a tenth of the error, a
    hundredth of the remainder; first order, a tenth, without the velocity change the tangential dx forces,
    velocity_error.turn_velocity_change). dT has a normal and a tangent part (neither moves the motion for f = 1), the
    modified four-bar a redundant row."""
    model = MODELS[name].factory()
    ns = make_formulation("nullspace", model, basis="flow", fast=False)
    y = ns.initial_state(0.0, model.q0, model.v0)
    n, f = model.n, ns.f
    y[n:n + f] = 3.0                         # a speed of the motion (~ the crank's): the forced change ~ |v| |dx|
    x, w, T = ns.unpack(y)
    rng = np.random.default_rng(5)
    A = ns.ws.velocity_constraints(0.0, x, np.zeros(n))[1]
    err = np.concatenate([row_space_filter(A, rng.standard_normal(n)), rng.standard_normal(f + n * f)])
    measured = ns._physical_error(0.0, y, err)
    turn = turn_velocity_change(ns.ws, 0.0, x, T @ w, err[:n], A, ns.generic_rank)
    assert_first_order_change(lambda z: _continued(ns, z), y, err, measured, turn)


@pytest.mark.parametrize("name", ["double-four-bar", "double-four-bar-modified"])
def test_lagrange_filter_is_the_first_order_change_of_the_continued_motion(name):
    """Lagrange's filter (Lagrange._tangent_error with _forced_change, velocity_error module docstring "The measure")
    on an error [dq, dv] tangent to the constraints (normal parts are weighted, not measured) is the derivative of the
    state after the projection (Lagrange.after_step: q onto Phi = 0, v onto C v + b = 0 at the projected q): the
    remainder is of second order (a tenth of the error, a hundredth of the remainder; first order, a tenth, without the
    velocity change -A_r^+ A'(v) dq that the tangential dq forces)."""
    model = MODELS[name].factory()
    lag = make_formulation("lagrange", model, fast=False)
    n = model.n
    A = lag.ws.velocity_constraints(0.0, model.q0, np.zeros(n))[1]
    T = np.linalg.svd(A)[2][-(n - np.linalg.matrix_rank(A)):].T
    v = T @ (3.0 * np.ones(T.shape[1]) / np.sqrt(T.shape[1]))     # a speed of the motion (~ the crank's)
    y = lag.initial_state(0.0, model.q0, v)
    rng = np.random.default_rng(5)
    err = np.concatenate([row_space_filter(A, rng.standard_normal(n)), row_space_filter(A, rng.standard_normal(n))])
    measured = lag.error_filter(0.0, y, err)
    turn = lag._forced_change(0.0, y[:n], y[n:], err[:n])
    assert np.abs(turn).max() > 1e-2 * np.abs(err).max()             # the term is not negligible here
    assert_first_order_change(lambda z: lag.after_step(0.0, z), y, err, measured, turn)
