"""The per-step shortcuts of a whole simulate() (issue 16: the chains) give the reference's numbers.

- The uniqueness flags of paper 003 skip their pivoted QR where a block of constant columns (0 and +-1 entries, the
  translation columns of pin joints) proves full row rank with margin (analysis.solvability._unit_block): the
  bound it uses, min |R_ii| >= sigma_m(block) / sqrt(n), is linear algebra (tested at random configurations), and
  the flags are those of the full test wherever the shortcut is taken or not.
- The stored accelerations, multipliers, violations, energies and joint reactions of the compiled paths (the dense
  FastStep, the band BandStep on the sparse path with A as entry triplets) agree with the NumPy/SuperLU reference
  formulation to round-off (ROUND_OFF, as in test_fast.py: two exact solves in another order).
- The step watch's compiled measure of the after-step action (fast.rk_kernels.action_move) makes the same
  operations as its NumPy reference (simulation.step_watch.branch_move and the jump in error scales): the same
  numbers exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.analysis.solvability import ReactionFlags, _full_row_rank, _geqp3, _unit_block  # noqa: E402
from multibody.assembly import Workspace  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.kinematics import consistent_state  # noqa: E402
from multibody.models import four_bars  # noqa: E402
from multibody.models.nonholonomic_models import door_two_hinges  # noqa: E402
from multibody.simulation.recorder import Recorder  # noqa: E402
from multibody.fast.rk_kernels import action_move  # noqa: E402
from multibody.simulation.step_watch import StepWatch  # noqa: E402
from test_fast import ROUND_OFF, rel_diff  # noqa: E402
from test_generalized_alpha import chain  # noqa: E402


@pytest.mark.parametrize("bars,tip", [(3, 0.0), (10, 0.0), (10, 1.0), (40, 1.0)])
def test_unit_block_bounds_the_pivoted_qr(bars, tip):
    """At random configurations (off the manifold too) the chain's A keeps the block of its translation columns
    exactly, and every |R_ii| of the pivoted QR is at least the bound sigma_m(block) / sqrt(n)."""
    model = chain(bars, tip)
    ws, rng = Workspace(model), np.random.default_rng(5)
    A0 = ws.velocity_constraints(0.0, model.q0, model.v0)[1]
    cols, block, bound = _unit_block(A0)
    assert len(cols) == A0.shape[0] and bound > 0         # the x, y columns of every body: m of them
    for _ in range(20):
        A = ws.velocity_constraints(0.0, rng.uniform(-np.pi, np.pi, model.n), model.v0)[1]
        assert np.array_equal(A[:, cols], block)
        assert np.linalg.svd(A, compute_uv=False)[-1] >= np.linalg.svd(block, compute_uv=False)[-1]
        assert np.abs(_geqp3(A).diagonal()).min() >= bound


@pytest.mark.parametrize("model", [chain(10, 1.0), four_bars.double_four_bar(), door_two_hinges()],
                         ids=["chain", "double-four-bar", "door"])
def test_flags_equal_the_full_test(model):
    """ReactionFlags with its shortcut against the full-rank test it replaces, at random configurations: the
    chain takes the shortcut, the closed loops and the redundant door (flags not all unique) do not."""
    ws, rng = Workspace(model), np.random.default_rng(2)
    flags = ReactionFlags(model, None)
    for _ in range(10):
        q = model.q0 + 0.1 * rng.standard_normal(model.n)
        C = ws.velocity_constraints(0.0, q, model.v0)[1]
        full = _full_row_rank(C, flags.tol)
        assert not flags._bounded(C) or full
        assert flags._bounded(C) == (model.name.startswith("chain"))
        assert all(v.all() == full for v, _ in flags.record(q, C).values())


@pytest.mark.parametrize("bars", [10, 50])
def test_recorded_states_equal_the_reference(bars):
    """Stored states of the chain with a tip mass (10 bars: dense FastStep; 50 bars, n = 152: the sparse path's
    BandStep) recorded by the compiled formulation and by the reference one (fast=False)."""
    model = chain(bars, 1.0)
    forms = Lagrange(model), Lagrange(model, fast=False)
    assert (forms[0].band_step if bars == 50 else forms[0].fast_step) is not None
    recs = [Recorder(model, f) for f in forms]
    q, v = consistent_state(model, 0.0)
    rng = np.random.default_rng(4)
    for k in range(4):
        y = np.r_[q, v + 0.5 * k * rng.standard_normal(model.n)]
        for rec, form in zip(recs, forms):
            rec.record(0.1 * k, form.initial_state(0.1 * k, y[: model.n], y[model.n:]), force=True)
    got, want = recs
    for key in ("a", "multipliers", "energy"):
        assert rel_diff(np.array(got.rows[key]), np.array(want.rows[key])) < ROUND_OFF
    assert np.abs(np.array(got.rows["violation"]) - np.array(want.rows["violation"])).max() < ROUND_OFF
    reactions = np.array(got.extra["reactions"]), np.array(want.extra["reactions"])
    assert rel_diff(*reactions) < ROUND_OFF
    for key in set(got.extra) - {"reactions"}:
        assert np.array_equal(np.array(got.extra[key]), np.array(want.extra[key]))


@pytest.mark.parametrize("speed", [0.0, 1e-12, 1.0])
def test_watch_kernel_equals_the_reference(speed):
    """StepWatch._measure compiled (a Lagrange formulation with the compiled rhs, constant M) and by NumPy, at
    projections of random states of the 10-bar chain, at rest (the floor), barely moving and moving."""
    model = chain(10, 1.0)
    form = Lagrange(model)
    watch = StepWatch(form, 0.0, 1.0, 1e-4, 1e-6)
    assert watch.kernel is action_move
    rng, n = np.random.default_rng(8), model.n
    q, v = consistent_state(model, 0.0)
    for _ in range(5):
        before = np.r_[q + 1e-6 * rng.standard_normal(n), speed * rng.standard_normal(n)]
        after = form.after_step(0.0, before)
        got = watch._measure(before, after)
        watch.kernel = None
        want = watch._measure(before, after)
        watch.kernel = action_move
        assert got == want


@pytest.mark.parametrize("bars", [10, 50])
def test_stored_state_is_the_evaluated_one_bit_for_bit(bars):
    """BandStep.record (one state of the batch kernel) gives exactly the accelerations of the right-hand side the
    stepper evaluates (the same band_rhs)."""
    model = chain(bars, 1.0)
    form = Lagrange(model)
    step = form.band_step or form.fast_step.band_step
    rng = np.random.default_rng(9)
    q, v = consistent_state(model, 0.0)
    v = v + rng.standard_normal(model.n)
    assert np.array_equal(step.record(0.3, q, v)[0], form.rhs(0.3, np.r_[q, v])[model.n:])


@pytest.mark.parametrize("bars", [10, 50])
def test_batch_recorded_run_equals_the_per_state_one(bars, monkeypatch):
    """A whole simulate() whose stored states are computed together (simulation.record_batch) against the same run
    recording each state as it comes (batch_step -> None): the same steps and states; the rows, reactions and
    flags of the states equal to round-off (flags exactly)."""
    from multibody import RunOptions, simulate
    from multibody.simulation import recorder
    model, opts = chain(bars, 1.0), RunOptions(integrator="dopri5", rtol=1e-4, atol=1e-6)
    t_end = 0.2 if bars == 10 else 0.02
    batch = simulate(model, t_end=t_end, options=opts)
    monkeypatch.setattr(recorder, "batch_step", lambda rec: None)
    each = simulate(model, t_end=t_end, options=opts)
    assert np.array_equal(batch.t, each.t) and np.array_equal(batch.q, each.q) and np.array_equal(batch.v, each.v)
    for name in each.series:
        got, want = np.asarray(batch.series[name].data), np.asarray(each.series[name].data)
        if "unique" in name:
            assert np.array_equal(got, want), name
        else:
            assert np.abs(got - want).max() <= ROUND_OFF * max(1.0, np.abs(want).max()), name


def test_generalized_reactions_gather_equals_the_product():
    """ReactionMap.generalized (the terms gathered, A dense or sparse) against its definition Q_j = -A[R_j]^T
    lam[R_j] as the product with the (m, J) row indicator, on the chain with a tip mass at a random state."""
    import scipy.sparse as sp
    from multibody.analysis.reactions import reaction_map
    model = chain(10, 1.0)
    rmap, ws, rng = reaction_map(model), Workspace(model), np.random.default_rng(12)
    A = ws.velocity_constraints(0.0, rng.standard_normal(model.n), model.v0)[1]
    lam = rng.standard_normal(A.shape[0])
    Q = np.zeros((model.n + 1, rmap.rows_of.shape[1]))
    Q[: model.n] = -(A.T @ (lam[:, None] * rmap.rows_of))
    want = Q[rmap.cols, rmap.joint[:, None]]
    for got in (rmap.generalized(A, lam), rmap.generalized(sp.csr_matrix(A), lam)):
        assert rel_diff(got, want) < ROUND_OFF
