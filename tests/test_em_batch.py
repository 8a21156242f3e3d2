"""Energy-momentum steps in batches (multibody.fast.em_batch, issue 16) and the full-row-rank certificate of director
trees (analysis.structural_rank.director_tree_full_rank).

A batch calls the same compiled Newton (fast.em_constrained_kernels / fast.em_reduced_kernels) with the same arrays, the
same starting guesses and the same update q + dq, 2/dt dq - v as the step-by-step stepper, so the states, Newton
counts, condition numbers and multipliers are the same numbers, not merely close: the tests compare them exactly.
The batch's rank test must never claim full rank where linalg.rank's pivoted QR (the step-by-step path's choice of
rows) would not: |R_ii| >= sigma_min(A) and |R_11| <= sigma_max(A).
"""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.analysis.structural_rank import director_tree_full_rank, full_row_rank_on_manifold  # noqa: E402
from multibody.assembly import Workspace  # noqa: E402
from multibody.fast.em_batch import joints_kernel, momentum_kernel  # noqa: E402
from multibody.fast.spatial import QuadraticTable  # noqa: E402
from multibody.integrate import em_stepper  # noqa: E402
from multibody.linalg.rank import pivoted_qr  # noqa: E402
from multibody.linalg.rotations import expm_so3  # noqa: E402
from multibody.model.director_builder import SpatialModelBuilder  # noqa: E402
from multibody.model.director_tree import spatial_parts  # noqa: E402
from multibody.models.spatial_mechanisms import gimbal_lock, spatial_slider_crank  # noqa: E402
from multibody.models.spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage  # noqa: E402
from multibody.simulation import RunOptions, simulate  # noqa: E402

H = 1e-3


def _run(model, scheme, steps, diagnostics, batch=True, size=None):
    opts = RunOptions(integrator="energy-momentum", step=H, diagnostics=diagnostics)
    patches = []
    if not batch:
        patches.append(mock.patch.object(em_stepper, "batch_applies", lambda em: False))
    if size is not None:
        patches.append(mock.patch("multibody.fast.em_batch.BATCH_STEPS", size))
    for p in patches:
        p.start()
    try:
        return simulate(model, t_end=steps * H, formulation=scheme, options=opts)
    finally:
        for p in patches:
            p.stop()


@pytest.mark.parametrize("scheme", ["constrained", "reduced"])
@pytest.mark.parametrize("diagnostics", [False, True])
def test_batched_steps_are_the_step_by_step_states(scheme, diagnostics):
    """The gyro top (paper 004 Sect. 5.1), 250 steps: every stored series and the summary (Newton counts, condition
    numbers, drifts) are the same numbers with and without batches; batches of 7 steps (refilled mid-run) too."""
    from multibody.fast.em_batch import StepBatch
    model = gyro_top()
    ref = _run(model, scheme, 250, diagnostics, batch=False)
    for size, fills in ((None, 1), (7, 36)):
        calls = []
        original = StepBatch._fill
        with mock.patch.object(StepBatch, "_fill", lambda self, *a: calls.append(a[-1]) or original(self, *a)):
            res = _run(model, scheme, 250, diagnostics, size=size)
        assert len(calls) == fills and sum(calls) == 250
        assert set(res.series) == set(ref.series)
        for key in ref.series:
            np.testing.assert_array_equal(res.series[key].data, ref.series[key].data, err_msg=key)
        same = {k: v for k, v in res.summary.items() if "wall" not in k}
        assert same == {k: v for k, v in ref.summary.items() if "wall" not in k}


def test_batches_apply_where_no_step_needs_a_python_choice():
    """The gyro top (no redundant rows, no closure): batched; the six-body linkage (a redundant row, a closed loop):
    the constrained scheme batched (its rows chosen in the loop by the same LAPACK call), the reduced one step by
    step (closure rows)."""
    from multibody.formulations.registry import make_formulation
    for model, expected in ((gyro_top(), (True, True)), (six_body_linkage(), (True, False))):
        for scheme, want in zip(("constrained", "reduced"), expected):
            form = make_formulation(scheme, model)
            stepper = em_stepper.EnergyMomentum(form, 0.0, np.concatenate([model.q0, model.v0]), 0.01, step=H,
                                                rtol=1e-6)
            assert (stepper.batch is not None) == want, (model.name, scheme)


