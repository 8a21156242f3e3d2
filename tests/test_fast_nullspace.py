"""The compiled null-space formulation (multibody.fast.nullspace, issue 16 item 1) reproduces its NumPy reference.

Both evaluate the same formulas of paper 000 (eqs 9-15): the constraint terms of the builder primitives, the
smooth pseudo-inverse W diag(s / (s^2 + mu^2)) U^T (path 0 in its exactly equal Tikhonov form by Cholesky where
the Gram matrix is well conditioned, path 1 by the same SVD), and the projection's pinned Gauss-Newton steps
(the same LAPACK SVD). They differ by round-off, eps times a moderate condition number, so 1e-12 relative is
asserted (as tests/test_fast.py does for lagrange); whole runs differ by the integrator's response to that
round-off, bounded by its tolerance.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.assembly import Workspace  # noqa: E402
from multibody.fast.packed import CompiledWorkspace  # noqa: E402
from multibody.formulations.nullspace_continuation import nullspace  # noqa: E402
from multibody.kinematics import solve_positions  # noqa: E402
from multibody.models import MODELS  # noqa: E402
from test_fast import ROUND_OFF, all_primitives_model  # noqa: E402

MODELS_FAST = ["double-four-bar", "double-four-bar-modified", "four-bar-2x2-modified", "physical-pendulum"]


def close(a, b, tol=ROUND_OFF, scale=None):
    """max |a - b| <= tol * (scale or max |b|) (zero arrays agree)."""
    return np.abs(a - b).max() <= tol * (np.abs(b).max() if scale is None else scale)


def round_off(form, y):
    """The agreement to expect at y: ROUND_OFF, or eps s_1 / s_k (times a safety of 100) for the smallest singular
    value s_k of A above the regularisation width mu = rel s_1: off the constraint manifold a redundant row has a
    small, nonzero singular value, and the smooth pseudo-inverse divides the round-off by it."""
    s = np.linalg.svd(form.ws.constraints(0.0, y[:form.model.n], y[:form.model.n])[1], compute_uv=False)
    kept = s[s > form.reg.rel * s[0]]
    return max(ROUND_OFF, 100 * np.finfo(float).eps * s[0] / kept[-1])


def pair(model, basis):
    """(compiled, reference) formulations, both started at the model's initial state."""
    fast, ref = nullspace(model, basis=basis), nullspace(model, basis=basis, fast=False)
    y0 = fast.initial_state(0.0, model.q0, model.v0)
    ref.initial_state(0.0, model.q0, model.v0)
    assert fast.fast_rhs is not None and isinstance(fast.ws, CompiledWorkspace)
    assert ref.fast_rhs is None and type(ref.ws) is Workspace
    return fast, ref, y0


def states(model, form, y0, rng):
    """y0, y0 with other generalized velocities, and y0 moved off the manifold (Runge-Kutta stages are)."""
    n, f = model.n, form.f
    out = [y0]
    for spread in (0.0, 1e-3):
        y = y0.copy()
        y[n:n + f] += rng.standard_normal(f)
        y[:n] += spread * rng.standard_normal(n)
        out.append(y)
    return out


@pytest.mark.parametrize("basis", ["continuation", "flow"])
@pytest.mark.parametrize("name", MODELS_FAST)
def test_rhs_split_accelerations_match_reference(name, basis):
    model = MODELS[name].factory()
    fast, ref, y0 = pair(model, basis)
    for y in states(model, fast, y0, np.random.default_rng(3)):
        tol = round_off(ref, y)
        assert close(fast.rhs(0.0, y), ref.rhs(0.0, y), tol)
        q, v = ref.split(0.0, y)
        assert close(fast.split(0.0, y)[1], v, tol)
        a, b = fast.accelerations(0.0, q, v), ref.accelerations(0.0, q, v)
        assert close(a.vdot, b.vdot, tol)
        # the independent accelerations are what is left of terms as large as the constraint forces' accelerations
        # M^-1 A^T lambda (they cancel against the applied ones): round-off is relative to those terms, not to the result
        A = ref.ws.constraints(0.0, q, q)[1]
        terms = np.abs(np.linalg.solve(model.mass(q), A.T @ b.multipliers)).max()
        assert close(a.info["qdd_ind"], b.info["qdd_ind"], tol, scale=max(np.abs(b.vdot).max(), terms))
        assert close(a.multipliers, b.multipliers, 100 * tol)      # minimum-norm lstsq of either x''
    if basis == "continuation":     # G = A Q1 has full column rank away from singular configurations: Cholesky
        assert fast.fast_rhs.paths[0] == 3


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_near_singular_configuration_takes_the_svd_and_matches(basis):
    """At the double four-bar's singular configuration (rank 12 < 14) the Gram matrix is singular: the kernel
    declines Cholesky and uses the SVD, as the reference does."""
    model = MODELS["double-four-bar"].factory()
    fast, ref, y0 = pair(model, basis)
    y = y0.copy()
    y[:model.n] = model.configuration("singular") + 1e-9
    out = fast.rhs(0.0, y)
    assert fast.fast_rhs.paths[2] == 1       # declined: the reference ran
    assert close(out, ref.rhs(0.0, y), 1e-6)       # eps / sigma: the 0/0 solves at distance 1e-9


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_drivers_and_every_primitive(basis):
    """Prescribed motions (Phi_t, f'') and all primitive kinds (Distance, Angle, LineProjection, drivers)."""
    model = all_primitives_model()
    fast, ref, y0 = pair(model, basis)
    for t in (0.0, 0.37):
        for y in states(model, fast, y0, np.random.default_rng(5)):
            assert close(fast.rhs(t, y), ref.rhs(t, y), round_off(ref, y))
            q, ws = y[:model.n], Workspace(model)
            for a, b in zip(fast.ws.constraints(t, q, q), ws.constraints(t, q, q)):
                assert np.allclose(a, b, rtol=0, atol=ROUND_OFF * max(1.0, np.abs(b).max()))


