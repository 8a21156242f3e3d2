"""The error of the generalized velocities measured as the physical velocity error they make
(formulations.velocity_error; issue 12, N-four-bar with 40 cells): the scaled RMS norm (Hairer, Norsett & Wanner I,
eq. 4.11) of the null-space state sees a velocity error as lagrange's norm over [q, v] does."""
from __future__ import annotations

import numpy as np
import pytest

from multibody.formulations.velocity_error import physical_velocity_error
from multibody.integrate.controllers import error_norm
from multibody.integrate.explicit import solve
from multibody.models import MODELS
from multibody.models.four_bars import crank_rate_constant
from multibody.models.modified_four_bars import crank_angle_exact_cells
from multibody.simulation import RunOptions, simulate


def test_one_velocity_counts_once_per_moving_component():
    """f = 1, atol -> 0: every component i with T_i != 0 has the relative error dw / w, so the physical error's squared
    scaled norm is k (dw / (rtol w))^2 for k moving components, and the entry is sqrt(k) dw (scaled: sqrt(k) times
    the relative error)."""
    T = np.zeros((7, 1))
    T[[0, 2, 3, 6], 0] = [0.5, -0.5, 0.5, 0.5]
    w, dw, rtol = np.array([3.0]), np.array([1e-7]), 1e-6
    e = physical_velocity_error(T, w, dw, rtol, atol=1e-300)
    assert e[0] / (rtol * 3.0) == pytest.approx(np.sqrt(4) * 1e-7 / (rtol * 3.0), rel=1e-12)


def test_several_velocities_keep_the_physical_norm():
    """f = 2: sum_j (e_j / (atol + rtol |w_j|))^2 is |u|^2, u_i = (T dw)_i / (atol + rtol |(T w)_i|)."""
    rng = np.random.default_rng(3)
    T = np.linalg.qr(rng.standard_normal((9, 2)))[0]
    w, dw, rtol, atol = rng.standard_normal(2), 1e-6 * rng.standard_normal(2), 1e-8, 1e-10
    e = physical_velocity_error(T, w, dw, rtol, atol)
    u = (T @ dw) / (atol + rtol * np.abs(T @ w))
    assert np.sum((e / (atol + rtol * np.abs(w))) ** 2) == pytest.approx(u @ u, rel=1e-12)


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_nullspace_norm_is_lagrange_norm_of_the_same_velocity_error(basis):
    """A velocity error T dw alone: lagrange's norm over [q, v] (2 n terms) and the null-space filter's over its state
    (N terms) have the same sum of squares, so their ratio is sqrt(N / (2 n)) whatever n (before: the f entries of w
    carried it, a factor sqrt(n) smaller on the N-four-bar)."""
    from multibody.formulations.registry import make_formulation
    model = MODELS["double-four-bar"].factory()
    rtol, atol = 1e-6, 1e-9
    ns = make_formulation("nullspace", model, basis=basis)
    lag = make_formulation("lagrange", model)
    ns.set_tolerance(rtol, atol)
    q, v = model.q0, model.v0
    y = ns.initial_state(0.0, q, v)
    n, f = model.n, ns.f
    T = ns.unpack(y)[2]
    err = np.zeros_like(y)
    err[n:n + f] = 1e-7 * np.ones(f)
    got = error_norm(ns.error_filter(0.0, y, err), y, y, rtol, atol)
    yl = np.concatenate([q, T @ y[n:n + f]])
    errl = np.concatenate([np.zeros(n), T @ err[n:n + f]])       # tangent: lagrange's filter keeps it whole
    want = error_norm(errl, yl, yl, rtol, atol)
    assert got == pytest.approx(want * np.sqrt(2 * n / y.shape[0]), rel=1e-9)


def test_nullspace_tip_error_within_the_exact_reductions():
    """Double four-bar, 10 s, dopri5 at rtol = atol = 1e-6: the crank-tip error of the null-space run is at most that of
    the exact reduction theta'' = -k cos theta integrated by the same dopri5 with the same tolerances (1.0e-3 m; the
    run: 6.6e-4 m; before the physical measure of w: 2.3e-3 m)."""
    k = crank_rate_constant(2)
    t, y, _ = solve(lambda t, y: np.array([y[1], -k * np.cos(y[0])]), (0.0, 10.0), np.array([np.pi / 2, -1.0]),
                    method="dopri5", rtol=1e-6, atol=1e-6)
    exact = crank_angle_exact_cells(t, cells=2)
    reduction = np.hypot(np.cos(y[0]) - np.cos(exact), np.sin(y[0]) - np.sin(exact)).max()
    run = simulate(MODELS["double-four-bar"].factory(), t_end=10.0, formulation="nullspace",
                   options=RunOptions(integrator="dopri5", rtol=1e-6, atol=1e-6))
    th, exact = run.column("q", "bar1.theta"), crank_angle_exact_cells(run.t, cells=2)
    assert np.hypot(np.cos(th) - np.cos(exact), np.sin(th) - np.sin(exact)).max() <= reduction
