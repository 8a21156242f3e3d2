"""
Projective criterion and switching of independent coordinates (paper 001)
=========================================================================

Paper 001's four-bar in relative coordinates: along a full turn of the crank angle ``alpha1`` the
mass-weighted criterion :math:`\\cos^2\\alpha_i` (eq. 23) of each coordinate says how well it serves
as the independent one; the best set switches where the curves cross (paper 001 Fig. 3). A
coordinate whose :math:`\\cos^2\\alpha_i` reaches 0 would be a singular choice. Computed by
:func:`multibody.analysis.partition.criterion_at` (``multibody criterion`` on the command line).
"""
import matplotlib.pyplot as plt
import numpy as np

from multibody.cli.criterion import criterion_table
from multibody.models import MODELS

model = MODELS["four-bar-relative"].factory()
table = criterion_table(model, ("alpha1", 0.0, 2 * np.pi, 121))
names = model.coordinate_names
best = [tuple(s) for s in table.independent]
switches = [i for i in range(1, len(best)) if best[i] != best[i - 1]]
print("coordinates:", names)
print("best independent set switches at alpha1 =", [round(float(table.values[i]), 3) for i in switches])

fig, ax = plt.subplots(figsize=(7, 3.6))
for i, name in enumerate(names):
    ax.plot(table.values, table.cos2_alpha[:, i], label=name)
for i in switches:
    ax.axvline(table.values[i], color="k", lw=0.5, ls=":")
ax.set_xlabel("alpha1 [rad]")
ax.set_ylabel("cos^2 alpha_i (mass metric)")
ax.legend(fontsize=8)
fig.tight_layout()