def test_projection_matches_solve_positions():
    model = all_primitives_model()
    fast, ref, _ = pair(model, "continuation")
    x = model.q0 + 1e-3 * np.random.default_rng(7).standard_normal(model.n)
    want = solve_positions(model, x, 0.37, ws=ref.ws, tol=ref.projection_tol)
    got = fast.ws.solve_positions(x, 0.37, ref.projection_tol)
    assert np.abs(got - want).max() < 1e-14 * model.length_scale * 10
    assert fast.ws.solve_positions(np.full(model.n, np.nan), 0.0, ref.projection_tol) is None   # reference raises


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_rhs_every_primitive_and_motions_match_reference(basis):
    """Every primitive (the double four-bar has only Coincident) and prescribed motions (f' and f'' nonzero at
    t = 0.2): the compiled position and rate passes (nullspace_rhs_kernels; A' T as the bilinear form of gamma)
    against the reference (Workspace, polarisation of gamma)."""
    model = all_primitives_model()
    fast, ref, y0 = pair(model, basis)
    for y in states(model, fast, y0, np.random.default_rng(5)):
        tol = round_off(ref, y)
        assert close(fast.rhs(0.2, y), ref.rhs(0.2, y), tol)
        q, v = ref.split(0.2, y)
        assert close(fast.accelerations(0.2, q, v).vdot, ref.accelerations(0.2, q, v).vdot, tol)
    assert fast.fast_rhs.paths[2] == 0       # the kernel, not the reference, gave every right-hand side


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_runs_agree_within_tolerance(basis):
    """1 s of the double four-bar, compiled and reference: the same steps up to round-off, so end states agree
    far below the tolerance's global error (~1e-8 here)."""
    model = MODELS["double-four-bar"].factory()
    opts = RunOptions(rtol=1e-10, atol=1e-12)
    runs = [simulate(model, t_end=1.0, formulation="nullspace", options=opts,
                     formulation_options={"basis": basis, "fast": on}) for on in (True, False)]
    assert runs[0].summary["backend"] == "compiled" and runs[1].summary["backend"] == "numpy"
    assert np.abs(runs[0].q[-1] - runs[1].q[-1]).max() < 1e-8


@pytest.mark.parametrize("shape", [(14, 15), (12, 12), (16, 15), (3, 2)])
def test_pivoted_qr_by_lapack_is_scipys(shape):
    """The same LAPACK routines with the same arguments: bit for bit the factorisation of linalg.rank.pivoted_qr."""
    from multibody.fast.lapack import fast_pivoted_qr
    from multibody.linalg.rank import pivoted_qr
    A = np.random.default_rng(11).standard_normal(shape)
    A[-1] = A[0] - A[1]          # a redundant row
    a, b = pivoted_qr(A), fast_pivoted_qr(A)
    assert np.array_equal(a.Q, b.Q) and np.array_equal(a.R, b.R) and np.array_equal(a.perm, b.perm)
    assert a.rank == b.rank == min(shape[0] - 1, shape[1])


