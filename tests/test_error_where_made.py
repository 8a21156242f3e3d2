"""The local error measured where it is made (issue 12): formulations that rebuild the velocity from part of their
state (partitioning: v = D(q)^T v_I + [0; eta], paper 001 eqs 7, 9; nullspace: x' = T w, paper 000 eq. 11b) must let the
step control see the error of the rebuilt velocity, and must not step over a crossing with equations whose Lipschitz
constant ~1 / |t - t*| the step does not resolve (formulations.crossing_window.RESOLVE_STEPS).

Assertions from the mathematics and the mechanics: v is linear in v_I at fixed q (eq. 7) and satisfies the velocity
constraints C v = 0 of a scleronomic model at both ends of the error; the exact reduction theta'' = -k cos theta of the
double four-bar (models.four_bars.crank_angle_exact) and the zeros of sin theta on it (the singular configurations);
the global error bounded by the local errors the step control admits (test_crossing_window.AMPLIFICATION).
"""
from __future__ import annotations

import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.analysis.partition import tangent_matrix
from multibody.formulations.crossing_window import RESOLVE_STEPS, _resolved_step, _unresolved
from multibody.formulations.registry import make_formulation
from multibody.models.four_bars import crank_angle_exact, double_four_bar

#: e^(L t) over the run (test_crossing_window.AMPLIFICATION)
AMPLIFICATION = 100.0


def _partitioning_at(t0=0.3):
    """A partitioning formulation on the double four-bar at a state of the branch (t0 s into the default run)."""
    model = double_four_bar()
    r = simulate(model, t_end=t0)
    form = make_formulation("partitioning", model)
    y = form.initial_state(t0, r.q[-1], r.v[-1])
    return model, form, y


def test_partitioning_measures_the_rebuilt_velocity(rng):
    """error_measure returns [dq, dv] with dv = v(y) - v(y - err): for an error of v_I alone dv = D^T dv_I (eq. 7, linear
    in v_I; its independent entries are dv_I itself), and both velocities satisfy C(q) v = 0 (scleronomic)."""
    model, form, y = _partitioning_at()
    n, t = model.n, 0.3
    k = len(form.part.independent)
    e = np.zeros(n + k)
    e[n:] = rng.standard_normal(k) * 1e-6
    err, y_old, y_new = form.error_measure(t - 1e-3, y, t, y, e)
    assert err.shape == y_new.shape == y_old.shape == (2 * n,)
    C = form.ws.constraints(t, y[:n], np.zeros(n))[1]
    D = tangent_matrix(C, form.part)[0]
    speed = np.abs(y_new[n:]).max()        # the difference of two velocities: round-off ~eps of the speed
    assert np.allclose(err[n:], D.T @ e[n:], rtol=0.0, atol=1e-14 * speed)
    assert np.allclose(err[n:][list(form.part.independent)], e[n:], rtol=0.0, atol=1e-14 * speed)
    e[:n] = rng.standard_normal(n) * 1e-6
    err, _, p_new = form.error_measure(t - 1e-3, y, t, y, e)
    q_low, v_low = y[:n] - e[:n], p_new[n:] - err[n:]
    C_low = form.ws.constraints(t, q_low, np.zeros(n))[1]
    scale = np.abs(p_new[n:]).max()
    assert np.abs(C @ p_new[n:]).max() < 1e-13 * scale and np.abs(C_low @ v_low).max() < 1e-13 * scale


def test_window_state_is_measured_as_it_is():
    """Inside the singular window the state is [q, v] (2 n entries): measured unchanged."""
    model, form, _ = _partitioning_at()
    y = np.arange(2.0 * model.n)
    e = np.full(2 * model.n, 1e-9)
    out = form.error_measure(0.0, y, 1.0, y, e)
    assert out[0] is e and out[1] is y and out[2] is y


def test_resolved_step_rule():
    """No crossing lies within 1 / rate of a state (rate = |A_r^+ A'|_2, crossing_window.CrossingWindow._rate): a step h
    with RESOLVE_STEPS h rate > 1 may end fewer than RESOLVE_STEPS steps from a crossing (the window opens), and the next
    step of the rebuilt equations is capped at 1 / (RESOLVE_STEPS rate); a configuration at rest sets no cap."""
    assert _unresolved(1.0, 1.01 / RESOLVE_STEPS) and not _unresolved(1.0, 0.99 / RESOLVE_STEPS)
    assert not _unresolved(5.0, None) and not _unresolved(0.0, 10.0)
    assert _resolved_step(4.0) == pytest.approx(0.25 / RESOLVE_STEPS)
    assert _resolved_step(0.0) is None


def test_partitioning_dop853_rtol_1e10_within_the_admitted_local_errors():
    """partitioning, dop853, rtol = atol = 1e-10 on the double four-bar for 10 s (10 crossings): the cranks parallel and
    the crank tip on theta'' = -k cos theta within the sum of the admitted local errors, with the error measured on
    [q, v] (before: measured on [q, v_I], 2.8e-7 m, and 2.1e-6 m on the N-four-bar with 10 cells)."""
    model = double_four_bar()
    rtol = atol = 1e-10
    r = simulate(model, t_end=10.0, formulation="partitioning",
                 options=RunOptions(integrator="dop853", rtol=rtol, atol=atol))
    th = r.q[:, [model.coordinate_index(c) for c in ("bar1.theta", "bar3.theta", "bar5.theta")]]
    assert np.abs(th - th[:, :1]).max() < 1e-8
    exact = crank_angle_exact(r.t)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    scale = np.abs(np.concatenate([r.q, r.v], axis=1)).max()
    assert tip < AMPLIFICATION * len(r.t) * (rtol * scale + atol)
    assert len(r.summary["singular_crossings"]) == 10


def test_flow_basis_at_rtol_1e4_reports_the_crossings_of_the_motion():
    """nullspace --basis flow, dopri5, rtol = atol = 1e-4 on the double four-bar, 10 s: 10 crossings at the zeros of
    sin theta of the exact reduction, within the phase error such a tolerance leaves (0.1 s). Before, the flow resumed
    1.2e-5 (in sigma_r / sigma_1) behind each crossing, its first 0.15 s step gained 4.6e-3 of the energy unseen by its
    error estimate, the crank ran ahead and crossed an 11th time before 10 s (a real crossing of a wrong motion)."""
    t = np.linspace(0.0, 10.0, 200001)
    s = np.sin(crank_angle_exact(t))
    exact = t[np.nonzero(np.sign(s[1:]) != np.sign(s[:-1]))[0]]
    r = simulate(double_four_bar(), t_end=10.0, formulation="nullspace", formulation_options={"basis": "flow"},
                 options=RunOptions(integrator="dopri5", rtol=1e-4, atol=1e-4))
    found = np.array([c["t"] for c in r.summary["singular_crossings"]])
    assert len(exact) == 10 and len(found) == 10
    assert np.max(np.abs(found - exact)) < 0.1
