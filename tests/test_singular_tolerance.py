"""Tight tolerances through singular configurations (issue 7 item 2): the projection leaves no residual
that the index-1 equations could carry onto the other assembly branch.

The double four-bar (models.four_bars) at crank angle theta: the parallel branch has all three cranks
at theta; near the all-horizontal configuration (theta = 0) the constraints are Phi ~ theta * d to first
order in the crank spread d, so |Phi| <= 1e-12 m (the position tolerance) allows d ~ 1e-12 / theta.
"""
from __future__ import annotations

import re
import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.assembly import Workspace
from multibody.kinematics import KinematicTolerance, solve_positions
from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact, double_four_bar

CRANKS = ("bar1.theta", "bar3.theta", "bar5.theta")


def configuration(theta, d=0.0):
    """q (15,) of the double four-bar with crank 1 at theta, cranks 3 and 5 at theta + d (cell 2 a
    parallelogram, coupler 4 horizontal) and coupler 2 at angle d ending at crank 3's tip (cranks hinged at
    x = 0, 1, 2, length 1 m, bodies at their centres). d = 0: the parallel branch. Otherwise only hinge A
    (crank 1's tip vs coupler 2's left end) is violated, by (1 + cos(theta + d) - cos d - cos theta,
    sin(theta + d) - sin d - sin theta) = (-theta d, O(theta d (theta + d))): |Phi| ~ theta d."""
    q, b = np.zeros(15), theta + d
    for body, x0, a in ((0, 0.0, theta), (2, 1.0, b), (4, 2.0, b)):
        q[3 * body: 3 * body + 3] = (x0 + 0.5 * np.cos(a), 0.5 * np.sin(a), a)
    tip3 = np.array([1.0 + np.cos(b), np.sin(b)])
    q[3:6] = (*(tip3 - 0.5 * np.array([np.cos(d), np.sin(d)])), d)
    q[9:12] = (*(tip3 + [0.5, 0.0]), 0.0)
    return q


def test_projection_removes_a_residual_below_the_tolerance_near_the_singularity():
    """Cranks 3 and 5 turned by d = 5e-9 rad against crank 1 at theta = 1e-4 rad from the singular
    configuration: |Phi| ~ theta d = 5e-13 m passes the position test, yet the configuration is d off the
    branch. One Gauss-Newton step (kinematics.POLISH_STEPS) leaves an error <= |A^+| K |e0|^2 / 2 (Newton's
    quadratic convergence; e0 = q - q_branch, |A^+| = 1 / sigma_min(A) ~ 0.4 theta here, K <= 2 m^-1 bounds
    the curvature of joint constraints with marker offsets <= 0.5 m and unit lengths), ~1e-12 rad;
    without it the cranks stay d apart."""
    model = MODELS["double-four-bar"].factory()
    ws, theta, d = Workspace(model), 1e-4, 5e-9
    q = configuration(theta, d)
    i1, i3, i5 = (model.coordinate_names.index(c) for c in CRANKS)
    phi = ws.constraints(0.0, q, np.zeros(15))[0]
    assert np.abs(phi).max() == pytest.approx(theta * d, rel=1e-3)
    assert np.abs(phi).max() <= KinematicTolerance().position * model.length_scale   # passes the test
    old = solve_positions(model, q, ws=ws, tol=KinematicTolerance(polish=0))
    assert abs(old[i3] - old[i1]) > d / 2
    new = solve_positions(model, q, ws=ws)
    e0 = np.linalg.norm(q - configuration(theta))
    sigma_min = np.linalg.svd(ws.constraints(0.0, q, np.zeros(15))[1], compute_uv=False)[-1]
    bound = e0 ** 2 / sigma_min      # |e1| <= |A^+| K |e0|^2 / 2 with K <= 2; a spread is <= 2 |e1|
    assert max(abs(new[i3] - new[i1]), abs(new[i5] - new[i1])) < 2 * bound < d / 500
    assert np.abs(ws.constraints(0.0, new, np.zeros(15))[0]).max() < 100 * np.finfo(float).eps   # ~eps L
    assert np.abs(ws.constraints(0.0, configuration(theta), np.zeros(15))[0]).max() < 10 * np.finfo(float).eps