@pytest.mark.parametrize("h", [1e-3, 0.3, 3.0])
def test_continued_basis_matches_expm(h):
    """Eq. 22 by the scaled Taylor series of the action of expm (Al-Mohy & Higham 2011) against SciPy's expm of
    the whole matrix, then App. A: the same T_{k+1} to round-off, also for a large |Omega h| (scaling)."""
    from multibody.fast.basis_kernels import continue_basis as fast_continue
    from multibody.linalg.tangent import continue_basis
    rng = np.random.default_rng(2)
    n, r = 15, 13
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    Omega = rng.standard_normal((n, n))
    Omega = Omega - Omega.T
    Omega[r:, r:] = 0.0
    Q1_new = np.linalg.qr(Q[:, :r] + 1e-3 * rng.standard_normal((n, r)))[0]
    want = continue_basis(Q[:, :r], Q[:, r:], Omega, h, Q1_new)
    got = fast_continue(*(np.ascontiguousarray(a) for a in (Q[:, :r], Q[:, r:], Omega)), h, Q1_new)
    assert np.abs(got - want).max() < 1e-13 * max(1.0, np.abs(Omega).sum(axis=0).max() * h)


@pytest.mark.parametrize("basis", ["continuation", "flow"])
@pytest.mark.parametrize("name", MODELS_FAST[:3])
def test_error_measure_matches_reference(name, basis):
    """The compiled error measure on [x, v] (nullspace_kernels.physical_error: the row-space projector by the normal
    equations where A A^T is well conditioned, else by the SVD) is the reference's (formulations.velocity_error, the
    SVD projector of linalg.rank.row_space_filter) up to round-off, on and off the constraint manifold, with redundant
    rows (the modified four-bars), flow's tangential position error bounded by its two parts (formulations.flow_error,
    the stepper's ``integral``); the end states are [x, x'] of split."""
    model = MODELS[name].factory()
    fast, ref, y0 = pair(model, basis)
    rng = np.random.default_rng(13)
    for y in states(model, fast, y0, rng):
        err, integral = rng.standard_normal(y.shape[0]), rng.standard_normal(y.shape[0])
        got, want = fast.error_measure(0.0, y, 0.0, y, err, integral), ref.error_measure(0.0, y, 0.0, y, err, integral)
        assert got[0].shape == (2 * model.n,)
        assert close(got[0], want[0], round_off(ref, y), scale=np.abs(want[0]).max())
        assert close(got[2], want[2], round_off(ref, y))


@pytest.mark.parametrize("name", MODELS_FAST[:3])
def test_omega_matches_reference(name):
    """Omega of eqs 19-20 (basis_kernels.omega: R1^-T as the smooth pseudo-inverse in its Tikhonov form by Cholesky
    where R1 is well conditioned, else by the SVD) is the reference's (linalg.tangent.omega_continued, SVD) up to
    round-off."""
    from multibody.linalg.rank import pivoted_qr
    model = MODELS[name].factory()
    fast, ref, _ = pair(model, "continuation")
    rng = np.random.default_rng(19)
    for x in (model.q0, model.q0 + 1e-3 * rng.standard_normal(model.n)):
        v = rng.standard_normal(model.n)
        pqr = pivoted_qr(ref.ws.constraints(0.0, x, v)[1], ref.rank_tol)
        Q1, T = pqr.Q[:, :ref.generic_rank], pqr.Q[:, ref.generic_rank:]
        want = ref._omega(0.0, x, v, pqr, Q1, T)
        assert close(fast._omega(0.0, x, v, pqr, Q1, T), want, 1e-9)   # round-off of A / (2 eps), eps ~ 1e-5


def test_tracker_objective_matches_reference():
    """The singular tracker's objective, sigma_r at the projected Hermite interpolant of three accepted states
    (formulations.singular), in one compiled call (nullspace_kernels.crossing_sigma: the same projection kernel, the
    same singular values) agrees with the reference to round-off, eps sigma_1 (100 eps allowed), on the bracket of the
    double four-bar's first crossing (t = 0.714 s)."""
    model = MODELS["double-four-bar"].factory()
    run = simulate(model, t_end=0.75, formulation="lagrange", options=RunOptions(output_interval=0.02))
    k = int(np.searchsorted(run.t, 0.714))
    fast, ref, _ = pair(model, "flow")
    hist = [(run.t[i], run.q[i], run.v[i], None, 0.0, 0.0) for i in (k - 2, k - 1, k)]
    fast.tracker.history = ref.tracker.history = hist
    s1 = np.linalg.svd(ref.ws.constraints(0.0, run.q[k], run.v[k])[1], compute_uv=False)[0]
    for t in np.linspace(run.t[k - 2], run.t[k], 7):
        want = ref.tracker._objective(t)
        got = fast.fast_rhs.crossing_sigma(t, hist, fast.generic_rank, fast.projection_tol, model.length_scale)
        assert got is not None and abs(got - want) <= 100 * np.finfo(float).eps * s1


