"""
Modes of a sprung four-bar
==========================

A four-bar linkage (one degree of freedom) held by a spring between the coupler and the ground,
without gravity. :func:`multibody.equilibrium` finds the static equilibrium (the spring at its free
length), :func:`multibody.modes` the natural frequency from :math:`K x = \\omega^2 M x` on the
constraint manifold. Check: a one-freedom system has one mode, and the frequency scales as
:math:`\\sqrt{k}` - quadrupling the stiffness doubles it.
"""
import matplotlib.pyplot as plt
import numpy as np

import multibody as mb


def sprung_four_bar(stiffness):
    b = mb.ModelBuilder("sprung-four-bar", gravity=(0.0, 0.0))
    b.add_bar("crank", length=1.0, mass=1.0, position=(0.0, 0.5), angle=np.pi / 2)
    b.add_bar("coupler", length=2.0, mass=2.0, position=(1.0, 1.0), angle=0.0)
    b.add_bar("rocker", length=1.0, mass=1.0, position=(2.0, 0.5), angle=np.pi / 2)
    b.revolute("A", "ground", "crank", on_a=(0.0, 0.0), on_b=(-0.5, 0.0))
    b.revolute("B", "crank", "coupler", on_a=(0.5, 0.0), on_b=(-1.0, 0.0))
    b.revolute("C", "coupler", "rocker", on_a=(1.0, 0.0), on_b=(0.5, 0.0))
    b.revolute("D", "rocker", "ground", on_a=(-0.5, 0.0), on_b=(2.0, 0.0))
    b.spring_damper("spring", "ground", "coupler", stiffness=stiffness, free_length=1.5,
                    on_a=(-1.0, 1.0), on_b=(0.0, 0.0))
    return b.build()


results = {}
for k in (100.0, 400.0):
    model = sprung_four_bar(k)
    eq = mb.equilibrium(model)
    m = mb.modes(model, eq)
    results[k] = m
    print(f"k = {k:5.0f} N/m: equilibrium {eq.stability}, residual {eq.residual:.1e}; "
          f"frequencies {np.round(m.frequencies_hz, 4)} Hz")
ratio = results[400.0].frequencies_hz[0] / results[100.0].frequencies_hz[0]
print(f"frequency ratio for 4x stiffness: {ratio:.6f} (expected 2)")

# %%
# The mode shape in the redundant coordinates (largest entry 1).
shape = results[100.0].shapes[:, 0]
fig, ax = plt.subplots(figsize=(7, 3.2))
ax.bar(results[100.0].coordinate_names, shape)
ax.tick_params(axis="x", rotation=60, labelsize=7)
ax.set_ylabel("mode shape")
ax.set_title(f"mode 1: {results[100.0].frequencies_hz[0]:.3f} Hz")
fig.tight_layout()
