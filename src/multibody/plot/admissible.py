"""Admissible motions at the singular configurations of a nullspace run (paper 000 Figs 3, 6, 9):
per motion a bar chart of the perturbations dx, dy, dtheta of every body, the motion that continues
the run's branch first (the continued basis, N3), then the motions that exist only at the singular
configuration. Only plotting: every number comes from the Result's singular events."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..results.result import Result
from .common import _pyplot, _save

#: at most this many singular configurations are drawn (a long run passes many)
MAX_EVENTS = 3


def _groups(model, names):
    """[(label, [column or -1 for x, y, theta])] per body, or one group per coordinate."""
    bodies = [b for b in getattr(model, "bodies", ()) if any(c >= 0 for c in b.cols)]
    if bodies:
        return [(b.name, list(b.cols)) for b in bodies], ("dx", "dy", "dtheta")
    return [(n, [i]) for i, n in enumerate(names)], ("d",)


def admissible_figure(event: dict, model, path: Path, title: str) -> Path:
    plt = _pyplot()
    motions = [("continuing motion", np.asarray(c)) for c in np.asarray(event["continuing"]).T]
    motions += [(f"new motion {k + 1} (only at the singular configuration)", np.asarray(c))
                for k, c in enumerate(np.asarray(event["new"]).T)]
    groups, parts = _groups(model, event["coordinate_names"])
    fig, axes = plt.subplots(len(motions), 1, figsize=(max(6.0, 0.9 * len(groups) + 2), 2.4 * len(motions)),
                             squeeze=False, sharex=True)
    width = 0.8 / len(parts)
    x = np.arange(len(groups))
    for ax, (label, col) in zip(axes[:, 0], motions):
        if label != "continuing motion" and col[np.argmax(np.abs(col))] < 0:
            col = -col                  # a new motion's sign is arbitrary: largest entry drawn positive
        for j, part in enumerate(parts):
            vals = [col[c[j]] if c[j] >= 0 else 0.0 for _, c in groups]
            ax.bar(x + (j - (len(parts) - 1) / 2) * width, vals, width, label=part)
        ax.axhline(0.0, color="k", lw=0.6)
        ax.set_ylabel("component")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    axes[-1, 0].set_xticks(x, [g for g, _ in groups])
    fig.suptitle(title, fontsize=11)
    return _save(fig, path)


def admissible_figures(result: Result, model, directory) -> list[Path]:
    """One figure per singular configuration of the run (the first MAX_EVENTS)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = result.summary.get("model", "run")
    events = [e for e in result.events if e.get("kind") == "singular"][:MAX_EVENTS]
    return [admissible_figure(e, model, d / f"{name}-admissible-{k + 1}.png",
                              f"{name}: admissible motions at t = {e['t']:.6g} s\n(rank {e['rank']}, "
                              f"generic {e['generic_rank']}; paper 000 Figs 3, 6, 9)")
            for k, e in enumerate(events)]
