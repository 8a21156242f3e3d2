"""
Static equilibrium of a slider-crank
====================================

A vertical slider-crank: the slider (mass 0.5 kg) rests on a spring of stiffness k. Under gravity
the equilibrium solves :math:`A^\\mathsf{T}\\lambda = f, \\ \\Phi(q) = 0`
(:func:`multibody.equilibrium`). Checks: the equilibrium does not depend on where the solver starts, and
it is the minimum of the potential energy along the mechanism's one free motion (virtual work).
"""
import matplotlib.pyplot as plt
import numpy as np

import multibody as mb


def vertical_slider_crank(theta0):
    b = mb.ModelBuilder("vertical-slider-crank", gravity=(0.0, -9.81))
    r, l = 0.2, 0.6
    ya = r * np.sin(theta0)
    xa = r * np.cos(theta0)
    ys = ya + np.sqrt(l**2 - xa**2)
    b.add_bar("crank", length=r, mass=1.0, position=(xa / 2, ya / 2), angle=theta0)
    phi = np.arctan2(ys - ya, -xa)
    b.add_bar("rod", length=l, mass=2.0, position=(xa / 2, (ya + ys) / 2), angle=phi)
    b.add_body("slider", mass=0.5, inertia=1e-3, position=(0.0, ys))
    b.revolute("O", "ground", "crank", on_a=(0.0, 0.0), on_b=(-r / 2, 0.0))
    b.revolute("A", "crank", "rod", on_a=(r / 2, 0.0), on_b=(-l / 2, 0.0))
    b.revolute("B", "rod", "slider", on_a=(l / 2, 0.0), on_b=(0.0, 0.0))
    b.prismatic("P", "ground", "slider", axis=(0.0, 1.0), at=(0.0, ys))
    b.spring_damper("spring", "ground", "slider", stiffness=2000.0, free_length=1.2,
                    on_a=(0.0, 2.0), on_b=(0.0, 0.0))
    return b.build()


starts = (0.6, 0.9, 1.2)
heights = []
for theta0 in starts:
    eq = mb.equilibrium(vertical_slider_crank(theta0))
    y = eq.q[eq.model.coordinate_names.index("slider.y")]
    heights.append(y)
    print(f"start crank angle {theta0:.1f} rad: slider.y = {y:.6f} m, {eq.stability}, "
          f"{eq.iterations} iterations, residual {eq.residual:.1e}")
print("largest difference between the starts:", f"{np.ptp(heights):.1e} m")

# %%
# Virtual work check: along the one free motion the potential energy
# :math:`V = g\,(m_c y_c + m_r y_r + m_s y_s) + \tfrac12 k (\ell - \ell_0)^2` is stationary
# (here a minimum) at the equilibrium. The configurations along the crank angle come from
# :func:`multibody.solve_positions` with ``crank.theta`` held.
model = vertical_slider_crank(0.9)
eq = mb.equilibrium(model)
names = model.coordinate_names
index = {name: i for i, name in enumerate(names)}


def potential(q):
    heights = 1.0 * q[index["crank.y"]] + 2.0 * q[index["rod.y"]] + 0.5 * q[index["slider.y"]]
    stretch = (2.0 - q[index["slider.y"]]) - 1.2
    return 9.81 * heights + 0.5 * 2000.0 * stretch**2


theta_eq = eq.q[index["crank.theta"]]
angles = theta_eq + np.linspace(-0.3, 0.3, 61)
V = []
q = eq.q.copy()
for angle in angles:
    q[index["crank.theta"]] = angle
    q = mb.solve_positions(model, q, hold=(index["crank.theta"],))
    V.append(potential(q))
V = np.array(V)
print(f"equilibrium crank angle {theta_eq:.6f} rad; minimum of V on the grid at {angles[np.argmin(V)]:.6f} rad "
      f"(grid step {angles[1] - angles[0]:.3f})")

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(angles, V - V.min())
ax.axvline(theta_eq, color="k", lw=0.6, ls="--", label="multibody.equilibrium")
ax.set_xlabel("crank angle [rad]")
ax.set_ylabel("V - min V [J]")
ax.legend()
fig.tight_layout()
