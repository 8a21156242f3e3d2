"""The singular window (issue 12, formulations.crossing_window): partitioning and nullspace hand the motion next to a
singular configuration to the lagrange equations, so they keep the branch at rtol 1e-12 where their own
representation carries a round-off ~eps / rho^2 (they stopped loudly there before).

Assertions from the mechanics: the exact reduction theta'' = -k cos theta of the parallelogram chains
(models.four_bars.crank_angle_exact, models.modified_four_bars.crank_angle_exact_cells), every crank at the same
angle on the branch, the singular configuration where sin theta = 0, and the global error bounded by the local
errors the step control admits (each accepted step's error <= rtol |y| + atol in the error norm; summed over the
steps without cancellation and amplified by at most e^(L t) over the run, Hairer, Norsett & Wanner I, Thm II.3.4).
"""
from __future__ import annotations

import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.formulations.crossing_window import EXIT_FACTOR, WINDOW_FACTOR, window_ratio
from multibody.formulations.registry import make_formulation
from multibody.integrate.explicit import RungeKutta
from multibody.linalg.tangent import jacobian_rate_times
from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact, double_four_bar
from multibody.models.modified_four_bars import crank_angle_exact_cells

EPS = np.finfo(float).eps
#: e^(L t) over 1 s: the crank equation's Lipschitz constant is sqrt(k) ~ 3.8 1/s (k = 3 g 4 / (2 5) for the
#: double four-bar), e^3.8 ~ 45 < 100
AMPLIFICATION = 100.0


def test_window_from_the_round_off_of_the_rebuilt_acceleration():
    """At the window's edge the relative round-off eps / rho^2 of the rebuilt acceleration is rtol / WINDOW_FACTOR^2,
    whatever the tolerance; it closes behind the crossing at EXIT_FACTOR times that ratio."""
    for rtol in (1e-4, 1e-8, 1e-12):
        rho = window_ratio(rtol)
        assert EPS / rho ** 2 == pytest.approx(rtol / WINDOW_FACTOR ** 2, rel=1e-12)
    assert window_ratio(1e-30) == 0.2 and EXIT_FACTOR > 1


def test_stepper_continues_on_a_state_of_another_length():
    """RungeKutta.reset with a longer state (a formulation changing its layout): y' = -y continues on [y, y] from
    t = 0.5 and both components meet e^-t at t = 1 to the tolerance."""
    rk = RungeKutta(lambda t, y: -y, 0.0, np.array([1.0]), 1.0, tableau="dopri5", rtol=1e-10, atol=1e-12)
    while rk.t < 0.5:
        rk.step()
    rk.reset(rk.t, np.array([rk.y[0], rk.y[0]]))
    while rk.status == "running":
        rk.step()
    np.testing.assert_allclose(rk.y, np.exp(-1.0), rtol=1e-8)


def _check(r, model, cranks, exact, rtol, atol):
    """Cranks parallel, tip error within the sum of admitted local errors, one crossing inside one window."""
    th = np.stack([r.q[:, model.coordinate_index(c)] for c in cranks], axis=1)
    assert np.abs(th - th[:, :1]).max() < 1e-8
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()   # unit cranks, m
    scale = np.abs(np.concatenate([r.q, r.v], axis=1)).max()
    assert tip < AMPLIFICATION * len(r.t) * (rtol * scale + atol)
    crossings = r.summary["singular_crossings"]
    assert len(crossings) == 1
    windows = r.summary["singular_windows"]
    assert len(windows) == 1 and windows[0]["t_enter"] < crossings[0]["t"] < windows[0]["t_exit"]
    assert windows[0]["min_ratio"] < r.summary["singular_window_ratio"]
    return crossings[0]["t"]


@pytest.mark.parametrize("formulation, options", [("partitioning", {}), ("nullspace", {}),
                                                  ("nullspace", {"basis": "flow"})])
