"""
Slider-crank: a first model in Python
=====================================

A crank driven at a constant rate pushes a slider through a rod. The model is built with
:class:`multibody.ModelBuilder`, simulated with :func:`multibody.simulate`, and the slider position
is compared with the closed form of the slider-crank kinematics
:math:`x = r\\cos\\theta + \\sqrt{l^2 - r^2\\sin^2\\theta}`.
"""
import matplotlib.pyplot as plt
import numpy as np

from multibody import ModelBuilder, Motion, RunOptions, simulate

mb = ModelBuilder("slider-crank", gravity=(0.0, -9.81))
mb.add_bar("crank", length=0.2, mass=1.0, position=(0.05, 0.0866), angle=np.pi / 3)
mb.add_bar("rod", length=0.6, mass=2.0, position=(0.34, 0.0866), angle=-0.29)
mb.add_body("slider", mass=0.5, inertia=1e-3, position=(0.68, 0.0))
mb.revolute("O", "ground", "crank", on_a=(0.0, 0.0), on_b=(-0.1, 0.0))
mb.revolute("A", "crank", "rod", on_a=(0.1, 0.0), on_b=(-0.3, 0.0))
mb.revolute("B", "rod", "slider", on_a=(0.3, 0.0), on_b=(0.0, 0.0))
mb.prismatic("P", "ground", "slider", axis=(1.0, 0.0), at=(0.68, 0.0))
mb.driver("O", Motion.constant_rate(np.pi / 3, 2 * np.pi))
model = mb.build()

result = simulate(model, t_end=1.0, options=RunOptions(rtol=1e-8, atol=1e-10, output_step=0.01))
print(result)

# %%
# The slider position against the closed form (crank r = 0.2 m, rod l = 0.6 m).
t = result.t
theta = np.pi / 3 + 2 * np.pi * t
r, l = 0.2, 0.6
x_exact = r * np.cos(theta) + np.sqrt(l**2 - (r * np.sin(theta)) ** 2)
x = result.column("q", "slider.x")
print("max |x - closed form| =", np.max(np.abs(x - x_exact)), "m")

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(t, x, label="simulated")
ax.plot(t, x_exact, "--", label="closed form")
ax.set_xlabel("time [s]")
ax.set_ylabel("slider x [m]")
ax.legend()
fig.tight_layout()
