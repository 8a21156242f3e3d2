"""
Rank table of paper 000
=======================

Paper 000 gives, for its modified four-bar mechanisms, the number of coordinates ``n``, of
constraints ``m`` and the rank of the constraint Jacobian at a regular and at a singular
configuration: double four-bar n = m = 12, rank 11 (10 at the singularity); triple four-bar n = 15,
m = 16, rank 14 (13); 2x2 four-bar n = m = 24, rank 22 (21). The rank decisions here come from the
pivoted QR of :math:`A^\\mathsf{T}` (:func:`multibody.pivoted_qr`,
:func:`multibody.analysis.mobility.analyze`).
"""
import matplotlib.pyplot as plt
import numpy as np

from multibody.analysis.mobility import analyze
from multibody.models import MODELS

paper = {"double-four-bar-modified": (12, 12, 11, 10), "triple-four-bar-modified": (15, 16, 14, 13),
         "four-bar-2x2-modified": (24, 24, 22, 21)}
rows = []
for name, expected in paper.items():
    model = MODELS[name].factory()
    regular = analyze(model)
    singular = analyze(model, "singular")
    rows.append((name, regular.n, regular.m, regular.rank, singular.rank, regular.dof, singular.dof))
    print(f"{name:26s} n={regular.n:2d} m={regular.m:2d} rank={regular.rank:2d} "
          f"(singular {singular.rank:2d}); paper: n={expected[0]} m={expected[1]} "
          f"rank={expected[2]} ({expected[3]})")
    assert (regular.n, regular.m, regular.rank, singular.rank) == expected

# %%
# The diagonal of R of the pivoted QR at both configurations: the gap that decides the rank.
fig, axes = plt.subplots(1, len(paper), figsize=(10, 3.2), sharey=True)
for ax, name in zip(axes, paper):
    model = MODELS[name].factory()
    for configuration, style in ((None, "o-"), ("singular", "s--")):
        mob = analyze(model, configuration)
        ax.semilogy(np.abs(mob.R_diag) + 1e-18, style, label=configuration or "regular")
    ax.set_title(name, fontsize=9)
    ax.set_xlabel("pivot index")
axes[0].set_ylabel("|R_ii|")
axes[0].legend()
fig.tight_layout()
