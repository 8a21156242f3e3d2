"""Physical reactions f of a run (paper 001 eq. 32, C^T lambda = B^T f) over time."""
from __future__ import annotations

from pathlib import Path

from ..results.result import Result
from .common import _pyplot, _save


def physical_reactions_figure(result: Result, path: Path, unit: str = "N") -> Path:
    """One line per component of f (series ``physical_reactions``), events marked."""
    plt = _pyplot()
    s = result.series["physical_reactions"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, lab in enumerate(s.labels):
        ax.plot(result.t, s.data[:, i], lw=1.2, label=lab)
    for e in result.events:
        ax.axvline(e["t"], color="0.6", lw=0.8, ls=":")
    ax.set_xlabel("t [s]")
    ax.set_ylabel(f"reaction [{unit}]")
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(f"{result.summary.get('model', '')}: physical reactions (paper 001 eq. 32, "
                 f"{result.summary.get('formulation', '')})")
    return _save(fig, path)