def test_rtol_1e12_keeps_the_branch_through_the_window(formulation, options):
    """The double four-bar for 1 s through its first singular configuration (theta = 0 at t ~ 0.714) at rtol 1e-12,
    atol 1e-14: these three stopped loudly there before (step collapse or a correction of > 1e5 tolerances)."""
    model = MODELS["double-four-bar"].factory()
    rtol, atol = 1e-12, 1e-14
    r = simulate(model, t_end=1.0, formulation=formulation, formulation_options=options,
                 options=RunOptions(integrator="dopri5", rtol=rtol, atol=atol))
    t_star = _check(r, model, ("bar1.theta", "bar3.theta", "bar5.theta"), crank_angle_exact(r.t), rtol, atol)
    assert abs(np.sin(crank_angle_exact(np.array([t_star]))[0])) < 1e-6
    assert r.summary["min_step"] >= 1e-9 * 1.0


@pytest.mark.parametrize("name, cells", [("double-four-bar-modified", 2), ("triple-four-bar-modified", 3)])
def test_modified_chains_partitioning_rtol_1e12(name, cells):
    """partitioning, dopri5, rtol 1e-12 / atol 1e-14 on the modified double and triple four-bars (paper 000 Sects.
    3.3-3.4), 1 s through the first singular configuration: all cells + 1 cranks parallel, the tip on
    theta'' = -k cos theta of the chain."""
    model = MODELS[name].factory()
    rtol, atol = 1e-12, 1e-14
    r = simulate(model, t_end=1.0, formulation="partitioning",
                 options=RunOptions(integrator="dopri5", rtol=rtol, atol=atol))
    cranks = tuple(f"bar{k}.theta" for k in range(1, 2 * cells + 2, 2))
    _check(r, model, cranks, crank_angle_exact_cells(r.t, cells=cells), rtol, atol)


def test_default_tolerance_window_is_narrow_and_the_run_unchanged_outside():
    """At the default rtol 1e-6 the window is 4 sqrt(eps / 1e-6) ~ 6e-5 wide in sigma_r / sigma_1: partitioning's own
    equations carry the motion except right at the crossing, and the run agrees with lagrange to the tolerance's
    global error (both dopri5, 2 s, two crossings)."""
    model = MODELS["double-four-bar"].factory()
    part = simulate(model, t_end=2.0, formulation="partitioning")
    lag = simulate(model, t_end=2.0)
    assert part.summary["singular_window_ratio"] == pytest.approx(window_ratio(1e-6))
    i = model.coordinate_index("bar1.theta")
    assert abs(part.q[-1, i] - lag.q[-1, i]) < AMPLIFICATION * len(part.t) * 1e-6
    assert len(part.summary["singular_crossings"]) == len(lag.summary["singular_crossings"]) == 2


def test_rate_bounds_the_time_to_and_from_each_crossing():
    """CrossingWindow._rate = |A_r^+ A'|_2: equal to the same norm with A' from gamma by polarisation (exact,
    linalg.tangent.jacobian_rate_times) to the central difference's eps^(2/3); and, by sigma_r(A + E) >= sigma_r(A) (1 -
    |A_r^+ E|_2) (first order in E = s A'), no crossing lies within 1 / rate of a state: on the double four-bar every
    state of a tight run over 3 s (three crossings) is at least 1 / rate from the nearest zero of sin theta of the exact
    reduction theta'' = -k cos theta."""
    model = double_four_bar()
    r = simulate(model, t_end=3.0, options=RunOptions(rtol=1e-10, atol=1e-12))
    form = make_formulation("nullspace", model, basis="flow")
    grid = np.linspace(0.0, 3.5, 350001)
    s = np.sin(crank_angle_exact(grid))
    zeros = grid[1:][s[:-1] * s[1:] < 0]
    assert len(zeros) == 4
    m = form.ws.m
    for i in range(0, len(r.t), 5):
        t, q, v = r.t[i], r.q[i], r.v[i]
        form._ratio(t, q)
        rate = form._rate(t, q, v)
        A = form.ws.velocity_constraints(t, q, np.zeros_like(q))[1][:m]
        rate_of_A = jacobian_rate_times(lambda u: form.ws.velocity_constraints(t, q, u)[3][:m], v, np.eye(model.n))
        U, sv, _ = np.linalg.svd(A, full_matrices=False)
        k = form._generic
        exact = np.linalg.norm((U[:, :k].T @ rate_of_A) / sv[:k, None], 2)
        assert rate == pytest.approx(exact, rel=1e3 * EPS ** (2 / 3))
        assert 1.0 / rate <= np.abs(zeros - t).min()
