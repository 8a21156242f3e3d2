"""The sparse path of ``--basis continuation`` (formulations.nullspace_sparse, issue 12, N-four-bar chains).

The numbers asserted come from the mathematics of the module docstring: with a one-dimensional tangent space the basis
of eq. 22 followed by App. A and App. A applied to the previous basis are both the unit vector of the line null(A) on
the side of the previous basis, so they agree to the round-off of a null vector, eps sigma_1 / sigma_r (times a
safety of 100); the chart equations differ from the dense ones only by the dense path's regularisation, (mu / s)^2
relative in a direction of singular value s (mu = rel sigma_1), plus that round-off; sigma_min from the LU of
[A; s N^T] carries the absolute backward error eps sigma_1 of the LU, as the SVD's.
"""
from __future__ import annotations

import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.errors import MultibodyError
from multibody.formulations.nullspace import NullSpace
from multibody.formulations.nullspace_continuation import ContinuationNullSpace
from multibody.formulations.nullspace_flow_sparse import SparseFlowNullSpace
from multibody.formulations.nullspace_sparse import SparseContinuationNullSpace, nullspace
from multibody.formulations.sparse_chart import orthonormal, sigma_extremes
from multibody.kinematics import consistent_state, solve_positions
from multibody.linalg.rank import pivoted_qr
from multibody.linalg.tangent import continue_basis
from multibody.models.four_bars import n_four_bar
from multibody.models.modified_four_bars import crank_angle_exact_cells, double_four_bar_modified

EPS = np.finfo(float).eps
CELLS = 3


@pytest.fixture(scope="module")
def run():
    """A dense continuation run of the N-four-bar with CELLS cells through its first crossing (t* ~ 0.718)."""
    return simulate(n_four_bar(cells=CELLS), t_end=0.9, formulation="nullspace",
                    options=RunOptions(rtol=1e-8, atol=1e-8), formulation_options={"sparse": False})


def sigmas(form, t, q):
    s = np.linalg.svd(form.ws.velocity_constraints(t, q, np.zeros_like(q))[1], compute_uv=False)
    return s[0], s[form.generic_rank - 1]


def test_factory_chooses_the_path():
    model = n_four_bar(cells=CELLS)
    assert isinstance(nullspace(model, sparse=True), SparseContinuationNullSpace)
    assert type(nullspace(model)) is ContinuationNullSpace         # small model: the dense path by default
    assert isinstance(nullspace(n_four_bar(cells=40)), SparseContinuationNullSpace)     # n = 243 >= 150
    assert isinstance(nullspace(model, basis="flow", sparse=True), SparseFlowNullSpace)
    assert type(nullspace(model, basis="flow")) is NullSpace


def test_redundant_rows_are_refused_loudly():
    with pytest.raises(MultibodyError, match="redundant constraint rows"):
        nullspace(double_four_bar_modified(), sparse=True)
    with pytest.raises(MultibodyError, match="serves --basis continuation and flow"):
        nullspace(n_four_bar(cells=CELLS), basis="recompute", sparse=True)


def test_basis_agrees_with_eq22_and_app_a(run):
    """Along the run, T_{k+1} from T_k: eq. 22 (expm of Omega over the step) + App. A (dense) against App. A by the sparse
    solve, to the round-off of a null vector (module docstring), also in the steps next to the crossing."""
    model = n_four_bar(cells=CELLS)
    dense, sparse = nullspace(model, sparse=False), nullspace(model, sparse=True)
    t, Q, V = run.t, run.q, run.v
    q0, v0 = consistent_state(model)
    dense.initial_state(0.0, q0, v0)
    sparse.initial_state(0.0, q0, v0)
    checked = 0
    for k in range(0, len(t) - 1):
        h = t[k + 1] - t[k]
        if h <= 0:
            continue
        pqr = pivoted_qr(dense.ws.velocity_constraints(t[k], Q[k], V[k])[1], dense.rank_tol)
        r = dense.generic_rank
        if pqr.rank < r:
            continue
        Q1, T = pqr.Q[:, :r], pqr.Q[:, r:]
        Omega = dense._omega(t[k], Q[k], V[k], pqr, Q1, T)
        Q1_new = pivoted_qr(dense.ws.velocity_constraints(t[k + 1], Q[k + 1], V[k + 1])[1], dense.rank_tol).Q[:, :r]
        T_dense = continue_basis(Q1, T, Omega, h, Q1_new)
        T_sparse = sparse._transport(t[k + 1], Q[k + 1], T)
        s1, sr = sigmas(dense, t[k + 1], Q[k + 1])
        assert np.abs(T_sparse - T_dense).max() <= 100 * EPS * s1 / sr, (t[k + 1], np.abs(T_sparse - T_dense).max())
        checked += 1
    assert checked > 20


