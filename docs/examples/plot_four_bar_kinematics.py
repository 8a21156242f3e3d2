"""
Kinematic analysis of a four-bar: positions and velocities along a crank turn
=============================================================================

A Grashof crank-rocker (ground 4, crank 1, coupler 4, rocker 3) is assembled at 73 crank angles
with :func:`multibody.solve_positions` (Newton on :math:`\\Phi(q) = 0` with the crank angle held),
and its velocities follow from :func:`multibody.solve_velocities` (:math:`A v = 0` with the crank
rate given). Check: the rocker angle against the closed-form position analysis (two circles).
"""
import matplotlib.pyplot as plt
import numpy as np

import multibody as mb

a, b, c, d = 1.0, 4.0, 3.0, 4.0        # crank, coupler, rocker, ground
mbld = mb.ModelBuilder("crank-rocker", gravity=(0.0, 0.0))
theta = np.pi / 2
A0 = np.array([0.0, 0.0])
A1 = A0 + a * np.array([np.cos(theta), np.sin(theta)])
# a rough guess of the rest; Newton assembles it
mbld.add_bar("crank", length=a, mass=1.0, position=tuple((A0 + A1) / 2), angle=theta)
mbld.add_bar("coupler", length=b, mass=1.0, position=(2.3, 2.3), angle=0.2)
mbld.add_bar("rocker", length=c, mass=1.0, position=(4.3, 1.4), angle=1.7)
mbld.revolute("O", "ground", "crank", on_a=(0.0, 0.0), on_b=(-a / 2, 0.0))
mbld.revolute("A", "crank", "coupler", on_a=(a / 2, 0.0), on_b=(-b / 2, 0.0))
mbld.revolute("B", "coupler", "rocker", on_a=(b / 2, 0.0), on_b=(c / 2, 0.0))
mbld.revolute("D", "rocker", "ground", on_a=(-c / 2, 0.0), on_b=(d, 0.0))
mbld.hold("crank.theta")
model = mbld.build()
names = model.coordinate_names
i_crank, i_rocker = names.index("crank.theta"), names.index("rocker.theta")

q, _ = mb.consistent_state(model)
angles = theta + np.linspace(0.0, 2 * np.pi, 73)
rocker, rocker_rate = [], []
for angle in angles:
    q = q.copy()
    q[i_crank] = angle
    q = mb.solve_positions(model, q, hold=(i_crank,))
    v = np.zeros(model.n)
    v[i_crank] = 1.0                                   # crank rate 1 rad/s
    v = mb.solve_velocities(model, q, v, given=(i_crank,))
    rocker.append(q[i_rocker])
    rocker_rate.append(v[i_rocker])
rocker, rocker_rate = np.unwrap(rocker), np.array(rocker_rate)

# %%
# Closed form: the rocker's joint B with the coupler is an intersection of the circle of radius b
# about the crank tip A and the circle of radius c about the ground pivot D; the rocker's body x
# axis points from D to B (its joint D is at x = -c/2 on the body).
A = a * np.column_stack([np.cos(angles), np.sin(angles)])
D = np.array([d, 0.0])
AD = D - A
dist = np.linalg.norm(AD, axis=1)
along = (b**2 - c**2 + dist**2) / (2 * dist)
height = np.sqrt(b**2 - along**2)
unit = AD / dist[:, None]
normal = np.column_stack([-unit[:, 1], unit[:, 0]])
branches = [A + along[:, None] * unit + sgn * height[:, None] * normal for sgn in (1.0, -1.0)]
exact = [np.arctan2(B[:, 1] - D[1], B[:, 0] - D[0]) for B in branches]
error = min(np.max(np.abs(np.angle(np.exp(1j * (rocker - e))))) for e in exact)
print(f"largest difference to the closed-form rocker angle over the turn: {error:.1e} rad")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
ax1.plot(angles, rocker)
ax1.set_xlabel("crank angle [rad]")
ax1.set_ylabel("rocker angle [rad]")
ax2.plot(angles, rocker_rate)
ax2.set_xlabel("crank angle [rad]")
ax2.set_ylabel("rocker rate per crank rate")
fig.tight_layout()
