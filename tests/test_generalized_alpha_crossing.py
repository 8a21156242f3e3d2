"""generalized-alpha through singular configurations whatever the step grid, and with redundant constraint rows
(issue 12; integrate/generalized_alpha_crossing.py, integrate/generalized_alpha_rank.py).

The reference numbers are those of the exact reduction of the parallelogram chains, theta'' = -k cos theta
(models.modified_four_bars.crank_angle_exact_cells): the crossings are the zeros of sin theta (every bar
collinear), the cranks stay parallel on the run's branch, and the crank tip follows theta."""
import numpy as np
import pytest
from scipy.optimize import brentq

from multibody import RunOptions, simulate
from multibody.models import MODELS
from multibody.models.four_bars import double_four_bar, n_four_bar
from multibody.models.modified_four_bars import crank_angle_exact_cells, double_four_bar_modified

#: the crank tip of a second-order method at h <= 1e-3 over ~1 s (the IFToMM benchmark's precision is 1e-3 m)
TIP = 1e-3


def first_crossing(cells: int) -> float:
    """t* of the first zero of sin theta of the exact reduction (the cranks horizontal)."""
    return brentq(lambda t: np.sin(crank_angle_exact_cells(t, cells=cells)[0]), 0.5, 0.9, xtol=1e-14)


def check_branch(r, cells: int, crossings: list, tip: float = TIP) -> None:
    """Cranks parallel (the parallelogram branch; on the other branch they turn apart by O(1)): to the local error
    of a step, O(h^3), at a pinned step, whose vanishing direction is the scheme's prediction (below 1e-6 rad, the
    matrix's OFF_BRANCH in benchmarks/singular_matrix.py), and to the Newton tolerance at the end; the crank tip on
    theta of the exact reduction; every crossing reported at the exact time (to the run's own phase error, the tip
    error over the crank length)."""
    labels = [c for c in r.series["q"].labels if c.endswith(".theta") and int(c[3:-6]) % 2 == 1]
    th = np.stack([r.column("q", c) for c in labels], axis=1)
    assert np.abs(th - th[:, :1]).max() < 1e-6
    assert np.abs(th[-1] - th[-1, 0]).max() < 1e-9
    exact = crank_angle_exact_cells(r.t, cells=cells)
    err = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    assert err < tip, err
    found = [c["t"] for c in r.summary["singular_crossings"]]
    assert len(found) == len(crossings), found
    np.testing.assert_allclose(found, crossings, atol=max(err, 1e-9))


def test_a_grid_point_on_the_crossing():
    """Double four-bar, h = t* / 714: the 714th grid point is the crossing itself, where A (rank 12 of 14) and the
    iteration matrix are singular. That step takes the rank-revealing solve (pinned steps >= 1) and the run
    continues on the branch through this crossing and the next."""
    t_star = first_crossing(2)
    t_next = brentq(lambda t: np.sin(crank_angle_exact_cells(t, cells=2)[0]), 1.1, 1.3, xtol=1e-14)
    r = simulate(double_four_bar(), t_end=1.3, options=RunOptions(integrator="generalized-alpha", step=t_star / 714))
    check_branch(r, 2, [t_star, t_next])
    assert r.summary["pinned_steps"] >= 1


def test_a_grid_point_just_before_the_crossing():
    """N-four-bar with 10 cells, h ~ 1e-4 with a grid point 8e-6 s before t* (sigma_r / sigma_1 ~ 2e-6 there):
    before this, Newton stalled at t = 0.720267 with the step halved six times."""
    t_star = first_crossing(10)
    h = (t_star - 8e-6) / 7203
    r = simulate(n_four_bar(cells=10), t_end=0.75, options=RunOptions(integrator="generalized-alpha", step=h))
    check_branch(r, 10, [t_star], tip=1e-6)


def test_redundant_rows_give_the_motion_of_the_independent_ones():
    """The pendulum with its constraint written twice (paper 000 eq. 29d): the motion is unique, so the run with
    the redundant row and the rank-revealing solve takes the steps of the run without it (to the Newton
    tolerance), and its minimum-norm multipliers split the rod force equally between the two equal rows."""
    opts = RunOptions(integrator="generalized-alpha", step=1e-2)
    single = simulate(MODELS["pendulum"].factory(), t_end=1.0, options=opts)
    double = simulate(MODELS["pendulum-redundant"].factory(), t_end=1.0, options=opts)
    assert double.summary["redundant_rows"] == 1
    np.testing.assert_allclose(double.q, single.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(np.hypot(*double.q.T), 1.0, atol=1e-10)


def test_an_overconstrained_chain_passes_its_crossing():
    """The modified double four-bar (one redundant hinge row, rank 11 of 12; at the crossing rank 10) through its
    first crossing: cranks parallel, the crossing at t*, the crank tip on the exact reduction."""
    r = simulate(double_four_bar_modified(), t_end=0.8, options=RunOptions(integrator="generalized-alpha", step=1e-3))
    assert r.summary["redundant_rows"] == 1
    check_branch(r, 2, [first_crossing(2)])


def test_roundoff_floor_of_the_residual():
    """The balance test admits the residual's own round-off: 64 eps max |A|^T |lambda| (a sum of terms of both
    signs cannot be formed more accurately), and nothing where lambda = 0."""
    from multibody.integrate.generalized_alpha_rank import roundoff_floor
    A = np.array([[1.0, -1.0], [0.0, 2.0]])
    lam = np.array([1e6, -1e6])
    assert roundoff_floor(A, lam) == pytest.approx(64 * np.finfo(float).eps * 3e6)
    assert roundoff_floor(A, np.zeros(2)) == 0.0


def test_a_step_that_may_leave_the_branch_stops_the_run():
    """The branch check (generalized_alpha_crossing.CrossingGuard.vouch): next to a singular configuration a step
    whose accelerations jump by more than BRANCH_TURN (0.1) of the speed per step is what a Newton solve on the other
    branch does (paper 000 Sect. 3: the branches' tangents differ by O(1) of the speed); the run stops, naming the
    time. The same step with the accelerations of the accepted state passes."""
    from multibody.formulations.registry import make_formulation
    from multibody.integrate.explicit import IntegrationError
    from multibody.integrate.generalized_alpha import GeneralizedAlpha
    from multibody.kinematics import consistent_state
    model = double_four_bar()
    form = make_formulation("lagrange", model)
    q0, v0 = consistent_state(model, 0.0, ws=form.ws)
    h = 1e-3
    ga = GeneralizedAlpha(form, 0.0, np.concatenate([q0, v0]), 1.0, step=h)
    while ga.t < first_crossing(2) - 2 * h:
        ga.step()
    n = model.n
    speed = np.max(np.sqrt(np.diag(model.mass(ga.y[:n]))) * np.abs(ga.y[n:]))
    out = ga._attempt(h)
    ga.guard.vouch(h, out)
    jump = out[1].copy()
    jump[2] += 0.2 * speed / h / np.sqrt(model.mass(ga.y[:n])[2, 2])     # crank 1: 0.2 of the speed per step
    with pytest.raises(IntegrationError, match="cannot vouch for its assembly branch"):
        ga.guard.vouch(h, (out[0], jump, out[2], out[3]))