@pytest.mark.parametrize("basis", ["continuation", "flow"])
def test_compiled_attempts_take_the_reference_steps(basis):
    """The step attempts in one compiled call (fast.nullspace_rk) take the steps of the reference RungeKutta on the
    same formulation (the same rhs and error-measure kernels, the same controller), watched as a run is (the run's
    tolerances, the crossing step), through the double four-bar's first singular window, whose [q, v] attempts are
    handed back to the reference: the same numbers of accepted and rejected steps and the same end state to round-off amplified over the run (tests/test_fast_rk.py)."""
    from multibody.integrate.explicit import RungeKutta
    from multibody.integrate.explicit_compiled import CompiledRungeKutta
    from multibody.integrate.steppers import STEPPERS
    from multibody.simulation.driver import advance
    from multibody.simulation.step_watch import StepWatch
    from test_fast_rk import STATE_AGREEMENT
    model, o, t_end = MODELS["double-four-bar"].factory(), RunOptions(rtol=1e-8, atol=1e-10), 0.9
    out = []
    for compiled in (True, False):
        form = nullspace(model, basis=basis)
        y = form.initial_state(0.0, model.q0, model.v0)
        watch = StepWatch(form, 0.0, t_end, o.rtol, o.atol)     # the run's tolerances, the crossing step
        rk = STEPPERS["dopri5"].make(form, 0.0, y, t_end, o) if compiled else \
            RungeKutta(form.rhs, 0.0, y, t_end, tableau="dopri5", rtol=o.rtol, atol=o.atol, error_filter=form.error_filter,
                       error_measure=form.error_measure)
        assert isinstance(rk, CompiledRungeKutta) == compiled
        watch.attach(rk)
        rk.h = 0.2      # a first attempt far too long: rejected (err >> 1), the controller's retry compared too
        while rk.t < t_end:
            step, y_new, before = advance(model, form, rk)
            watch.accepted(step, y_new, before=before)
            if y_new is not None:
                rk.reset(step.t, y_new)
        out.append((rk.n_accepted, rk.n_rejected, rk.y, len(form.windows)))
    (a, r, y, w), (a_ref, r_ref, y_ref, w_ref) = out
    assert (a, r, w) == (a_ref, r_ref, w_ref) and w == 1 and r > 0
    assert np.abs(y - y_ref).max() < STATE_AGREEMENT * np.abs(y_ref).max()


def test_svd_failure_leaves_the_work_to_the_reference(monkeypatch):
    """numba's SVD can raise ValueError ("failed to converge"; seen under OPENBLAS_CORETYPE=Prescott in the singular
    tracker's objective): the compiled calls then return None (the reference computes) and the compiled attempts hand
    the attempt back, instead of ending the run."""
    from multibody.fast import nullspace_kernels, nullspace_rk

    def fail(*args):
        raise ValueError("Internal algorithm failed to converge.")
    model = MODELS["double-four-bar"].factory()
    form = nullspace(model, basis="flow")
    y = form.initial_state(0.0, model.q0, model.v0)
    for name in ("crossing_sigma", "physical_error"):
        monkeypatch.setattr(nullspace_kernels, name, fail)
    monkeypatch.setattr(nullspace_rk, "ns_attempts", fail)
    hist = [(t, model.q0, model.v0, None, 0.0, 0.0) for t in (0.0, 0.1, 0.2)]
    assert form.fast_rhs.crossing_sigma(0.1, hist, form.generic_rank, form.projection_tol, 1.0) is None
    assert form.fast_rhs.physical_error(y, np.ones_like(y), form.unpack(y)[2], True, 1.0) is None
    assert form.error_measure(0.0, y, 0.0, y, np.ones_like(y))[0].shape == (2 * model.n,)     # the reference's
    from multibody.fast.nullspace import NullSpaceAttempts
    from multibody.integrate.controllers import StepController
    from multibody.integrate.tableaux import TABLEAUX
    attempts = NullSpaceAttempts(form, TABLEAUX["dopri5"], 1e-6, 1e-6, StepController(), 0.0, 1e-4, 0.01)
    K = np.zeros((TABLEAUX["dopri5"].n_base, y.shape[0]))
    assert attempts(0.0, y, 1e-3, (1.0, 1.0, 0.0, np.inf), K, None)[0] == attempts.HAND_BACK


def test_svd_falls_back_to_gesvd(monkeypatch):
    """linalg.rank.svd: where LAPACK's gesdd does not converge (numpy.linalg.LinAlgError) the QR-iteration gesvd gives
    the singular values; of diag(3, 2, 1) with a zero row appended: 3, 2, 1."""
    from multibody.linalg import rank

    def fail(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")
    monkeypatch.setattr(rank.np.linalg, "svd", fail)
    A = np.vstack([np.diag([3.0, 2.0, 1.0]), np.zeros((1, 3))])
    assert np.allclose(rank.svd(A, compute_uv=False), [3.0, 2.0, 1.0], rtol=1e-15, atol=0.0)
    U, s, Wt = rank.svd(A, full_matrices=False)
    assert np.allclose(U @ np.diag(s) @ Wt, A, rtol=0.0, atol=1e-15)