@pytest.mark.parametrize("integrator, fast, omega0", [("dopri5", False, -1.0), ("dopri5", True, -1.05),
                                                     ("dop853", True, -1.0)])
def test_rtol_1e10_stays_on_the_branch(integrator, fast, omega0):
    """10 s, ~10 singular crossings at rtol 1e-10 (the first two cases switched branches silently before
    the projection's polish step: crank spread 69 and 36 rad). The cranks stay parallel (0 on the branch),
    the tip follows the exact reduction theta'' = -k cos theta within the benchmark bound 1e-6 m, and no
    step collapsed (StepWatch: every step >= 1e-9 of the run)."""
    r = simulate(double_four_bar(omega0=omega0), t_end=10.0,
                 options=RunOptions(integrator=integrator, rtol=1e-10, atol=1e-12), formulation_options={"fast": fast})
    th = np.stack([r.column("q", c) for c in CRANKS], axis=1)
    assert np.abs(th - th[:, :1]).max() < 1e-9
    exact = crank_angle_exact(r.t, omega0=omega0)
    assert np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max() < 1e-6
    assert np.count_nonzero(np.diff(np.sign(np.sin(th[:, 0])))) >= 8   # crossed the singular configurations
    assert r.summary["min_step"] >= 1e-9 * 10.0


def test_failure_hint_names_the_singular_configuration():
    """A failed run near the singular configuration (theta = 1e-6 rad: s_min / s_max ~ 0.4 theta / 2.1,
    from the SVD of the Jacobian) says so; at theta = 0.5 rad (regular) nothing is added."""
    from multibody.formulations.lagrange import Lagrange
    form = Lagrange(MODELS["double-four-bar"].factory())
    near = form.failure_hint(0.0, np.r_[configuration(1e-6), np.zeros(15)])
    assert "singular configuration" in near and "another assembly branch" in near
    assert form.failure_hint(0.0, np.r_[configuration(0.5), np.zeros(15)]) == ""


def test_step_watch_stops_a_run_whose_step_collapses_near_the_singular_configuration():
    """StepWatch (simulation.step_watch): accepted steps of 1e-2 s pass; one of 1e-14 s (below 1e-9 of a
    10 s run) at theta = 1e-7 rad from the singular configuration is a SimulationError naming the time and
    the singular configuration; a clipped last step of a segment is not a collapse, nor a tiny first step (the
    starting step for a tiny atol) that then grows: only a fall from above the limit is."""
    from types import SimpleNamespace
    from multibody.errors import SimulationError
    from multibody.formulations.lagrange import Lagrange
    from multibody.simulation.step_watch import StepWatch
    form = Lagrange(MODELS["double-four-bar"].factory())
    healthy = StepWatch(form, 0.0, 10.0)
    healthy.accepted(SimpleNamespace(h=1e-2, t=0.5, y=np.r_[configuration(0.5), np.zeros(15)]))
    healthy.accepted(SimpleNamespace(h=1e-14, t=10.0, y=np.r_[configuration(0.5), np.zeros(15)]), at_stop=True)
    assert healthy.summary()["min_step"] == 1e-2
    watch = StepWatch(form, 0.0, 10.0)
    watch.accepted(SimpleNamespace(h=1e-14, t=1e-14, y=np.r_[configuration(0.5), np.zeros(15)]))  # a tiny first
    watch.accepted(SimpleNamespace(h=1e-2, t=0.6, y=np.r_[configuration(0.5), np.zeros(15)]))     # step, growing
    with pytest.raises(SimulationError, match=r"t = 0\.7: the step size collapsed.*singular configuration"):
        watch.accepted(SimpleNamespace(h=1e-14, t=0.7, y=np.r_[configuration(1e-7), np.zeros(15)]))


