"""Singular configurations crossed by a spatial director model (simulation.crossings with the compiled certificate
of fast.spatial_monitor; issue 16): the double four-bar of paper 000 Sect. 3.2 built from spatial bodies and
revolute pairs (paper 004 Sect. 4.5) moves in its plane exactly as the planar one, so its crossings are where the
cranks are horizontal, at the times of the exact 1-DOF motion (tests/test_crossings.py)."""
import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.model.director_builder import SpatialModelBuilder  # noqa: E402

from test_crossings import _exact_crossings  # noqa: E402


def spatial_double_four_bar(omega0: float = -1.0):
    """Five bars of 1 m and 1 kg in the plane z = 0 (inertia m L^2 / 12 about z and across, 1e-3 along the bar),
    cranks vertical and couplers horizontal at y = 1, every crank turning at omega0 about z; revolute axes along
    z, gravity 9.81 along -y: the planar double four-bar's motion. n = 60 (5 x 12 director coordinates), m = 65
    (30 rigidity rows, 7 x 5 revolute rows); rank 59 (1 DOF), 57 where all bars are horizontal (the planar rank
    drop of 2, paper 000 Sect. 3.2: the out-of-plane rows stay as they are)."""
    b = SpatialModelBuilder("spatial-double-four-bar", source="paper 000 Sect. 3.2 with paper 004 bodies")
    jp = 1.0 / 12.0
    crank = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])    # directors: bar axis along y, -x, z
    for k in range(1, 6):
        x = (k - 1) / 2
        if k % 2:
            b.add_body(f"bar{k}", mass=1.0, inertia=[1e-3, jp, jp], directors=crank, position=(x, 0.5, 0.0),
                       velocity=(-omega0 / 2, 0.0, 0.0), omega=(0.0, 0.0, omega0))
        else:
            b.add_body(f"bar{k}", mass=1.0, inertia=[1e-3, jp, jp], position=(x, 1.0, 0.0),
                       velocity=(-omega0, 0.0, 0.0))
    for name, body, x in (("O1", "bar1", 0.0), ("O3", "bar3", 1.0), ("O5", "bar5", 2.0)):
        b.revolute(name, None, body, point=(x, 0.0, 0.0), axis=(0, 0, 1))
    for name, a, c, x in (("A", "bar1", "bar2", 0.0), ("B", "bar2", "bar3", 1.0), ("C", "bar3", "bar4", 1.0),
                          ("D", "bar4", "bar5", 2.0)):
        b.revolute(name, a, c, point=(x, 1.0, 0.0), axis=(0, 0, 1))
    b.gravity(9.81, direction=(0, -1, 0))
    return b.build()


def test_spatial_double_four_bar_crossings_at_the_exact_times():
    """Both crossings in 1.5 s at the exact times (the planar test's tolerance, 1e-6 s at rtol 1e-8) with the rank
    drop of 2; the run took the compiled path (certificate, compiled per-step work) between them."""
    exact = _exact_crossings(1.5)
    model = spatial_double_four_bar()
    r = simulate(model, t_end=1.5, options=RunOptions(rtol=1e-8, atol=1e-10))
    c = r.summary["singular_crossings"]
    assert r.summary["backend"] == "compiled" and len(exact) == 2 and len(c) == 2
    np.testing.assert_allclose([x["t"] for x in c], exact, atol=1e-6)
    assert {(x["rank"], x["generic_rank"], x["rank_drop"]) for x in c} == {(57, 59, 2)}


def test_six_body_linkage_crosses_nothing_and_is_monitored():
    """The six-body linkage (paper 004 Sect. 5.4) keeps rank 59 of 60 (one structurally redundant row): no
    crossing, and the monitor says it watched."""
    from multibody.models.spatial_models import six_body_linkage
    r = simulate(six_body_linkage(), t_end=0.02, options=RunOptions(rtol=1e-10, atol=1e-12))
    assert r.summary["singular_crossings"] == [] and r.summary["singular_crossings_monitored"]
