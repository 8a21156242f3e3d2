"""The modified (overconstrained) four-bar mechanisms of paper 000 Sects. 3.3-3.5.

All bars are uniform, 1 m and 1 kg per crank, the long couplers L per cell and 1 kg per metre;
gravity 9.81 m/s^2 along -y. Every parallelogram cell whose coupler is shared by three or more
cranks is overconstrained by one equation (one redundant hinge), and every such chain is singular
when its cranks are aligned with the coupler (all bars horizontal): the rank drops by one more.

Initial conditions (the paper does not give them): the cranks start vertical (the unstable upper
equilibrium) and turn at ``omega0`` (-1 rad/s, as the IFToMM double four-bar); the system then
falls through the horizontal position (theta = 0, singular) and keeps turning full turns, passing
theta = -pi, 0, -pi, ... (singular each time). The exact motion of the 1-DOF chains is the one of
:func:`crank_angle_exact_cells` (theta'' = -k cos theta, k of :func:`four_bars.crank_rate_constant`
with n_cells = number of cells: the cranks' and coupler's energies are the ones of the double four-bar).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ..model.builder import ModelBuilder
from .four_bars import crank_rate_constant

G = 9.81
L = 1.0
MASS = 1.0


def _modified_chain(name: str, cells: int, omega0: float, source: str):
    """cells + 1 cranks bar1, bar3, ... hinged to ground at x = 0, 1, ..., one coupler 'bar2' of length
    cells * L (mass cells * MASS) hinged to every crank tip."""
    mb = ModelBuilder(name, gravity=(0.0, -G), source=source)
    w = omega0
    cranks = [f"bar{2 * k + 1}" for k in range(cells + 1)]
    for k, crank in enumerate(cranks):
        mb.add_bar(crank, length=L, mass=MASS, position=(k * L, L / 2), angle=np.pi / 2,
                   velocity=(-w * L / 2, 0.0), angular_velocity=w)
    mb.add_bar("bar2", length=cells * L, mass=cells * MASS, position=(cells * L / 2, L), angle=0.0,
               velocity=(-w * L, 0.0))
    for k, crank in enumerate(cranks):
        mb.revolute(f"O{2 * k + 1}", "ground", crank, at=(k * L, 0.0))
        mb.revolute(f"A{2 * k + 1}", crank, "bar2", at=(k * L, L))
    mb.set_velocity("bar1.theta", w)
    poses = {c: ((k + 0.5) * L, 0.0, 0.0) for k, c in enumerate(cranks)}
    poses["bar2"] = (L + cells * L / 2, 0.0, 0.0)
    mb.add_configuration("singular", poses)
    return mb.build()


def double_four_bar_modified(*, omega0: float = -1.0):
    """Modified double four-bar (paper 000 Sect. 3.3, Fig. 4): bars 2 and 4 of the IFToMM double
    four-bar merged into one coupler of 2 m and 2 kg. n = 12, m = 12 (6 hinges), rank 11 (one
    redundant hinge, 1 DOF); rank 10 when all bars are horizontal (configuration ``singular``).
    Cranks bar1, bar3, bar5 vertical at start, turning at ``omega0`` rad/s; they pass the singular
    horizontal configurations about every second (see the module docstring)."""
    return _modified_chain("double-four-bar-modified", 2, omega0, "paper 000 Sect. 3.3")


def triple_four_bar_modified(*, omega0: float = -1.0):
    """Modified triple four-bar (paper 000 Sect. 3.4, Fig. 7): four cranks bar1, bar3, bar5, bar7 and
    one coupler bar2 of 3 m and 3 kg. n = 15, m = 16 (8 hinges, m > n), rank 14 (1 DOF);
    rank 13 when all bars are horizontal (configuration ``singular``). Initial conditions as the
    modified double four-bar (module docstring)."""
    return _modified_chain("triple-four-bar-modified", 3, omega0, "paper 000 Sect. 3.4")


def four_bar_2x2_modified(*, omega_lower: float = -1.0, omega_upper: float = 1.5):
    """Modified 2x2 four-bar (paper 000 Sect. 3.5, Fig. 12): two modified double four-bars stacked.

    Lower half: cranks bar1, bar2, bar3 (1 m, 1 kg) hinged to ground at x = 0, 1, 2 and coupler bar4
    (2 m, 2 kg) hinged to their tips. Upper half: cranks bar5, bar6, bar7 hinged on bar4 at its
    left end, middle and right end, and coupler bar8 (2 m, 2 kg) hinged to their tips. The couplers
    translate (parallelograms), so both stay horizontal. n = 24, m = 24 (12 hinges), rank 22, 2 DOF
    (the angles of bar1 and bar5); rank 21 when the bars of one half are horizontal (configuration
    ``singular``: lower cranks horizontal, upper cranks vertical).
    Initial conditions (the paper gives none): all cranks vertical, bar1 turning at ``omega_lower``
    and bar5 at ``omega_upper`` rad/s (absolute), so that both halves pass their singular
    (horizontal) configurations, at different times.
    """
    mb = ModelBuilder("four-bar-2x2-modified", gravity=(0.0, -G), source="paper 000 Sect. 3.5")
    wl, wu = omega_lower, omega_upper
    for k, crank in enumerate(("bar1", "bar2", "bar3")):
        mb.add_bar(crank, length=L, mass=MASS, position=(k * L, L / 2), angle=np.pi / 2,
                   velocity=(-wl * L / 2, 0.0), angular_velocity=wl)
    mb.add_bar("bar4", length=2 * L, mass=2 * MASS, position=(L, L), angle=0.0, velocity=(-wl * L, 0.0))
    for k, crank in enumerate(("bar5", "bar6", "bar7")):
        mb.add_bar(crank, length=L, mass=MASS, position=(k * L, 1.5 * L), angle=np.pi / 2,
                   velocity=(-wl * L - wu * L / 2, 0.0), angular_velocity=wu)
    mb.add_bar("bar8", length=2 * L, mass=2 * MASS, position=(L, 2 * L), angle=0.0,
               velocity=(-(wl + wu) * L, 0.0))
    for k, crank in enumerate(("bar1", "bar2", "bar3")):
        mb.revolute(f"O{k + 1}", "ground", crank, at=(k * L, 0.0))
        mb.revolute(f"A{k + 1}", crank, "bar4", at=(k * L, L))
    for k, crank in enumerate(("bar5", "bar6", "bar7")):
        mb.revolute(f"B{k + 5}", "bar4", crank, at=(k * L, L))
        mb.revolute(f"C{k + 5}", crank, "bar8", at=(k * L, 2 * L))
    mb.set_velocity("bar1.theta", wl)
    mb.set_velocity("bar5.theta", wu)
    poses = {c: ((k + 0.5) * L, 0.0, 0.0) for k, c in enumerate(("bar1", "bar2", "bar3"))}
    poses["bar4"] = (2 * L, 0.0, 0.0)
    poses.update({c: ((k + 1) * L, 0.5 * L, np.pi / 2) for k, c in enumerate(("bar5", "bar6", "bar7"))})
    poses["bar8"] = (2 * L, L, 0.0)
    mb.add_configuration("singular", poses)
    return mb.build()


def crank_angle_exact_cells(t, *, cells: int, theta0: float = np.pi / 2, omega0: float = -1.0,
                            rtol: float = 1e-13):
    """theta(t) of the cranks of a 1-DOF parallelogram chain with ``cells`` cells (paper 000 Sects.
    3.2-3.4): theta'' = -k cos theta with k = 3 g (3N + 1) / (2 L (4N + 1)) (four_bars.crank_rate_constant;
    the merged coupler of the modified chains has the mass and motion of the separate ones)."""
    k = crank_rate_constant(cells)
    t = np.atleast_1d(np.asarray(t, float))
    sol = solve_ivp(lambda _, y: [y[1], -k * np.cos(y[0])], (0.0, float(t.max())), [theta0, omega0],
                    method="DOP853", rtol=rtol, atol=1e-14, dense_output=True)
    return sol.sol(t)[0]