def _fold_velocity(v):
    """At the singular configuration (theta = 0) crank 1's tip lies on crank 3's hinge (x = 1 m): the other branch
    of cell 1 keeps crank 1 still while coupler 2 lies on crank 3 and turns with it about that hinge. ``v`` on the
    parallel branch at theta = 0 (crank rate 1 rad/s) -> the velocity on that branch: crank 1 at rest, coupler 2
    moving as crank 3 (centre 0.5 m/s up, 1 rad/s), cell 2 as before."""
    fold = v.copy()
    fold[0:3] = 0.0
    fold[3:6] = v[6:9]
    return fold


def test_the_two_branch_tangents_at_the_singular_configuration_differ_by_half_the_speed():
    """Both velocities satisfy the velocity constraints A v = 0 at theta = 0 (to round-off), and the fold turns the
    weighted velocity (sqrt of the mass diagonal: 1 kg for translations, 1/12 kg m^2 for rotations) by 0.5 of the
    speed (crank 1's centre loses 0.5 m/s; the largest weighted speed is the coupler's 1 m/s): a projection onto
    the other branch turns the velocity by 0.5, five times StepWatch's BRANCH_TURN, at every tolerance."""
    from multibody.simulation.step_watch import BRANCH_TURN, branch_move
    model = MODELS["double-four-bar"].factory()
    q, v = _branch_state(0.0)
    A = Workspace(model).constraints(0.0, q, np.zeros(15))[1]
    fold = _fold_velocity(v)
    assert np.abs(A @ v).max() < 1e-15 and np.abs(A @ fold).max() < 1e-15
    for rtol in (1e-4, 1e-8, 1e-12):
        turn, shift, _ = branch_move(model, np.r_[q, v], np.r_[q, fold], rtol, rtol / 100)
        assert turn == pytest.approx(0.5, rel=1e-12) and shift == 0.0
        assert turn > 5 * BRANCH_TURN - 1e-12


@pytest.mark.parametrize("rtol", [1e-4, 1e-8, 1e-12])
def test_step_watch_stops_a_projection_onto_another_branch(rtol):
    """StepWatch at every tolerance: the parallel-branch velocity replaced by the fold's (turn 0.5 of the speed) is
    a SimulationError naming the time and the cause. The earlier limit (1e8 error scales atol + rtol |y|) let it
    pass at rtol 1e-4 and 1e-8: the move is 1 m/s, ~1 / rtol scales. A move of 1e3 tolerances rtol |v| (within
    the normal error of 1e4 tolerances that the error control admits, linalg.rank.NORMAL_ERROR_WEIGHT) passes."""
    from types import SimpleNamespace
    from multibody.errors import SimulationError
    from multibody.formulations.lagrange import Lagrange
    from multibody.simulation.step_watch import StepWatch
    form = Lagrange(MODELS["double-four-bar"].factory())
    watch = StepWatch(form, 0.0, 10.0, rtol=rtol, atol=rtol / 100)
    q, v = _branch_state(0.0)
    step = SimpleNamespace(h=1e-3, t=0.71, y=np.r_[q, v])
    watch.accepted(step, np.r_[q, v * (1.0 + 1e3 * rtol)])
    assert watch.summary()["max_branch_move"] == pytest.approx(1e3 * rtol / (1 + 1e3 * rtol), rel=1e-6)
    with pytest.raises(SimulationError, match=r"t = 0\.71: the projection .* turned the velocity by 0\.5 of the "
                                              r"speed .* left its assembly branch"):
        watch.accepted(step, np.r_[q, _fold_velocity(v)])


