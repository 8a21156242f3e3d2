"""The compiled per-step work (multibody.fast.step: projection, error filter, recorded output) reproduces
the NumPy reference (kinematics.solve_positions/solve_velocities, Lagrange._tangent_error with
linalg.row_space_filter, Lagrange.accelerations + the Recorder's violations).

Both compute the same mathematical quantities; they differ by round-off, eps times a moderate condition
number (ROUND_OFF = 1e-12 relative, as in test_fast.py). The projection corrections are differences of
states, so they are compared in absolute terms relative to the model's length and velocity scales.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.analysis.solvability import SolvabilityTolerance, _full_row_rank, solvability  # noqa: E402
from multibody.fast.step import FastStep  # noqa: E402
from multibody.fast.step_kernels import MIN_NORM_PIVOT_RATIO, gram_cholesky, normal_solve  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.kinematics import KinematicTolerance, solve_positions, solve_velocities  # noqa: E402
from multibody.models import MODELS  # noqa: E402
from multibody.analysis.reactions import reaction_map  # noqa: E402
from multibody.simulation.recorder import Recorder  # noqa: E402
from test_fast import ROUND_OFF, SUPPORTED, all_primitives_model, four_bar_state, rel_diff  # noqa: E402

EPS = np.finfo(float).eps


def pair(model):
    """(compiled, reference) Lagrange formulations of a model."""
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    assert isinstance(fast.fast_step, FastStep) and ref.fast_step is None
    return fast, ref


def perturbed(model, rng, spread=1e-4):
    """Consistent-ish states slightly off the manifold, like the end of a Runge-Kutta step."""
    y = np.r_[model.q0, model.v0]
    return y + spread * rng.standard_normal(y.size)


def models():
    return [MODELS[name].factory() for name in SUPPORTED] + [all_primitives_model()]


@pytest.mark.parametrize("model", models(), ids=lambda m: m.name)
def test_projection_equals_reference(model):
    fast, ref = pair(model)
    rng, n = np.random.default_rng(11), model.n
    for t in (0.0, 0.37):
        y = perturbed(model, rng)
        got = fast.after_step(t, y)
        A0 = ref.ws.constraints(t, y[:n], y[n:])[1]
        sv = np.linalg.svd(A0, compute_uv=False)
        smin = sv[-1] if A0.shape[0] <= n else 0.0          # more rows than columns: A A^T singular
        if (smin / sv[0]) ** 2 >= MIN_NORM_PIVOT_RATIO:     # Cholesky pivots >= lambda_min(A A^T): compiled
            assert fast.fast_step.project(t, y) is not None
        q = solve_positions(model, y[:n], t, ws=ref.ws, tol=ref.projection_tol, sparse=False)
        v = solve_velocities(model, q, y[n:], t, ws=ref.ws, tol=KinematicTolerance(consistency=np.inf),
                             sparse=False)
        scale_v = max(1.0, np.abs(v).max())
        assert np.abs(got[:n] - q).max() < ROUND_OFF * model.length_scale * 10
        assert np.abs(got[n:] - v).max() < ROUND_OFF * scale_v * 10
        Phi, A, Phi_t, _ = ref.ws.constraints(t, got[:n], got[n:])
        assert np.abs(Phi).max() <= ref.projection_tol.position * model.length_scale   # on the manifold
        assert np.abs(A @ got[n:] + Phi_t).max() < ROUND_OFF * scale_v * 10


@pytest.mark.parametrize("model", models(), ids=lambda m: m.name)
def test_error_filter_and_output_equal_reference(model):
    fast, ref = pair(model)
    rng, n = np.random.default_rng(5), model.n
    for t in (0.0, 0.37):
        y = perturbed(model, rng)
        err = rng.standard_normal(2 * n)
        assert filter_diff(fast, ref, t, y, err) < ROUND_OFF
        _compare_output(fast, ref, t, ref.after_step(t, y))     # output is recorded at projected states


def filter_diff(fast, ref, t, y, err):
    """Difference of the filtered errors relative to |err|: the filter x - A^+ A x is a projection,
    its round-off is relative to its input (the output is mostly the small tangent part)."""
    return np.abs(fast._tangent_error(t, y, err) - ref._tangent_error(t, y, err)).max() / np.abs(err).max()


def _compare_output(fast, ref, t, y, tol=ROUND_OFF):
    """Recorder output of the compiled formulation against the reference one at (t, y)."""
    q, v = ref.split(t, y)
    a, b = fast.accelerations(t, q, v), ref.accelerations(t, q, v)
    assert rel_diff(a.vdot, b.vdot) < tol and rel_diff(a.multipliers, b.multipliers) < tol
    got = Recorder(fast.model, fast)._outputs(t, q, v, False)
    want = Recorder(ref.model, ref)._outputs(t, q, v, False)
    assert np.allclose(got[1], want[1], rtol=ROUND_OFF, atol=EPS * fast.model.length_scale * 100)
    assert rel_diff(got[2], want[2]) < ROUND_OFF


def test_near_singular_double_four_bar():
    """Crank angle sigma -> 0 (rank 14 -> 12): the compiled kernels decline once A A^T is
    ill-conditioned and the reference takes over; the results agree all the way."""
    model = MODELS["double-four-bar"].factory()
    fast, ref = pair(model)
    rng, declined = np.random.default_rng(2), 0
    for sigma in np.logspace(0, -6, 13):
        y = four_bar_state(sigma)
        err = rng.standard_normal(30)
        declined += fast.fast_step.tangent_error(0.0, y, err) is None
        assert filter_diff(fast, ref, 0.0, y, err) < ROUND_OFF, sigma
        _compare_output(fast, ref, 0.0, y)
        off = y + 1e-9 * rng.standard_normal(30)       # an accepted step's end, slightly off the manifold
        scale = np.abs(y).max()
        assert np.abs(fast.after_step(0.0, off) - ref.after_step(0.0, off)).max() < ROUND_OFF * scale, sigma
    assert 0 < declined < 13        # both the compiled kernels and the reference were exercised


@pytest.mark.parametrize("shape, rank", [((6, 9), 6), ((6, 9), 4), ((14, 15), 14), ((14, 15), 12)])
def test_normal_equations_give_the_pseudo_inverse_or_decline(shape, rank):
    """x = A^+ b and (A^T)^+ c by the normal equations against LAPACK gelsd for full row rank; for a
    rank-deficient A the Cholesky pivot test declines (the caller then uses the SVD reference)."""
    rng = np.random.default_rng(rank)
    k, n = shape
    A = rng.standard_normal((k, rank)) @ rng.standard_normal((rank, n))
    Ae = np.c_[A, rng.standard_normal(k)]          # column n is the unused ground column
    b, c, G = rng.standard_normal(k), rng.standard_normal(n), np.zeros((k, k))
    ok = gram_cholesky(Ae, n, MIN_NORM_PIVOT_RATIO, G)
    assert ok == (rank == k)
    if ok:
        x, lam = np.zeros(n), np.zeros(k)
        normal_solve(Ae, n, G, b, False, x)
        normal_solve(Ae, n, G, c, True, lam)
        assert rel_diff(x, sla.lstsq(A, b)[0]) < ROUND_OFF
        assert rel_diff(lam, sla.lstsq(A.T, c)[0]) < ROUND_OFF


def test_full_row_rank_shortcut_decides_as_solvability():
    """ReactionFlags skips solvability() only when its pivoted-QR rank test would find rank = rows;
    around the threshold (|R_ii| ~ 1e-9 |C|_2) both decisions are the same."""
    tol = SolvabilityTolerance()
    rng = np.random.default_rng(4)
    U, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    V, _ = np.linalg.qr(rng.standard_normal((7, 7)))
    for smallest in (1.0, 1e-6, 3e-9, 1.2e-9, 1e-9, 8e-10, 1e-12, 0.0):
        C = U @ np.diag([3.0, 2.0, 1.0, 0.5, smallest]) @ V[:5]
        assert _full_row_rank(C, tol) == (solvability(C, [f"j{i}.x" for i in range(5)]).redundancy == 0)
    assert not _full_row_rank(np.zeros((2, 3)), tol) and not _full_row_rank(np.ones((4, 3)), tol)


def test_reactions_finished_in_one_batch_equal_per_state():
    """Recorder defers ReactionMap.finish to the end of the run: elementwise, so identical numbers."""
    model = MODELS["double-four-bar"].factory()
    rmap, form = reaction_map(model), Lagrange(model)
    states = [four_bar_state(th) for th in (0.3, 1.1, 2.0)]
    rows = [form.fast_step.record(0.0, y[:15], y[15:]) for y in states]
    batch = rmap.finish(np.array([y[:15] for y in states]), np.array([rmap.generalized(r[3], r[1]) for r in rows]))
    for y, r, got in zip(states, rows, batch):
        np.testing.assert_array_equal(got, rmap.table(y[:15], r[3], r[1]))


def test_run_with_compiled_step_work_matches_reference_run():
    """Double four-bar up to 0.5 s (before the singular configuration, where the multipliers are
    not smooth): the same steps and the same states to well within the tolerance."""
    model = MODELS["double-four-bar"].factory()
    opts = RunOptions(rtol=1e-8, atol=1e-10)
    fast, ref = (simulate(model, t_end=0.5, options=opts, formulation_options={"fast": on}) for on in (True, False))
    assert fast.summary["steps"] == ref.summary["steps"]
    for key in ("q", "v", "a", "multipliers", "reactions"):
        scale = np.abs(ref.series[key].data).max()
        assert np.abs(fast.series[key].data - ref.series[key].data).max() < 1e3 * opts.rtol * scale, key
    np.testing.assert_array_equal(fast.series["reactions_unique"].data, ref.series["reactions_unique"].data)
    assert fast.series["violation"].data.max() <= 1e-12 * model.length_scale
