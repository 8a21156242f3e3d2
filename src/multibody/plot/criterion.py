"""Figure of the projective criterion (paper 001 Fig. 3 style): cos^2 alpha_i of every coordinate
over a swept coordinate, the best choice marked; geometry-only values dashed for comparison. No
physics is computed here."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import _pyplot, _save


def _angle_ticks(ax, values):
    """Ticks at multiples of pi/2 when the sweep spans at least pi/2."""
    lo, hi = float(np.min(values)), float(np.max(values))
    if hi - lo < np.pi / 2:
        return
    ks = np.arange(np.ceil(lo / (np.pi / 2)), np.floor(hi / (np.pi / 2)) + 1).astype(int)
    names = {0: "0", 1: "π/2", 2: "π", -1: "-π/2", -2: "-π"}
    ax.set_xticks(ks * np.pi / 2)
    ax.set_xticklabels([names.get(k, f"{k}π/2" if k % 2 else f"{k // 2}π") for k in ks])


def criterion_figure(table, directory) -> Path:
    """PNG of a CriterionTable into ``directory``; a bar chart for a single configuration."""
    plt = _pyplot()
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    names = table.model.coordinate_names
    colors = plt.cm.tab10(np.arange(len(names)) % 10)
    if table.values is None:
        fig, ax = plt.subplots(figsize=(max(5, 0.8 * len(names) + 2), 4))
        x = np.arange(len(names))
        ax.bar(x - 0.2, table.cos2_alpha[0], 0.4, label="cos² α (tangent, mass metric)")
        ax.bar(x + 0.2, table.cos2_beta[0], 0.4, label="cos² β (constrained)")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=45 if len(names) > 6 else 0)
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize=8)
        ax.set_title(f"{table.model.name}: projective criterion (paper 001 eq. 23)\n"
                     f"independent: {', '.join(table.independent[0]) or '-'}", fontsize=10)
        return _save(fig, d / f"{table.model.name}-criterion.png")
    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    xs = table.values
    for i, nm in enumerate(names):
        ax.plot(xs, table.cos2_alpha[:, i], color=colors[i], lw=2, label=f"cos² α  {nm}")
        ax.plot(xs, table.cos2_alpha_geometric[:, i], color=colors[i], lw=1, ls="--",
                label=f"{nm}, geometry only (M = I)")
    chosen = np.array([[nm in s for nm in names] for s in table.independent])
    for i in range(len(names)):
        ax.fill_between(xs, 1.02, 1.06, where=chosen[:, i], color=colors[i], step="mid", lw=0)
    ax.text(xs[0], 1.075, "best (projective criterion)", fontsize=7, va="bottom")
    ax.set_ylim(0, 1.12)
    ax.set_xlim(xs[0], xs[-1])
    _angle_ticks(ax, xs)
    ax.set_xlabel(table.coordinate)
    ax.set_ylabel("cos² α_i  (tangent projection of k_i)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(f"{table.model.name}: projective criterion (paper 001 eq. 23 a, Fig. 3)")
    return _save(fig, d / f"{table.model.name}-criterion-{table.coordinate}.png")
