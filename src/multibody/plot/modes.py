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


def mode_result(model, eq, md, k: int, cycles: float = 2.0, samples: int = 80):
    """A Result that moves along mode k (0-based) for ``cycles`` periods, for the animation (report.animation):
    q(t) = proj(q* + a sin(w t) u_k) on Phi = 0 (kinematics.solve_positions; a as in :func:`mode_figures`), so
    that the joints stay closed at the drawn amplitude; one second per period for an unstable or neutral mode."""
    from ..kinematics import solve_positions
    from ..results.result import Result, Series

    u = md.shapes[:, k]
    f = md.frequencies_hz[k]
    period = 1.0 / f if np.isfinite(f) and f > 0 else 1.0
    a = MODE_AMPLITUDE * model.length_scale / max(np.max(np.abs(u)), np.finfo(float).tiny)
    t = np.linspace(0.0, cycles * period, samples)
    q = np.array([solve_positions(model, eq.q + a * np.sin(2 * np.pi * s / period) * u, eq.t) for s in t])
    v = np.gradient(q, t, axis=0)
    names = model.coordinate_names
    freq = f"{f:.4g} Hz" if np.isfinite(f) else "unstable: w^2 < 0"
    return Result(t, {"q": Series(q, names), "v": Series(v, names)},
                  {"model": model.name, "formulation": f"mode {k + 1}", "integrator": freq, "mode": k + 1,
                   "frequency_hz": float(f), "t_end": float(t[-1])})