@pytest.mark.parametrize("diagnostics", [False, True])
def test_batched_linkage_steps_are_the_step_by_step_states(diagnostics):
    """The six-body linkage (paper 004 Sect. 5.4: 59 of its 60 rows independent), 200 constrained steps: the pivoted
    QR leaves out row 57, then 30 (steps 1 and 75); batches stop where the choice changes and the stepper carries
    the multipliers over. Every series and the summary are the same numbers with and without batches."""
    from multibody.fast.em_batch import StepBatch
    model = six_body_linkage()
    ref = _run(model, "constrained", 200, diagnostics, batch=False)
    calls = []
    original = StepBatch._fill
    with mock.patch.object(StepBatch, "_fill", lambda self, *a: calls.append(a[-1]) or original(self, *a)):
        res = _run(model, "constrained", 200, diagnostics)
    assert 1 < len(calls) < 10
    for key in ref.series:
        np.testing.assert_array_equal(res.series[key].data, ref.series[key].data, err_msg=key)
    same = {k: v for k, v in res.summary.items() if "wall" not in k}
    assert same == {k: v for k, v in ref.summary.items() if "wall" not in k}


def test_the_batch_chooses_the_rows_of_the_stepper():
    """em_constrained_kernels.row_choice (LAPACK dgeqp3 called from the loop) gives exactly fast.spatial.
    independent_rows (the stepper's _select): random matrices with a row that is the sum of two others (rank m - 1)
    or a scaled copy, and A of the six-body linkage along its motion."""
    from multibody.fast.em_constrained_kernels import QR_WORK, row_choice
    from multibody.fast.spatial import independent_rows
    rng = np.random.default_rng(11)
    mats = []
    for k in range(30):
        m, n = rng.integers(3, 40, 2)
        A = rng.standard_normal((m, n))
        A[-1] = A[0] + A[1] if k % 2 else 1e-3 * A[1]
        mats.append(A)
    model = six_body_linkage()
    table = QuadraticTable(model)
    mats += [table.evaluate(model.q0 + 0.01 * k * rng.standard_normal(model.n))[1] for k in range(5)]
    for A in mats:
        m, n = A.shape
        chosen = np.empty(m, np.int64)
        rank = row_choice(np.ascontiguousarray(A), np.empty((m, n)), np.empty(m, np.int32), np.empty(min(m, n)),
                          np.empty(QR_WORK), float(np.sqrt(np.finfo(float).eps)), chosen)
        np.testing.assert_array_equal(chosen[:rank], independent_rows(A))


def test_the_rank_test_never_claims_more_than_the_pivoted_qr():
    """rows_all_independent is True only where pivoted_qr keeps every row: the gyro top (rank 9 of 9) yes, the
    six-body linkage (rank 59 of 60, paper 004 Sect. 5.4) no, and a row copied onto another row no."""
    from multibody.fast.em_batch_kernels import rows_all_independent
    for model, expected in ((gyro_top(), True), (six_body_linkage(), False)):
        table = QuadraticTable(model)
        m, n = table.m, table.n
        A, work = np.empty((m, n)), [np.empty(m), np.empty((m, m)), np.empty(m)]
        got = rows_all_independent(model.q0.copy(), table.tab, work[0], A, *work[1:])
        assert got == expected
        assert (len(pivoted_qr(A).independent_rows) == m) == expected
        np.testing.assert_array_equal(A, table.evaluate(model.q0)[1])      # the A it judged


def test_compiled_momenta_are_the_reference():
    """em_batch_kernels.momenta sums the same terms in the same order as SpatialBodies.momenta."""
    rng = np.random.default_rng(3)
    for model in (gyro_top(), six_body_linkage()):
        bodies, _ = spatial_parts(model)
        q, v = model.q0 + rng.standard_normal(model.n), rng.standard_normal(model.n)
        np.testing.assert_array_equal(momentum_kernel(bodies, compiled=True)(q, v),
                                      np.concatenate(bodies.momenta(q, v)))


@pytest.mark.parametrize("factory", [six_body_linkage, cylindrical_pair, planar_pair, spatial_slider_crank],
                         ids=["R", "C", "E", "S-R-P"])
def test_compiled_joint_coordinates_are_the_reference(factory):
    """em_batch_kernels.joint_coordinates evaluates LowerPairs.relative_coordinates' formulas (eqs 98, 116, 138, 152)
    with the sums in another order: equal to round-off (64 eps of the coordinates' size; theta within pi) at the
    initial configuration and off it."""
    model = factory()
    bodies, groups = spatial_parts(model)
    groups = [g for _, g in groups]
    compiled, reference = joints_kernel(bodies, groups, True), joints_kernel(bodies, groups, False)
    rng = np.random.default_rng(7)
    for q in (model.q0, model.q0 + 0.3 * rng.standard_normal(model.n)):
        size = max(1.0, np.max(np.abs(q)))
        np.testing.assert_allclose(compiled(q), reference(q), rtol=0, atol=64 * np.finfo(float).eps * size * np.pi)


