"""The IFToMM double four-bar of paper 000 Sect. 3.2 and its exact one-degree-of-freedom reduction."""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ..model.builder import ModelBuilder

G = 9.81
L = 1.0
MASS = 1.0


def double_four_bar(*, omega0: float = -1.0):
    """IFToMM double four-bar (paper 000 Sect. 3.2; IFToMM benchmark library, "double four bar").

    Five uniform bars of 1 m and 1 kg (inertia m L^2/12): cranks bar1, bar3, bar5 hinged to ground at
    x = 0, 1, 2; couplers bar2 (bar1-bar3) and bar4 (bar3-bar5). n = 15, m = 14 (7 hinges), rank 14
    (1 DOF); rank 12 when all bars are horizontal (configuration ``singular``). Gravity 9.81 along -y.
    Initially the cranks are vertical and the couplers horizontal at y = 1; the left crank's tip moves
    at +1 m/s in x, i.e. every crank turns at ``omega0`` = -1 rad/s. Over 10 s the cranks make full
    turns and pass the singular (horizontal) configurations several times.
    """
    mb = ModelBuilder("double-four-bar", gravity=(0.0, -G), source="paper 000 Sect. 3.2; IFToMM benchmark")
    w = omega0
    for k in range(1, 6):
        x = (k - 1) / 2
        if k % 2:   # cranks 1, 3, 5: vertical, hinged to ground at x = 0, 1, 2
            mb.add_bar(f"bar{k}", length=L, mass=MASS, position=(x, L / 2), angle=np.pi / 2,
                       velocity=(-w * L / 2, 0.0), angular_velocity=w)
        else:       # couplers 2, 4: horizontal at y = L, translating at the crank tips' speed
            mb.add_bar(f"bar{k}", length=L, mass=MASS, position=(x, L), angle=0.0, velocity=(-w * L, 0.0))
    for name, body, x in (("O1", "bar1", 0.0), ("O3", "bar3", 1.0), ("O5", "bar5", 2.0)):
        mb.revolute(name, "ground", body, at=(x, 0.0))
    mb.revolute("A", "bar1", "bar2", at=(0.0, L))
    mb.revolute("B", "bar2", "bar3", at=(1.0, L))
    mb.revolute("C", "bar3", "bar4", at=(1.0, L))
    mb.revolute("D", "bar4", "bar5", at=(2.0, L))
    mb.set_velocity("bar1.theta", w)
    mb.add_configuration("singular", {f"bar{k}": (x, 0.0, 0.0) for k, x in
                                      ((1, 0.5), (2, 1.5), (3, 1.5), (4, 2.5), (5, 2.5))})
    return mb.build()


def n_four_bar(*, cells: int = 40, omega0: float = -1.0):
    """IFToMM N-four-bar (IFToMM benchmark library A02): ``cells`` four-bar cells in a row, the double four-bar
    of paper 000 Sect. 3.2 repeated. cells + 1 cranks bar1, bar3, ..., bar(2 cells + 1) hinged to ground at
    x = 0, 1, ..., cells and cells couplers bar2, bar4, ... between their tips; uniform bars of 1 m and 1 kg,
    gravity 9.81 along -y, cranks vertical and couplers horizontal at y = 1, every crank turning at
    ``omega0``. n = 3 (2 cells + 1), m = 2 (3 cells + 1) (hinges O<k> to ground, A<k>/B<k> of coupler k),
    rank m (1 DOF); all bars horizontal is singular (rank 2 (2 cells + 1) - ... lower, configuration
    ``singular``). The exact motion: theta'' = -k cos theta with k = crank_rate_constant(cells). cells = 40 is
    the benchmark's 81-bar mechanism; cells = 2 has the double four-bar's equations (other row labels)."""
    if not (isinstance(cells, (int, np.integer)) and cells >= 1):
        raise ValueError(f"cells must be a positive integer, got {cells!r}")
    mb = ModelBuilder(f"n-four-bar-{cells}", gravity=(0.0, -G), source="IFToMM benchmark A02 (N-four-bar)")
    w = omega0
    for i in range(cells + 1):            # cranks bar(2i+1), hinged to ground at x = i
        mb.add_bar(f"bar{2 * i + 1}", length=L, mass=MASS, position=(float(i), L / 2), angle=np.pi / 2,
                   velocity=(-w * L / 2, 0.0), angular_velocity=w)
        mb.revolute(f"O{2 * i + 1}", "ground", f"bar{2 * i + 1}", at=(float(i), 0.0))
    for i in range(1, cells + 1):         # couplers bar(2i) between the tips of bar(2i-1) and bar(2i+1)
        mb.add_bar(f"bar{2 * i}", length=L, mass=MASS, position=(i - 0.5, L), angle=0.0, velocity=(-w * L, 0.0))
        mb.revolute(f"A{2 * i}", f"bar{2 * i - 1}", f"bar{2 * i}", at=(i - 1.0, L))
        mb.revolute(f"B{2 * i}", f"bar{2 * i}", f"bar{2 * i + 1}", at=(float(i), L))
    mb.set_velocity("bar1.theta", w)
    flat = {f"bar{2 * i + 1}": (i + 0.5, 0.0, 0.0) for i in range(cells + 1)}
    flat.update({f"bar{2 * i}": (i + 0.5, 0.0, 0.0) for i in range(1, cells + 1)})
    mb.add_configuration("singular", flat)
    return mb.build()


def crank_rate_constant(n_cells: int = 2, length: float = L, g: float = G) -> float:
    """k of the exact reduction theta'' = -k cos(theta) of an N-cell parallelogram chain.

    With N + 1 cranks (uniform bars, inertia m L^2/3 about their pivots) and N translating couplers
    (speed L theta'): T = 1/2 m L^2 theta'^2 (4N + 1)/3 and V = m g L sin(theta) (3N + 1)/2, so
    Lagrange's equation gives k = 3 g (3N + 1) / (2 L (4N + 1)) (= 11.445 for N = 2).
    """
    N = n_cells
    return 3 * g * (3 * N + 1) / (2 * length * (4 * N + 1))


def crank_angle_exact(t, *, theta0: float = np.pi / 2, omega0: float = -1.0, rtol: float = 1e-13):
    """theta(t) of the double four-bar's cranks from the exact 1-DOF equation (high-accuracy ODE solve
    of the scalar equation, independent of the multibody code)."""
    k = crank_rate_constant()
    t = np.atleast_1d(np.asarray(t, float))
    sol = solve_ivp(lambda _, y: [y[1], -k * np.cos(y[0])], (0.0, float(t.max())), [theta0, omega0],
                    method="DOP853", rtol=rtol, atol=1e-14, dense_output=True)
    return sol.sol(t)[0]
