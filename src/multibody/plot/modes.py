"""Mode shapes drawn on the mechanism (issue 21 item 5; analysis.equilibrium.modes)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import _pyplot, _save
from .standard import draw_mechanism, finish_mechanism_axes

#: the drawn displacement: the largest entry of the shape moves by this fraction of the length scale (or rad)
MODE_AMPLITUDE = 0.3
#: at most this many modes are drawn (the lowest)
MAX_MODES = 6


def mode_figures(model, eq, md, directory) -> list[Path]:
    """One PNG per mode: the mechanism at the equilibrium q* (grey) and at q* +- a u_k (the linear mode, not
    projected; a such that max |u_k| a = MODE_AMPLITUDE L). Planar models with bodies only."""
    if not model.bodies:           # matrix systems and spatial models have no planar outlines to draw
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    plt, out = _pyplot(), []
    for k in range(min(md.shapes.shape[1], MAX_MODES)):
        u = md.shapes[:, k]
        a = MODE_AMPLITUDE * model.length_scale / max(np.max(np.abs(u)), np.finfo(float).tiny)
        fig, ax = plt.subplots(figsize=(7, 5))
        draw_mechanism(ax, model, eq.q, color="0.6", label="equilibrium")
        draw_mechanism(ax, model, eq.q + a * u, color="C0", label="+ mode")
        draw_mechanism(ax, model, eq.q - a * u, color="C3", ls="--", label="- mode")
        f = md.frequencies_hz[k]
        freq = "unstable (w^2 < 0)" if np.isnan(f) else f"{f:.4g} Hz, damping ratio {md.damping_ratios[k]:.2g}"
        finish_mechanism_axes(ax, model, f"{model.name}: mode {k + 1}, {freq}")
        out.append(_save(fig, directory / f"{model.name}-mode{k + 1}.png"))
    return out
