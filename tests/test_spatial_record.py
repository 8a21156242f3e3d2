"""The stored states of a spatial Lagrange run computed together (simulation.record_batch_spatial, issue 16): the same
rows to round-off and the same uniqueness flags (paper 003) as recording each state as it comes; the flags' certificate
(fast.spatial_certify) holds its inequalities along a run and sends a state near a singular configuration to the
reference.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.analysis.spatial_reactions import spatial_reaction_map  # noqa: E402
from multibody.fast import spatial_certify  # noqa: E402
from multibody.fast.spatial_flags import SpatialReactionFlags  # noqa: E402
from multibody.fast.spatial_record import certificate, comparison_bounds  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402
from multibody.simulation import record_batch_spatial, recorder  # noqa: E402

OPTS = RunOptions(rtol=1e-8, atol=1e-10)


def stored(model, t_end):
    """(the SpatialStep, the stored states Y (k, 2n)) of a compiled run, from its batch."""
    seen = {}
    block = record_batch_spatial.SpatialBatch._block

    def spy(self, rec, states, write):
        seen["step"] = self.step
        seen.setdefault("Y", []).extend(y for _, y, _ in states)
        return block(self, rec, states, write)
    mp = pytest.MonkeyPatch()
    mp.setattr(record_batch_spatial.SpatialBatch, "_block", spy)
    try:
        simulate(model, t_end=t_end, options=OPTS)
    finally:
        mp.undo()
    return seen["step"], np.array(seen["Y"])


@pytest.mark.parametrize("factory", [six_body_linkage, gyro_top], ids=["six-body-linkage", "gyro-top"])
def test_batch_recorded_run_equals_the_per_state_one(factory, monkeypatch):
    """The same steps and states; accelerations, multipliers, energies, violations and reactions to round-off (the
    same kernel, another order of the reactions' sums); the uniqueness flags and the summary exactly."""
    model = factory()
    decided = []
    certified = SpatialReactionFlags.certified
    monkeypatch.setattr(SpatialReactionFlags, "certified", lambda *a: decided.extend(certified(*a)) or decided[-len(a[1]):])
    batch = simulate(model, t_end=0.01, options=OPTS)
    assert decided and any(f is not None for f in decided)     # the certificate decided states
    monkeypatch.setattr(recorder, "batch_step", lambda rec: None)
    each = simulate(model, t_end=0.01, options=OPTS)
    assert np.array_equal(batch.t, each.t) and np.array_equal(batch.q, each.q) and np.array_equal(batch.v, each.v)
    for name in each.series:
        got, want = np.asarray(batch.series[name].data), np.asarray(each.series[name].data)
        if name.endswith("_unique"):
            assert np.array_equal(got, want), name
        else:
            scale = max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
            assert np.allclose(got, want, rtol=0, atol=1e-10 * scale, equal_nan=True), name
    for key in ("redundancy_max", "non_unique_reactions"):
        assert batch.summary[key] == each.summary[key]


def test_certificate_inequalities_along_a_run():
    """At every stored state of the six-body linkage: sigma <= sigma_r(C) (step 1 of fast.spatial_certify), the
    residual bound rho >= |C^T N^T| exactly in extended precision, and the null vector within delta of C's
    smallest left singular vector (step 2), all against the SVD."""
    model = six_body_linkage()
    step, Y = stored(model, 0.01)
    flags = SpatialReactionFlags(model, spatial_reaction_map(model))
    _, _, _, _, C, N, (info, _, _) = step.record_batch(Y, flags.group, len(flags.names))
    delta, rho, sigma, _ = spatial_certify.null_bounds(C, N, info)
    for s in range(len(Y)):
        U, sv, _ = np.linalg.svd(C[s])
        u = U[:, -1]
        assert sigma[s] <= sv[-2]
        exact = np.abs(C[s].astype(np.longdouble).T @ N[s, 0].astype(np.longdouble))
        assert float(np.sqrt(np.sum(exact ** 2))) <= rho[s]
        assert min(np.linalg.norm(N[s, 0] - u), np.linalg.norm(N[s, 0] + u)) <= delta[s]


def test_comparison_bounds_bound_the_inverse():
    """|L^-1|_inf <= b_inf and |L^-1|_1 <= b_one (Higham Thm 8.12) for lower triangular factors with and without an
    envelope."""
    rng = np.random.default_rng(3)
    for k in (1, 5, 30):
        X = rng.standard_normal((k, k + 3))
        L = np.linalg.cholesky(X @ X.T)
        L[np.tril_indices(k, -3)] *= rng.integers(0, 2, size=len(np.tril_indices(k, -3)[0]))
        b_inf, b_one = comparison_bounds(L.copy(), k)
        Li = np.linalg.inv(L)
        assert np.abs(Li).sum(axis=1).max() <= b_inf * (1 + 1e-12)
        assert np.abs(Li).sum(axis=0).max() <= b_one * (1 + 1e-12)


def test_near_a_singular_configuration_the_reference_decides():
    """C of a stored state with its r-th singular value moved to 1e-10 sigma_1 (a second left null direction at the
    rank threshold 1e-9 |C|_2 within |C|_2's bracket): the certificate cannot bound sigma_r away from it, so the
    state is not decided and takes SpatialReactionFlags.record (the reference), whose flags the batch then records.
    The unchanged C is decided."""
    model = six_body_linkage()
    step, Y = stored(model, 0.002)
    flags = SpatialReactionFlags(model, spatial_reaction_map(model))
    pairs = len(flags.names)
    _, _, _, _, C, N, cert = step.record_batch(Y[:1], flags.group, pairs)
    U, sv, Vt = np.linalg.svd(C[0])
    sv[-2] = 1e-10 * sv[0]
    C2 = np.ascontiguousarray((U * sv) @ Vt)
    m, n = C2.shape
    active, _, r = step._active()
    work = np.zeros((m, m))
    work[0] = N[0, 0]
    cert2 = (np.empty((1, 6)), np.empty((1, m)), np.empty((1, 1, pairs, n)))
    certificate(C2, work, 1, active, np.empty((r, n)), np.zeros((r, r)), flags.group, cert2[0][0], cert2[1][0],
                cert2[2][0])
    Q = Y[:1, :n]
    assert flags.certified(Q, C, N, cert)[0] is not None
    assert flags.certified(Q, C2[None], work[None, :1], cert2)[0] is None
    got = record_batch_spatial._flags(flags, Q, C2[None], work[None, :1], cert2)[0]
    want = SpatialReactionFlags(model, spatial_reaction_map(model)).record(Q[0], C2)
    assert got.keys() == want.keys() and all(np.array_equal(got[key][0], want[key][0]) for key in want)
