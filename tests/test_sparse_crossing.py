"""The sparse path through a singular configuration at tight tolerances (issue 12): the dense window of
formulations.lagrange_sparse and the crossing step on the sparse monitor (simulation.crossings_sparse).

The N-four-bar with 25 cells (n = 153, the smallest on the sparse path) has the 40-cell chain's structure: all its
cells turn singular together when the cranks are horizontal (rank drop 25). Assertions from the mechanics and linear
algebra: the exact reduction theta'' = -k cos theta (all cranks at theta, couplers translating), the norm inequalities
|S|_2 <= |S|_1 <= sqrt(m) |S|_2 of a symmetric m x m matrix, and the global error bounded by the local errors the
step control admits (test_crossing_step.AMPLIFICATION).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from multibody import RunOptions, simulate
from multibody.assembly import Workspace
from multibody.formulations.lagrange_sparse import DENSE_WINDOW, conditioning
from multibody.models.four_bars import crank_rate_constant, n_four_bar

from test_crossing_step import AMPLIFICATION, SMALLEST_SHARE, _branch_state

CELLS = 25


@pytest.mark.parametrize("theta", [0.3, 1e-2, 1e-4, 1e-6])
def test_conditioning_is_the_singular_value_ratio(theta):
    """conditioning(A) = sqrt(lambda_min(S) / |S|_1), S = A A^T: between sigma_min / sigma_max / m^(1/4) and
    sigma_min / sigma_max (|S|_2 <= |S|_1 <= sqrt(m) |S|_2), up to the Lanczos convergence."""
    model = n_four_bar(cells=CELLS)
    q, v = _branch_state(model, CELLS, theta, -4.8)
    A = Workspace(model).sparse_constraints(0.0, q, v)[1]
    s = np.linalg.svd(A.toarray(), compute_uv=False)
    ratio = conditioning(A) / (s[-1] / s[0])
    assert A.shape[0] ** -0.25 <= ratio <= 1 + 1e-6


def _exact(t):
    k = crank_rate_constant(CELLS)
    sol = solve_ivp(lambda _, y: [y[1], -k * np.cos(y[0])], (0.0, float(t.max())), [np.pi / 2, -1.0],
                    method="DOP853", rtol=1e-13, atol=1e-14, dense_output=True)
    return sol.sol(t)[0]


@pytest.mark.parametrize("integrator, atol", [("dopri5", 1e-14), ("dopri5", 1e-12), ("dop853", 1e-14)])
def test_sparse_path_steps_across_the_crossing_at_rtol_1e12(integrator, atol):
    """rtol 1e-12 through the first crossing (t* = 0.72 s) on the sparse path: it copes instead of stopping (before:
    a loud stop 4e-5 s before the crossing, the velocity projection moving the velocity by 2e5 tolerances). The
    dense window is taken (every state within sigma_min / sigma_max < DENSE_WINDOW), no step below SMALLEST_SHARE of
    the largest (the crossing step), the crossing found once with the rank drop of all cells, the cranks parallel
    and the tip within the sum of the admitted local errors."""
    model = n_four_bar(cells=CELLS)
    r = simulate(model, t_end=1.0, options=RunOptions(integrator=integrator, rtol=1e-12, atol=atol))
    assert_crossed_on_the_branch(model, r, 1e-12, atol)


def assert_crossed_on_the_branch(model, r, rtol, atol):
    """A run of the CELLS-cell chain to t = 1 on the sparse path: the dense window taken, no step below SMALLEST_SHARE
    of the largest, the crossing found once with the rank drop of all cells, the cranks parallel and the tip within
    the sum of the admitted local errors (AMPLIFICATION per step)."""
    s = r.summary
    assert "sparse" in s["linear_algebra"] and s["dense_window_steps"] > 0
    assert s["min_step"] > SMALLEST_SHARE * np.diff(r.t).max()
    assert [c["rank_drop"] for c in s["singular_crossings"]] == [CELLS]
    th = r.q[:, [model.coordinate_index(f"bar{2 * i + 1}.theta") for i in range(CELLS + 1)]]
    assert np.abs(th - th[:, :1]).max() < 1e-8
    exact = _exact(r.t)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    scale = np.abs(np.concatenate([r.q, r.v], axis=1)).max()
    assert tip < AMPLIFICATION * len(r.t) * (rtol * scale + atol)


def test_the_window_opens_only_near_the_crossing():
    """The dense window is open exactly where sigma_min / sigma_max < DENSE_WINDOW (crank angles 0.3 and 1e-3 rad:
    ratios ~8e-3 and ~3e-5 for 25 cells, far from the threshold on either side)."""
    from multibody.formulations.lagrange import Lagrange
    model = n_four_bar(cells=CELLS)
    form = Lagrange(model)
    for theta in (0.3, 1e-3):
        q, v = _branch_state(model, CELLS, theta, -4.8)
        s = np.linalg.svd(form.ws.sparse_constraints(0.0, q, v)[1].toarray(), compute_uv=False)
        form.sparse_path.last = None
        form.sparse_path.accepted(0.0, q)
        assert form.sparse_path.window is bool(s[-1] / s[0] < DENSE_WINDOW)
    assert form.sparse_path.window


def test_no_window_where_no_singular_configuration_exists():
    """An open chain of revolute joints has full row rank at every configuration (analysis.structural_rank): the
    sparse path takes no conditioning estimate per step there (issue 16's chains keep their cost)."""
    from multibody.formulations.lagrange import Lagrange
    from test_sparse import chain
    form = Lagrange(chain(60))
    assert form.sparse and not form.sparse_path.watch
    q = form.model.q0
    form.sparse_path.accepted(0.0, q)
    assert form.sparse_path.last is None and not form.sparse_path.window


def test_long_loose_steps_on_the_sparse_path_report_every_crossing():
    """dop853 at rtol 1e-4, atol 1e-6 takes steps of ~0.25 s on the 81-bar N-four-bar: the samples around the crossing
    at t = 0.72 lay ~0.3 rad of crank angle from it, their pivot ratio 0.06 of its largest, and the crossing was lost
    with the screen at 0.05 (crossings_sparse.SCREEN). Both crossings of the first 1.3 s (the zeros of sin theta of the
    exact reduction), each with the rank drop of all 40 cells."""
    from multibody.models.modified_four_bars import crank_angle_exact_cells
    r = simulate(n_four_bar(cells=40), t_end=1.3, options=RunOptions(integrator="dop853", rtol=1e-4, atol=1e-6))
    t = np.linspace(0.0, 1.3, 13001)
    s = np.sin(crank_angle_exact_cells(t, cells=40))
    exact = t[np.flatnonzero(s[:-1] * s[1:] < 0)]
    found = r.summary["singular_crossings"]
    assert len(found) == len(exact) == 2
    assert np.abs(np.array([c["t"] for c in found]) - exact).max() < 0.01
    assert {c["rank_drop"] for c in found} == {40}


@pytest.mark.parametrize("formulation, integrator, rtol, atol", [
    ("partitioning", "dop853", 1e-6, 1e-8), ("partitioning", "dopri5", 1e-4, 1e-4), ("lagrange", "dop853", 1e-4, 1e-4)])
def test_every_crossing_lies_in_the_widest_gap_of_its_step(formulation, integrator, rtol, atol):
    """On the sparse path too each crossing of the first 3 s (three, t* = 0.72, 1.24, 2.69 s of theta'' = -k cos
    theta) is carried by a step that has it between the two nodes of the widest gap of the tableau (crossing_node:
    c* +- g of the step): the sparse monitor looks ahead where sigma_min / sigma_max does not steer
    (SparseCrossingMonitor._looks_ahead; before, steps of 0.13-0.29 s from ~1 rad before a crossing had it at 0.26,
    0.76, 0.83 or 0.98 of the step, next to a stage)."""
    from multibody.integrate.tableaux import DOP853, DOPRI5
    from multibody.simulation.crossing_step import crossing_node
    r = simulate(n_four_bar(cells=CELLS), t_end=3.0, formulation=formulation,
                 options=RunOptions(integrator=integrator, rtol=rtol, atol=atol))
    node, gap = crossing_node(DOP853 if integrator == "dop853" else DOPRI5)
    t, found = np.asarray(r.t), [c["t"] for c in r.summary["singular_crossings"]]
    j = np.searchsorted(t, found)
    where = (np.array(found) - t[j - 1]) / (t[j] - t[j - 1])
    assert len(found) == 3 and len(t) == r.summary["steps"] + 1       # every accepted step recorded
    assert np.all(np.abs(where - node) < gap)
