"""The reaction-uniqueness flags of spatial director models (fast.spatial_flags; issue 16) are the reference's
(analysis.solvability.ReactionFlags, paper 003 eqs 7, 21-27): the same series at every stored state and the same
summary, on the six-body linkage (one redundant row: a left null space at every state), on the gyro top (full row
rank), and with the bracket of |C|_2 forced open (every test then takes the reference's exact form), and at a
synthetic C whose rank decision the bracket cannot make.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.analysis.solvability import ReactionFlags  # noqa: E402
from multibody.analysis.spatial_reactions import spatial_reaction_map  # noqa: E402
from multibody.fast import spatial_flags  # noqa: E402
from multibody.fast.spatial_flags import SpatialReactionFlags  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402


def states(model, t_end=0.02):
    """(q, C) at the stored states of a short compiled lagrange run."""
    res = simulate(model, t_end=t_end, options=RunOptions(rtol=1e-8, atol=1e-10))
    form = Lagrange(model)
    return [(q, form.ws.constraints(0.0, q, np.zeros(model.n))[1]) for q in res.series["q"].data]


def compare(model, pairs):
    rmap = spatial_reaction_map(model)
    ref, fast = ReactionFlags(model, rmap), SpatialReactionFlags(model, rmap)
    for q, C in pairs:
        a, b = ref.record(q, C), fast.record(q, C)
        assert a.keys() == b.keys()
        for key in a:
            assert np.array_equal(a[key][0], b[key][0]) and tuple(a[key][1]) == tuple(b[key][1])
    assert ref.summary() == fast.summary()
    return ref.summary()


@pytest.mark.parametrize("factory", [six_body_linkage, gyro_top], ids=["six-body-linkage", "gyro-top"])
def test_flags_along_a_run_are_the_reference_flags(factory):
    model = factory()
    summary = compare(model, states(model))
    assert summary["redundancy_max"] == (1 if factory is six_body_linkage else 0)


def test_flags_with_the_bracket_open_take_the_exact_tests(monkeypatch):
    """lo = 0, hi = inf: no test is decided by the bracket; the SVD's |C|_2 and the reference's forms decide."""
    original = spatial_flags._Scale.__init__

    def open_bracket(self, C):
        original(self, C)
        self.lo, self.hi = 0.0, np.inf
    monkeypatch.setattr(spatial_flags._Scale, "__init__", open_bracket)
    model = six_body_linkage()
    compare(model, states(model, 0.005))


def test_rank_at_the_threshold_takes_the_svd(monkeypatch):
    """C with its smallest singular value moved so that the last pivot |R_mm| of its QR lies at 1.2e-9 |C|_2,
    inside the bracket of the rank test (1e-9 |C|_2, |C|_2 bracketed within 0.71-4.9 of itself on the linkage):
    the SVD's |C|_2 decides, as in the reference."""
    import scipy.linalg as sla
    model = six_body_linkage()
    q, C = states(model, 0.002)[0]
    U, s, Vt = np.linalg.svd(C)
    last = lambda A: abs(sla.qr(A, pivoting=True, mode="r")[0][-1, -1])     # noqa: E731
    s[-1] = 1e-9 * s[0]
    s[-1] *= 1.2e-9 * s[0] / last((U * s) @ Vt)
    C2 = (U * s) @ Vt
    exact = []
    make_exact = spatial_flags._Scale.make_exact
    monkeypatch.setattr(spatial_flags._Scale, "make_exact", lambda self: exact.append(1) or make_exact(self))
    compare(model, [(q, C2)])
    assert exact


def test_a_compiled_run_records_the_reference_flags():
    """simulate() on the compiled path takes SpatialReactionFlags (Lagrange.reaction_flags, set with the spatial
    right-hand side); the NumPy path keeps ReactionFlags: the series and the summary agree."""
    model = six_body_linkage()
    opts = dict(t_end=0.01, options=RunOptions(rtol=1e-8, atol=1e-10))
    fast, ref = simulate(model, **opts), simulate(model, formulation_options={"fast": False}, **opts)
    assert Lagrange(model).reaction_flags is SpatialReactionFlags
    assert not hasattr(Lagrange(model, fast=False), "reaction_flags")
    for key in ("multipliers_unique", "reactions_unique"):
        a, b = fast.series[key].data, ref.series[key].data
        assert np.array_equal(a, np.broadcast_to(b[0], a.shape)) and np.all(b == b[0])
    for key in ("redundancy_max", "non_unique_reactions"):
        assert fast.summary[key] == ref.summary[key]
