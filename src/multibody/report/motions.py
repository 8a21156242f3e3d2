"""Admissible motions drawn on the mechanism (paper 000 Sect. 2.5; the columns of T at a configuration):
the mechanism at q (grey) and at q +- a u (linear, not projected), as inline SVG."""
from __future__ import annotations

import io

import numpy as np

from .scenes import scene_for

#: the drawn displacement: the largest entry of a motion moves by this fraction of the length scale
MOTION_AMPLITUDE = 0.25


def _svg(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Creator": None, "Date": None, "Format": None,
                                                                 "Type": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def motion_svg(model, q: np.ndarray, u: np.ndarray, title: str) -> str:
    """The mechanism at q (grey) and at q +- a u (blue, red), a u moving at most MOTION_AMPLITUDE L."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a = MOTION_AMPLITUDE * model.length_scale / max(float(np.max(np.abs(u))), np.finfo(float).tiny)
    states = np.array([q, q + a * u, q - a * u])
    scene = scene_for(model, states)
    fig = plt.figure(figsize=(5.5, 4.2), dpi=80)
    ax = fig.add_subplot(projection="3d" if scene.three_d else None)
    for s, color, label in zip(states, ("0.6", "C0", "C3"), ("configuration", "+ motion", "- motion")):
        scene.draw(ax, s, color)
        ax.plot([], [], color=color, lw=2, label=label)
    scene.finish(ax, title)
    return _svg(fig)