def test_step_watch_measures_a_turn_at_rest_against_the_absolute_tolerance():
    """A mechanism at rest has no direction to turn: a projection that leaves a velocity of 1e-16 m/s (round-off)
    is measured against the speed floor 100 atol (FLOOR_SCALES), a turn of 1e-16 / (100 * 1e-8) = 1e-10, and passes;
    one that leaves 1 m/s is a switch."""
    from types import SimpleNamespace
    from multibody.errors import SimulationError
    from multibody.formulations.lagrange import Lagrange
    from multibody.simulation.step_watch import StepWatch
    watch = StepWatch(Lagrange(MODELS["double-four-bar"].factory()), 0.0, 10.0, rtol=1e-6, atol=1e-8)
    q, v = _branch_state(0.0)      # couplers at 1 m/s, the largest weighted component (weight 1)
    step = SimpleNamespace(h=1e-3, t=0.5, y=np.r_[q, np.zeros(15)])
    watch.accepted(step, np.r_[q, 1e-16 * v])
    assert watch.summary()["max_branch_move"] == pytest.approx(1e-10, rel=1e-9)
    with pytest.raises(SimulationError, match=r"t = 0\.5: the projection .* turned the velocity by 1 of the speed"):
        watch.accepted(step, np.r_[q, v])


def test_step_watch_stops_an_action_that_changes_the_velocity_beyond_the_tolerance():
    """At rtol 1e-12, atol 1e-14 a change of 1e-5 of the speed (1 m/s) is no branch switch (< BRANCH_TURN) but
    1e-5 / (1e-12 + 1e-14 / 1) = 9.9e6 tolerances, more than
    ACTION_TOLERANCES = 1e5 (ten times the normal error the error control admits): the answer's error would no
    longer be the tolerance's, and the run stops naming the time and the cause."""
    from types import SimpleNamespace
    from multibody.errors import SimulationError
    from multibody.formulations.lagrange import Lagrange
    from multibody.simulation.step_watch import StepWatch
    watch = StepWatch(Lagrange(MODELS["double-four-bar"].factory()), 0.0, 10.0, rtol=1e-12, atol=1e-14)
    q, v = _branch_state(1e-5)
    step = SimpleNamespace(h=1e-3, t=0.72, y=np.r_[q, v])
    with pytest.raises(SimulationError, match=r"t = 0\.72: .* changed the velocity by 1\.0e-05 of the speed, "
                                              r"9\.9e\+06 times the tolerance .* cannot vouch for its accuracy"):
        watch.accepted(step, np.r_[q, v * (1.0 + 1e-5)])


@pytest.mark.parametrize("rtol", [1e-4, 1e-10])
def test_a_run_that_lands_on_the_other_branch_exits_non_zero(rtol, monkeypatch):
    """End to end, ``multibody run``: the first projection after crank 1 passes the singular configuration
    (sin theta changes sign; t_c from the exact reduction theta'' = -k cos theta) is handed the fold's velocity, as
    if the step had landed on the other branch; the run exits non-zero, names the time (that of the first
    accepted step past t_c, within 0.1 s of it: the steps at rtol 1e-4 are ~0.05 s) and the cause, saves nothing."""
    from click.testing import CliRunner
    from multibody.cli import main
    from multibody.formulations.lagrange import Lagrange
    original, seen = Lagrange.after_step, {}

    def landing_on_the_fold(self, t, y):
        sign = np.sign(np.sin(y[2]))
        if seen.setdefault("sign", sign) != sign and not seen.get("done"):
            seen["done"] = True
            y = y.copy()
            y[15:] = _fold_velocity(y[15:])
        seen["sign"] = sign
        return original(self, t, y)

    monkeypatch.setattr(Lagrange, "after_step", landing_on_the_fold)
    with CliRunner().isolated_filesystem():
        out = CliRunner().invoke(main, ["run", "double-four-bar", "--t-end", "1", "--rtol", f"{rtol:g}", "--atol",
                                        f"{rtol / 100:g}", "--out", "r.h5"])
        import os
        saved = os.path.exists("r.h5")
    text = out.output + (getattr(out, "stderr", "") or "")
    assert seen.get("done") and out.exit_code != 0 and not saved
    found = re.search(r"at t = ([\d.]+): the projection .* turned the velocity by .* left its assembly branch", text)
    t = np.linspace(0.0, 1.0, 100001)
    t_c = t[np.argmax(np.sin(crank_angle_exact(t)) * np.sin(crank_angle_exact(t[:1])) < 0)]
    assert found and t_c - 1e-4 <= float(found.group(1)) < t_c + 0.1


