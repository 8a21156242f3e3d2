"""
Which joint reactions are unique? The elimination experiment (paper 003)
========================================================================

A mobile robot with a trolley (n = 21, m = 17 holonomic, h = 5 knife edges, rank 20, redundancy 2; our own geometry, the paper gives none) is redundantly constrained: the motion is unique, but only some
joint reactions are. Paper 003's experiment simulates the same motion while eliminating different
redundant rows: the unique reactions agree between the variants, the others do not. The
uniqueness test is the QR criterion :math:`B_X = C_X^\\mathsf{T} Q_X^{col} = 0` (paper 003 eq. 27,
:func:`multibody.analysis.solvability.solvability_at`).
"""
import matplotlib.pyplot as plt
import numpy as np

from multibody.experiments.reactions import run_experiment
from multibody.models import MODELS

model = MODELS["mobile-robot"].factory()
experiment = run_experiment(model, t_end=0.1, step=5e-3)
print("variants (eliminated rows):", experiment.variants)
print("largest motion difference between variants / length scale:", f"{experiment.motion_spread:.1e}")
for pair, spread in experiment.spread.items():
    print(f"{pair:12s} relative spread of its reaction over the variants: {spread:.1e}")

fig, ax = plt.subplots(figsize=(6, 3.2))
pairs = list(experiment.spread)
ax.bar(pairs, [max(s, 1e-17) for s in experiment.spread.values()])
ax.set_yscale("log")
ax.tick_params(axis="x", rotation=60)
ax.set_ylabel("relative spread of the reaction")
ax.set_title("unique reactions: round-off; non-unique: O(1)")
fig.tight_layout()