def started(basis):
    """The dense and the sparse formulation with ``basis``, started at the model's initial state."""
    model = n_four_bar(cells=CELLS)
    forms = nullspace(model, basis=basis, sparse=False), nullspace(model, basis=basis, sparse=True)
    q0, v0 = consistent_state(model)
    for form in forms:
        form.initial_state(0.0, q0, v0)
    return forms


def generic_states(run, dense):
    """(t, q, v, bound) at 15 stored states of the run with sigma_r >= 1e-2 sigma_1: bound, the relative agreement of the
    two paths, the dense path's regularisation (mu / sigma_r)^2 plus the round-off eps sigma_1 / sigma_r (safety 100)."""
    for k in range(0, len(run.t), max(1, len(run.t) // 15)):
        s1, sr = sigmas(dense, run.t[k], run.q[k])
        if sr >= 1e-2 * s1:
            yield run.t[k], run.q[k], run.v[k], 100 * ((dense.reg.rel * s1 / sr) ** 2 + EPS * s1 / sr)


def test_chart_equations_agree_with_the_dense_ones(run):
    """The right-hand side in the same chart (Q1, T of the fresh QR at a state of the run) and the multipliers, within
    the bound of :func:`generic_states`."""
    dense, sparse = started("continuation")
    for tk, q, v, bound in generic_states(run, dense):
        dense.after_step(tk, np.concatenate([q, dense._chart.T.T @ v]))     # the chart at (tk, q): QR, eq. 22
        chart = dense._chart
        sparse._charts = [chart]
        y = np.concatenate([q, chart.T.T @ v])
        a, b = dense.rhs(tk, y), sparse.rhs(tk, y)
        assert np.abs(a - b).max() <= bound * np.abs(b).max()
        la, lb = dense.accelerations(tk, q, v).multipliers, sparse.accelerations(tk, q, v).multipliers
        assert np.abs(la - lb).max() <= bound * np.abs(lb).max()


def test_sigma_min_has_the_svd_backward_error(run):
    """sigma_r and sigma_1 by Lanczos on the sparse LU against the dense SVD, at a generic state of the run and next to
    the crossing (the stored states around it interpolated to its time and projected: sigma_r / sigma_1 = 4e-5 there):
    |difference| <= 100 eps sigma_1 (sigma_r, the backward error of either factorisation) and 1e-12 sigma_1 (sigma_1)."""
    form = started("continuation")[1]
    t_star = run.summary["singular_events"][0]["t"]
    k = int(np.searchsorted(run.t, t_star))
    guess = run.q[k - 1] + (t_star - run.t[k - 1]) / (run.t[k] - run.t[k - 1]) * (run.q[k] - run.q[k - 1])
    near = solve_positions(form.model, guess, t_star, ws=form.ws, sparse=False)
    for tk, q in ((t_star, near), (run.t[3], run.q[3])):
        A = form.ws.sparse_constraints(tk, q, np.zeros_like(q))[1]
        s = np.linalg.svd(A.toarray(), compute_uv=False)
        N = orthonormal(np.linalg.svd(A.toarray())[2][-1:].T)
        low, big, _ = sigma_extremes(A, N)
        assert abs(low - s[-1]) <= 100 * EPS * s[0]
        assert abs(big - s[0]) <= 1e-12 * s[0]


def test_flow_equations_agree_with_the_dense_ones(run):
    """--basis flow: the right-hand side [x', w', vec(T')] at states of the run with T the null vector there, sparse against
    dense, within the bound of the continuation test (the smooth pseudo-inverse's (mu / s)^2 and the round-off)."""
    dense, sparse = started("flow")
    for tk, q, v, bound in generic_states(run, dense):
        T = sparse._null(tk, q, sparse._last[4])
        y = np.concatenate([q, T.T @ v, T.ravel()])
        a, b = dense.rhs(tk, y), sparse.rhs(tk, y)
        assert np.abs(a - b).max() <= bound * np.abs(b).max()


@pytest.mark.parametrize("rtol,basis", [(1e-6, "continuation"), (1e-10, "continuation"), (1e-6, "flow"),
                                        (1e-10, "flow")])
def test_sparse_run_crosses_on_the_branch(rtol, basis):
    """A run through two crossings (t_end 1.5 s) on the sparse path: every crossing of the exact reduction (sign changes
    of sin theta) reported once, the cranks parallel, and the crank tip within 100 rtol of the exact motion
    (theta'' = -k cos theta over 1.5 s, smooth). Each crossing is passed inside a singular window of ratio
    4 sqrt(eps / rtol) (formulations.crossing_window: sigma_r vanishes there, and the window also opens where the
    crossing is fewer than two steps ahead). (The flow basis at 1e-10 stopped under Prescott next to the first
    crossing while the sparse classes' own after_step hid the window.)"""
    r = simulate(n_four_bar(cells=CELLS), t_end=1.5, formulation="nullspace",
                 options=RunOptions(rtol=rtol, atol=rtol), formulation_options={"sparse": True, "basis": basis})
    exact = crank_angle_exact_cells(r.t, cells=CELLS)
    expected = int(np.count_nonzero(np.diff(np.sign(np.sin(crank_angle_exact_cells(np.linspace(0, 1.5, 3001),
                                                                                     cells=CELLS)))) != 0))
    assert len(r.summary["singular_crossings"]) == expected == 2
    assert len(r.summary["singular_events"]) == expected
    th = [r.column("q", f"bar{i}.theta") for i in (1, 3, 5, 7)]
    assert max(np.abs(np.angle(np.exp(1j * (x - th[0])))).max() for x in th) < 1e-6
    assert np.hypot(np.cos(th[0]) - np.cos(exact), np.sin(th[0]) - np.sin(exact)).max() < 100 * rtol
    windows = r.summary["singular_windows"]
    assert len(windows) == expected and all(w["t_exit"] is not None for w in windows)
    assert r.summary["singular_window_ratio"] == pytest.approx(4 * np.sqrt(EPS / rtol))
    assert all(w["t_enter"] < c["t"] < w["t_exit"] for c, w in zip(r.summary["singular_crossings"], windows))
    R = r["R_diag"]         # sigma_r in the generic rank's column (the R-diagonal figure's bold line), NaN elsewhere
    assert R.shape[1] == r.summary["generic_rank"] and np.all(R[:, -1] >= 0) and np.all(np.isnan(R[:, :-1]))


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_physical_error_filter_is_the_dense_one(run, basis):
    """The measured local error on [x, v] (formulations.velocity_error): the sparse path's tangent part N N^T (null
    vector of the chart LU) against the dense filter (I - A^+ A) by the SVD: the same projector for A of full row rank,
    equal to the round-off of a null vector, eps sigma_1 / sigma_r (safety 100), relative to |err|; for ``flow``
    (normal parts measured whole) both are the unfiltered [dx, dv]."""
    dense, sparse = started(basis)
    rng = np.random.default_rng(12)
    for tk, q, v, _ in generic_states(run, dense):
        T = sparse._null(tk, q, sparse.current_basis())
        w = T.T @ v
        y = np.concatenate([q, w] if basis == "continuation" else [q, w, T.ravel()])
        if basis == "continuation":
            sparse._charts = [sparse._chart.__class__(tk, None, T, None)]
        err = rng.standard_normal(y.shape[0])
        s1, sr = sigmas(dense, tk, q)
        a = sparse._physical_error(tk, y, err)
        b = NullSpace._physical_error(sparse, tk, y, err)       # the dense rule (row_space_filter) on the same state
        assert np.abs(a - b).max() <= 100 * EPS * s1 / sr * np.abs(err).max()