def _branch_state(theta):
    """(q, v) on the parallel branch at crank angle theta and crank rate 1 rad/s: crank centres (0.5 m from
    their hinges) at 0.5 (-sin theta, cos theta) m/s, couplers translating with the crank tips."""
    q, v = configuration(theta), np.zeros(15)
    for body in (0, 2, 4):
        v[3 * body: 3 * body + 3] = (-0.5 * np.sin(theta), 0.5 * np.cos(theta), 1.0)
    v[3:6] = v[9:12] = (-np.sin(theta), np.cos(theta), 0.0)
    return q, v


@pytest.mark.parametrize("theta", [1e-2, 1e-3, 5e-4, 1e-5, 1e-7])
def test_projection_accelerations_through_the_window(theta):
    """Paper 002 eq. 7 outside the window s_min < PIN s_max (s_min / s_max = 0.1775 theta here, from the SVD),
    Gauss's principle (6) in the singular-value basis inside it. On the parallel branch every crank accelerates by
    theta'' = -k cos theta (exact reduction, k = crank_rate_constant()). Outside and at the edge of the window
    (theta = 5e-4, s_min / s_max = 8.9e-5) that holds within the round-off of eq. 7, eps (s_max / s_min)^2 |q''|
    (A M^-1 A^T has that condition number; factor 1e3 for the size of the system): both evaluations agree at
    the edge, the right-hand side does not jump. Deep inside (1e-5, 1e-7) every constraint direction with
    s_i > PIN s_max still holds to round-off (U_k^T (A q'' - gamma) ~ eps (s_max |q''| + |gamma|)): only the vanishing
    directions follow the unconstrained dynamics."""
    from multibody.formulations.lagrange import PIN
    from multibody.formulations.projection import Projection
    from multibody.models.four_bars import crank_rate_constant
    model = MODELS["double-four-bar"].factory()
    form = Projection(model)
    q, v = _branch_state(theta)
    terms = form.ws.terms(0.0, q, v)
    U, s, _ = np.linalg.svd(terms.A)
    ratio = s[-1] / s[0]
    assert (ratio < PIN) == (theta < 5.6e-4)
    form.initial_state(0.0, q, v)
    vdot = form.accelerations(0.0, q, v).vdot
    exact = -crank_rate_constant() * np.cos(theta)
    cranks = [model.coordinate_names.index(c) for c in CRANKS]
    if theta >= 5e-4:
        bound = 1e3 * np.finfo(float).eps / ratio ** 2 * abs(exact)
        np.testing.assert_allclose(vdot[cranks], exact, rtol=0, atol=bound)
    if ratio < PIN:
        pinned = U[:, : len(s)][:, s > PIN * s[0]]
        scale = s[0] * np.abs(vdot).max() + np.abs(terms.gamma).max()
        assert np.abs(pinned.T @ (terms.A @ vdot - terms.gamma)).max() < 1e2 * np.finfo(float).eps * scale


@pytest.mark.parametrize("atol", [1e-12, 1e-14])
def test_projection_rtol_1e12_stays_on_the_branch(atol):
    """projection at rtol 1e-12 (before issue 12's window: the step collapsed to 9e-9 s at t = 0.714): 10 s,
    ten crossings, cranks parallel, tip within 1e-6 m of theta'' = -k cos theta, no step below 1e-9 of the run."""
    r = simulate(double_four_bar(), t_end=10.0, formulation="projection",
                 options=RunOptions(integrator="dop853", rtol=1e-12, atol=atol))
    th = np.stack([r.column("q", c) for c in CRANKS], axis=1)
    assert np.abs(th - th[:, :1]).max() < 1e-9
    exact = crank_angle_exact(r.t)
    assert np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max() < 1e-6
    assert len(r.summary["singular_crossings"]) == 10
    assert r.summary["min_step"] >= 1e-9 * 10.0
