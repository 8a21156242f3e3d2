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
    of a step, O(h^3), at a pinned step, whose vanishing direction is the scheme's prediction (below 1e-6 rad over
    these short runs' one or two windows; far inside the spread the position tolerance leaves next to the singular
    configuration, benchmarks/singular_yardstick.spread_limit: 5.7e-5 rad for the double four-bar and 6.3e-4 rad for
    10 cells), and to the Newton tolerance at the end; the crank tip on theta of the exact reduction; every crossing
    reported at the exact time (to the run's own phase error, the tip error over the crank length)."""
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


def _stepper_before(h: float, t_stop: float):
    """A GeneralizedAlpha run of the double four-bar with step h, stepped to the last grid point before t_stop."""
    from multibody.formulations.registry import make_formulation
    from multibody.integrate.generalized_alpha import GeneralizedAlpha
    from multibody.kinematics import consistent_state
    model = double_four_bar()
    form = make_formulation("lagrange", model)
    q0, v0 = consistent_state(model, 0.0, ws=form.ws)
    ga = GeneralizedAlpha(form, 0.0, np.concatenate([q0, v0]), 1.0, step=h)
    while ga.t + h < t_stop - 1e-9 * h:
        ga.step()
    return ga


def _injected(ga, out, size, w):
    """out with the accelerations of crank 1 (the theta of body 1) changed by ``size`` (weighted) from a_n."""
    a = ga.a.copy()
    a[2] += size / w[2]
    return out[0], a, out[2], out[3]


def test_a_step_that_may_leave_the_branch_stops_the_run():
    """The branch check (generalized_alpha_crossing.CrossingGuard.vouch, module doc). The step onto t* of the double
    four-bar (h = t* / 714) pins the vanishing direction (or, taken by the regular solve, has the other branch's point
    within reach of its prediction), so it can reach the other branch: a Newton solve there at
    t* + d changes the accelerations by K |dv| d / h^2, K = (1 - alpha_m) / (beta (1 - alpha_f)) (the scheme's beta'
    times the position change |dv| d; on the other branch one cell folds and its crank turns the other way, |dv| = 2
    |crank speed|); at d = h / 10 it stops the run, naming the time. The limit is max(sqrt(Q_n S_n), |a_n|): a change
    of twice it stops the run, half of it passes, and the accepted step passes."""
    from multibody.integrate.explicit import IntegrationError
    from multibody.integrate.generalized_alpha import AlphaParameters
    h = first_crossing(2) / 714
    ga = _stepper_before(h, first_crossing(2))
    n, p = ga.n, AlphaParameters(0.9)
    w = np.sqrt(np.diag(ga.model.mass(ga.y[:n])))
    out = ga._attempt(h)
    limit, saved, kept = ga.guard.branch_limit(w), ga.guard.rate, ga.guard.kept
    # the step onto t* pins the vanishing direction, or, where the regular solve converged there (a matter of the
    # BLAS kernel's round-off), the other branch's point is within the reach of its prediction
    reach = ga.guard.reach(ga.t + h, out[0][:n], out[0][n:], limit / (ga.guard._beta_p(h) * w.min()))[1]
    assert ga.guard.pending[1] < ga.guard.generic or reach >= 1.0
    K = (1 - p.alpha_m) / (p.beta * (1 - p.alpha_f))
    off = K * 2 * w[2] * abs(ga.y[n + 2]) * (h / 10) / h ** 2
    for size, stops in ((off, True), (2 * limit, True), (0.5 * limit, False)):
        ga.guard.rate, ga.guard.kept = saved, kept
        if stops:
            with pytest.raises(IntegrationError, match="cannot vouch for its assembly branch"):
                ga.guard.vouch(h, _injected(ga, out, size, w))
        else:
            ga.guard.vouch(h, _injected(ga, out, size, w))
    ga.guard.rate, ga.guard.kept = saved, kept
    ga.guard.vouch(h, out)


def test_a_regular_step_out_of_reach_of_the_other_branch_is_not_stopped():
    """Two steps before t* (h = 1e-3) the regular solve keeps every direction, and the other branch's point lies
    beyond the reach of any prediction error the limit admits (e = limit / beta': the vertex sigma_i / |c_i| of every
    row is farther, reach < 1), so a Newton solve cannot have converged there: a change of twice the limit passes
    (a motion the step does not resolve, which the fixed-step halving deals with), not a branch stop."""
    h = 1e-3
    ga = _stepper_before(h, first_crossing(2) - h)
    n = ga.n
    w = np.sqrt(np.diag(ga.model.mass(ga.y[:n])))
    out = ga._attempt(h)
    assert ga.guard.pending[1] == ga.guard.generic
    limit = ga.guard.branch_limit(w)
    rho, within = ga.guard.reach(ga.t + h, out[0][:n], out[0][n:], limit / (ga.guard._beta_p(h) * w.min()))
    assert rho < 1e-2 and within < 1.0
    ga.guard.vouch(h, _injected(ga, out, 2 * limit, w))


def _stepped(model, h, t_end, kernel):
    """A GeneralizedAlpha run of ``model`` to t_end with the compiled rank-revealing loop (kernel True), the NumPy
    reference (False) or a stand-in (a callable)."""
    from multibody.formulations.registry import make_formulation
    from multibody.integrate.generalized_alpha import GeneralizedAlpha
    from multibody.kinematics import consistent_state
    form = make_formulation("lagrange", model)
    q0, v0 = consistent_state(model, 0.0, ws=form.ws)
    ga = GeneralizedAlpha(form, 0.0, np.concatenate([q0, v0]), t_end, step=h)
    if ga.guard.kernel is None:
        pytest.skip("no compiled Newton loop (numba missing or cache cold)")
    if kernel is not True:
        ga.guard.kernel = kernel or None
    while ga.t < ga.t_bound - 1e-12:
        ga.step()
    return ga


@pytest.mark.parametrize("model, h, t_end", [(double_four_bar_modified, 1e-3, 0.2),
                                             (double_four_bar, "t*/714", 0.75)],
                         ids=["modified (redundant rows)", "grid point on t* (pinned)"])
def test_compiled_rank_revealing_loop_equals_the_reference(model, h, t_end):
    """The compiled rank-revealing Newton loop (generalized_alpha_rank_kernels) and the NumPy reference
    (generalized_alpha_rank.rank_attempt) take the same steps to the same states, round-off apart (both converge to
    the Newton tolerance 1e-10 of the length scale): every step of the modified double four-bar, and the pinned steps
    of the double four-bar with a grid point on t*."""
    h = first_crossing(2) / 714 if h == "t*/714" else h
    runs = [_stepped(model(), h, t_end, kernel) for kernel in (True, False)]
    assert runs[0].guard.rank_steps == runs[1].guard.rank_steps >= 1
    assert runs[0].guard.pinned_steps == runs[1].guard.pinned_steps
    np.testing.assert_allclose(runs[0].y, runs[1].y, rtol=0, atol=1e-8)


def test_a_failed_compiled_svd_takes_the_step_with_the_reference():
    """numba's gesdd may not converge (LinAlgError, the crossing_sigma failure of issue 12): that step is taken by the
    NumPy reference, whose SVD falls back to gesvd (linalg.rank.svd), and the run goes on as the reference's."""
    def failing(*_):
        raise np.linalg.LinAlgError("SVD did not converge")
    runs = [_stepped(double_four_bar_modified(), 1e-3, 0.02, kernel) for kernel in (failing, False)]
    np.testing.assert_array_equal(runs[0].y, runs[1].y)