def _random_tree(seed: int):
    """Three bodies at a random configuration: body a hangs from the ground by a spherical pair, b from a by a
    revolute pair, c from a by a revolute pair (a tree); random rotations, joint axes and points."""
    rng = np.random.default_rng(seed)
    b = SpatialModelBuilder(f"tree-{seed}")
    Ra = expm_so3(rng.standard_normal(3))
    b.add_body("a", mass=1.0, inertia=(0.3, 0.4, 0.5), position=Ra @ [0, 0, -1.0], directors=Ra)
    b.spherical("s", None, "a", point=(0, 0, 0))
    for name, tip in (("b", [0.5, 0, -2.0]), ("c", [-0.5, 0.2, -1.5])):
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        R = expm_so3(rng.uniform(-np.pi, np.pi) * axis) @ Ra
        point = Ra @ tip
        b.add_body(name, mass=2.0, inertia=(0.2, 0.2, 0.1), position=point + R @ rng.standard_normal(3),
                   directors=R)
        b.revolute(f"r{name}", "a", name, point=point, axis=axis)
    return b.build()


@pytest.mark.parametrize("seed", range(5))
def test_a_tree_of_spherical_and_revolute_pairs_is_certified_and_has_full_rank_on_its_manifold(seed):
    """The proof's claim checked where the proof does not look: at random configurations of random S/R trees (on
    their manifolds: the models are built there) A (m x n) has rank m."""
    model = _random_tree(seed)
    assert director_tree_full_rank(model) and full_row_rank_on_manifold(model)
    A = Workspace(model).constraints(0.0, model.q0, np.zeros(model.n))[1]
    assert np.max(np.abs(Workspace(model).constraints(0.0, model.q0, np.zeros(model.n))[0])) < 1e-12
    s = np.linalg.svd(A, compute_uv=False)
    assert len(s) == model.m and s[-1] > 1e-3 * s[0]


def test_the_gyro_top_and_the_gimbal_are_certified_loops_and_other_pairs_are_not():
    """Trees of S and R pairs (the gyro top, the gimbal) are certified; the six-body linkage (a closed loop), the
    cylindrical and the planar pair (C and E pairs, not covered by the proof) are not; nor is a tree whose pair rows
    were altered (the proof is about the builder's rows)."""
    assert director_tree_full_rank(gyro_top()) and director_tree_full_rank(gimbal_lock())
    for model in (six_body_linkage(), cylindrical_pair(), planar_pair()):
        assert not director_tree_full_rank(model)
    model = _random_tree(0)
    pairs = model.constraints[-1]
    pairs.g.setflags(write=True)
    pairs.g[0, 0] += 1.0
    assert not director_tree_full_rank(model)


def test_a_certified_director_tree_reports_a_complete_empty_crossing_list():
    """The gyro top under lagrange + dopri5: no singular configuration can exist, none is reported, the list is
    complete (monitored) without sampling."""
    res = simulate(gyro_top(), t_end=0.05, options=RunOptions(rtol=1e-8, atol=1e-10))
    assert res.summary["singular_crossings"] == []
    assert res.summary["singular_crossings_monitored"] is True


def test_a_batch_that_cannot_start_leaves_the_step_to_the_stepper():
    """At a configuration where the rows are dependent (the top's directors all zero: its internal rows vanish) the
    batch takes no step, returns None (the stepper steps alone, with its own rank decision) and waits PAUSE_STEPS
    steps before trying again."""
    from multibody.fast.em_batch import PAUSE_STEPS, StepBatch
    from multibody.integrate.em_reduced import COMPLEX_STEP
    from multibody.integrate.energy_momentum import EnergyMomentumStepper
    model = gyro_top()
    em = EnergyMomentumStepper(model, scheme="constrained", dt=H, condition=False)
    batch = StepBatch(em, COMPLEX_STEP)
    q = model.q0.copy()
    q[3:] = 0.0
    assert batch.take(q, model.v0, 10) is None
    assert batch.count == 0 and batch.pause == PAUSE_STEPS
    y = batch.take(model.q0, model.v0, 10)
    assert y is None and batch.pause == PAUSE_STEPS - 1


def test_long_steps_of_the_linkage_are_certified_without_svd_samples():
    """The six-body linkage (paper 004 Sect. 5.4, rank 59 of 60 along its motion, sigma_r / sigma_1 ~ 0.014) at the
    CLI's h = 10 ms: a whole step is too long for the certificate (|L^-1 dX|_F ~ 5-18), its sub-pieces on the
    interpolant and, where the rows lose conditioning, rows chosen anew are not; no piece goes to the SVD monitor and
    no crossing is reported."""
    from multibody.simulation import crossings
    calls = []
    original = crossings.CrossingMonitor._uncertain

    def counted(self, *args):
        calls.append(args[0])
        return original(self, *args)

    with mock.patch.object(crossings.CrossingMonitor, "_uncertain", counted):
        res = simulate(six_body_linkage(), t_end=0.3, formulation="constrained",
                       options=RunOptions(integrator="energy-momentum", step=0.01, diagnostics=False))
    assert calls == []
    assert res.summary["singular_crossings"] == [] and res.summary["singular_crossings_monitored"] is True
