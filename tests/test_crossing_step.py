"""The crossing step and the extended-precision projection (issue 12, tight tolerances): next to a singular
configuration the index-1 equations follow the level set Phi = c set by the projection's round-off, whose velocity
is ~c omega / rho^2 off the branch's, and a step controller creeps up to the crossing with steps ~0.05 |t - t*|
(2e-8 s at rtol 1e-12, atol 1e-14, where the step-collapse check of a 20 s run fires). With the residuals of the
projection in extended precision (formulations.extended_projection: double-double, or long double) and one step across the crossing chosen from the
smooth motion (simulation.crossings.CrossingMonitor.steer), the steps stay those of the smooth motion.

Assertions from the mechanics and the method: the exact reduction theta'' = -k cos theta of the parallelogram
chains (all cranks at theta, the couplers translating at the crank tips' velocity), the tableau's nodes, and the
global error bounded by the local errors the step control admits (test_crossing_window).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from multibody import RunOptions, simulate
from multibody.assembly import Workspace
from multibody.formulations import extended_projection
from multibody.formulations.extended_projection import extended_available, polish
from multibody.formulations.lagrange import PIN
from multibody.integrate.tableaux import DOP853, DOPRI5
from multibody.kinematics import KinematicTolerance, solve_positions, solve_velocities
from multibody.models.four_bars import crank_rate_constant, double_four_bar, n_four_bar
from multibody.simulation.crossing_step import crossing_node

#: e^(L t) over the run (test_crossing_window.AMPLIFICATION)
AMPLIFICATION = 100.0
#: the crossing step is CROSSING_FRACTION (1/2) of the proposed step and the step before it at least ~(STEER_SLACK - 1)
#: / STEER_SLACK of the crossing step's lead (1/6 of 0.55 / 2, ~1/20 of the proposed step), which near the crossing
#: is within a few times the run's largest step: no step below 1/1000 of the largest (before: 1e-5 of it)
SMALLEST_SHARE = 1e-3


def test_crossing_node_is_the_middle_of_the_widest_gap():
    """dopri5's nodes 0, 1/5, 3/10, 4/5, 8/9, 1: the widest gap is (3/10, 4/5); dop853's is (1/3, 3/5)."""
    assert crossing_node(DOPRI5) == pytest.approx((0.55, 0.25))
    assert crossing_node(DOP853) == pytest.approx(((1 / 3 + 3 / 5) / 2, (3 / 5 - 1 / 3) / 2))


def _branch_state(model, cells, theta, omega):
    """The parallelogram branch at crank angle theta and rate omega: cranks k at x = i + cos/2, y = sin/2; couplers
    at the crank tips, horizontal (models.four_bars.n_four_bar)."""
    q, v = np.zeros(model.n), np.zeros(model.n)
    c, s = np.cos(theta), np.sin(theta)
    for j, name in enumerate(model.coordinate_names):
        bar, comp = name.split(".")
        k = int(bar[3:])
        if k % 2:
            i = (k - 1) // 2
            q[j], v[j] = {"x": (i + c / 2, -s * omega / 2), "y": (s / 2, c * omega / 2), "theta": (theta, omega)}[comp]
        else:
            i = k // 2
            q[j], v[j] = {"x": (i - 0.5 + c, -s * omega), "y": (s, c * omega), "theta": (0.0, 0.0)}[comp]
    return q, v


#: (arithmetic, bound on |v - v_branch| / speed): double-double's round-off eps_dd / rho^2 ~ 5e-32 / 1e-6 is far below
#: the double rounding of v and of the branch state it is compared with (a few eps = 2.2e-16); long double's
#: eps_x / rho^2 ~ 1e-19 / 1e-6 = 1e-13
ARITHMETICS = [("double-double", 8 * np.finfo(float).eps), ("long double", 1e-11)]


@pytest.mark.parametrize("arithmetic, bound", ARITHMETICS)
def test_extended_projection_puts_the_velocity_on_the_branch(rng, arithmetic, bound):
    """At theta = 3e-3 rad from the singular configuration (sigma_r / sigma_1 ~ 1e-3, above the pin 1e-4) a state
    1e-9 off the branch, projected in double precision and polished, has the branch's velocity to the extended
    round-off over the squared distance (``bound``, times the speed 2 m/s); a projection in double leaves it on the
    level set of its own round-off, eps / rho^2 ~ 2e-10."""
    if not extended_available(arithmetic):
        pytest.skip("numpy's long double is double here")
    model = n_four_bar(cells=3)
    ws = Workspace(model)
    q_b, v_b = _branch_state(model, 3, 3e-3, -2.0)
    q = solve_positions(model, q_b + 1e-9 * rng.standard_normal(model.n), ws=ws, tol=KinematicTolerance(pin=PIN))
    v = solve_velocities(model, q, v_b + 1e-9 * rng.standard_normal(model.n), ws=ws,
                         tol=KinematicTolerance(consistency=np.inf, pin=PIN))
    q_p, v_p = polish(model, ws, 0.0, q, v, PIN, arithmetic)
    speed = np.abs(v_b).max()
    # on the branch up to its own motion along it (the 1e-9 shift moved the state along the branch)
    dtheta = q_p[model.coordinate_index("bar1.theta")] - 3e-3
    q_e, v_e = _branch_state(model, 3, 3e-3 + dtheta, v_p[model.coordinate_index("bar1.theta")])
    assert np.abs(q_p - q_e).max() < 1e-14
    assert np.abs(v_p - v_e).max() < bound * speed


def _exact(cells, t):
    k = crank_rate_constant(cells)
    sol = solve_ivp(lambda _, y: [y[1], -k * np.cos(y[0])], (0.0, float(t.max())), [np.pi / 2, -1.0],
                    method="DOP853", rtol=1e-13, atol=1e-14, dense_output=True)
    return sol.sol(t)[0]


@pytest.mark.parametrize("model, cells, formulation, integrator, arithmetic", [
    (double_four_bar, 2, "lagrange", "dopri5", "double-double"),
    (double_four_bar, 2, "lagrange", "dopri5", "long double"),
    (double_four_bar, 2, "lagrange", "dop853", "double-double"),
    (lambda: n_four_bar(cells=4), 4, "partitioning", "dopri5", "double-double"),
])
def test_steps_across_the_crossing_at_rtol_1e12(model, cells, formulation, integrator, arithmetic, monkeypatch):
    """rtol 1e-12, atol 1e-14 through the first crossing (t* = 0.71 s): no step below SMALLEST_SHARE of the largest
    step (before: ~0.05 |t - t*|, 2.4e-8 to 7.9e-8 s against largest steps of 4e-3 to 3e-2 s), the crossing found
    once, the cranks parallel and the tip within the sum of the admitted local errors; with either arithmetic of the
    extended projection (double-double on every platform; long double where it is wider than double)."""
    if not extended_available(arithmetic):
        pytest.skip("numpy's long double is double here")
    monkeypatch.setattr(extended_projection, "ARITHMETIC", arithmetic)
    m = model()
    r = simulate(m, t_end=1.0, formulation=formulation,
                 options=RunOptions(integrator=integrator, rtol=1e-12, atol=1e-14))
    h = np.diff(r.t)
    assert r.summary["min_step"] > SMALLEST_SHARE * h.max()
    assert len(r.summary["singular_crossings"]) == 1
    th = r.q[:, [m.coordinate_index(f"bar{2 * i + 1}.theta") for i in range(cells + 1)]]
    assert np.abs(th - th[:, :1]).max() < 1e-8
    exact = _exact(cells, r.t)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    scale = np.abs(np.concatenate([r.q, r.v], axis=1)).max()
    assert tip < AMPLIFICATION * len(r.t) * (1e-12 * scale + 1e-14)


@pytest.mark.parametrize("formulation", ["lagrange", "projection"])
def test_long_loose_steps_report_every_crossing(formulation):
    """dop853 at rtol = atol = 1e-4 takes steps of up to 0.5 s on the double four-bar; its dense output inside the
    0.44 s step across t = 2.657 is 2.2e-3 m off the constraints, and a located minimum there was dropped as off the
    branch (the limit was 1e-3 of the length scale, 2.1e-3 m). The limit now also admits OFF_BRANCH_TOLERANCES units
    of the run's tolerance: all 10 crossings of 10 s, at the zeros of sin theta of the exact reduction (within the
    phase error the tolerance allows, 0.05 s)."""
    k = crank_rate_constant()
    sol = solve_ivp(lambda _, y: [y[1], -k * np.cos(y[0])], (0.0, 10.0), [np.pi / 2, -1.0], method="DOP853",
                    rtol=1e-13, atol=1e-14, dense_output=True)
    t = np.linspace(0.0, 10.0, 200001)
    s = np.sin(sol.sol(t)[0])
    exact = t[np.nonzero(np.sign(s[1:]) != np.sign(s[:-1]))[0]]
    r = simulate(double_four_bar(), t_end=10.0, formulation=formulation,
                 options=RunOptions(integrator="dop853", rtol=1e-4, atol=1e-4))
    found = [c["t"] for c in r.summary["singular_crossings"]]
    assert len(exact) == 10 and len(found) == 10
    assert np.max(np.abs(np.array(found) - exact)) < 0.05


@pytest.mark.parametrize("integrator, tableau, tol", [("dop853", DOP853, 1e-4), ("dopri5", DOPRI5, 1e-4),
                                                      ("dopri5", DOPRI5, 1e-5), ("dop853", DOP853, 1e-6)])
def test_every_crossing_lies_in_the_widest_gap_of_its_step(integrator, tableau, tol):
    """Each crossing of the double four-bar is carried by a step that has it between the two nodes of the widest gap
    of the tableau (crossing_node: c* +- g of the step), at loose tolerances too: from a maximum of sigma_r / sigma_1
    the secant of the last two samples predicted no crossing while a 0.47 s step of dop853 at rtol 1e-4 reached
    across one (four of ten were inside ordinary steps; the crossings are found ahead on the extrapolated motion,
    CrossingMonitor._ahead)."""
    r = simulate(double_four_bar(), t_end=10.0, formulation="lagrange",
                 options=RunOptions(integrator=integrator, rtol=tol, atol=tol))
    node, gap = crossing_node(tableau)
    t, found = np.asarray(r.t), [c["t"] for c in r.summary["singular_crossings"]]
    j = np.searchsorted(t, found)
    where = (np.array(found) - t[j - 1]) / (t[j] - t[j - 1])
    assert len(found) == 10 and len(t) == r.summary["steps"] + 1       # every accepted step recorded
    assert np.all(np.abs(where - node) < gap)
