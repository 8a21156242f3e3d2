"""Kinematic analysis through singular configurations (issue 21 item 1 with paper 000's continuation): the
double four-bar of paper 000 Sect. 3.2 with its left crank driven at -1 rad/s passes the horizontal singular
configurations (rank 14 -> 12) and must stay on the parallel branch, with the driver's effort of that branch."""
import numpy as np
import pytest

from multibody import ModelBuilder, Motion
from multibody.simulation.kinematic import kinematic_analysis

G, L = 9.81, 1.0


def driven_double_four_bar():
    """Five uniform bars (1 m, 1 kg) as in models.four_bars.double_four_bar, bar1 driven: theta1 = pi/2 - t."""
    mb = ModelBuilder("driven-double-four-bar", gravity=(0.0, -G))
    for k in range(1, 6):
        x = (k - 1) / 2
        if k % 2:
            mb.add_bar(f"bar{k}", length=L, mass=1.0, position=(x, L / 2), angle=np.pi / 2)
        else:
            mb.add_bar(f"bar{k}", length=L, mass=1.0, position=(x, L), angle=0.0)
    for name, body, x in (("O1", "bar1", 0.0), ("O3", "bar3", 1.0), ("O5", "bar5", 2.0)):
        mb.revolute(name, "ground", body, at=(x, 0.0))
    for name, a, b, x in (("A", "bar1", "bar2", 0.0), ("B", "bar2", "bar3", 1.0), ("C", "bar3", "bar4", 1.0),
                          ("D", "bar4", "bar5", 2.0)):
        mb.revolute(name, a, b, at=(x, L))
    mb.driver("O1", Motion.constant_rate(np.pi / 2, -1.0))
    return mb.build()


@pytest.mark.parametrize("step", [np.pi / 20, 0.01])
def test_driven_double_four_bar_keeps_its_branch_and_effort(step):
    """On the parallel branch every crank has theta = pi/2 - t and the couplers translate, so the kinetic energy
    (3 I_O + 2 m L^2) w^2 / 2 is constant and the driver's power balances the potential energy's rate: effort
    tau = dV/dtheta = (3 m g L/2 + 2 m g L) cos theta = 3.5 g cos theta. Output steps of pi/20 land exactly on
    the singular configurations (t = pi/2, 3 pi/2, ...: Phi alone does not pin the configuration there, and the
    multipliers are not unique: the effort reported is the limit of the motion's)."""
    r = kinematic_analysis(driven_double_four_bar(), np.arange(0.0, 7.0, step))
    th = np.stack([r.column("q", f"bar{k}.theta") for k in (1, 3, 5)], axis=1)
    exact = np.pi / 2 - r.t
    np.testing.assert_allclose(np.angle(np.exp(1j * (th - exact[:, None]))), 0.0, atol=1e-10)
    np.testing.assert_allclose(r.column("v", "bar3.theta"), -1.0, atol=1e-8)
    np.testing.assert_allclose(r.series["driver_efforts"].data[:, 0], 3.5 * G * np.cos(exact), atol=1e-6)
