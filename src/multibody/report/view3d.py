"""An interactive 3-D view of a spatial run for the report (plotly Scatter3d with one frame per shown state,
a slider and play/pause; drag to rotate, scroll to zoom): the same polylines as the animation
(:meth:`.scenes.SpatialScene.lines`: director frames, outlines, links, joint axes, pivots)."""
from __future__ import annotations

import numpy as np

from .figures import plotly
from ..model.director import SpatialBodies
from .scenes import SpatialScene, scene_for
from .timeline import frame_indices, markers

#: states shown in the interactive view at most (each a plotly frame)
VIEW_FRAMES = 80
#: kind -> (name, colour, width, dash or marker) of the traces; the same order in every frame
_STYLES = {"d1": ("director d1", "#d62728", 5, "solid"), "d2": ("director d2", "#2ca02c", 5, "solid"),
           "d3": ("director d3", "#9467bd", 5, "solid"), "outline": ("outline", "#1f77b4", 3, "solid"),
           "link": ("link to a joint", "#7f7f7f", 2, "dash"), "axis": ("joint axis", "black", 7, "solid"),
           "centre": ("centre of mass", "#1f77b4", 5, "circle"), "pivot": ("pivot (ground)", "black", 6, "diamond")}


def _traces(scene: SpatialScene, q) -> list:
    """One Scatter3d per kind of polyline, the pieces separated by NaN (no line across a gap)."""
    go = plotly()
    out = []
    for kind, pieces in scene.lines(q).items():
        name, color, width, style = _STYLES[kind]
        pts = [np.vstack([p, np.full((1, 3), np.nan)]) for p in pieces if len(p)]
        xyz = np.vstack(pts).astype(np.float32) if pts else np.full((1, 3), np.nan, np.float32)
        points = kind in ("centre", "pivot")
        out.append(go.Scatter3d(x=xyz[:, 0], y=xyz[:, 1], z=xyz[:, 2], name=name, connectgaps=False,
                                mode="markers" if points else "lines",
                                marker=dict(color=color, size=width, symbol=style) if points else None,
                                line=None if points else dict(color=color, width=width, dash=style)))
    return out


def spatial_view(result, model):
    """The interactive figure, or None for a planar model."""
    go = plotly()
    if not any(isinstance(g, SpatialBodies) for g in model.constraints):
        return None
    idx = frame_indices(result.t, VIEW_FRAMES, [m.t for m in markers(result)])
    scene = scene_for(model, result.q[idx])
    t = result.t[idx]
    frames = [go.Frame(data=_traces(scene, result.q[k]), name=str(i)) for i, k in enumerate(idx)]
    fig = go.Figure(data=frames[0].data, frames=frames)
    rng = [[c - scene.half, c + scene.half] for c in scene.centre]
    play = dict(label="play", method="animate", args=[None, dict(frame=dict(duration=80, redraw=True),
                                                                 fromcurrent=True, transition=dict(duration=0))])
    pause = dict(label="pause", method="animate", args=[[None], dict(mode="immediate", frame=dict(duration=0))])
    steps = [dict(label=f"{ti:.3g}", method="animate",
                  args=[[str(i)], dict(mode="immediate", frame=dict(duration=0, redraw=True))])
             for i, ti in enumerate(t)]
    fig.update_layout(
        title="interactive 3-D view (drag to rotate, scroll to zoom)", height=620, template="plotly_white",
        scene=dict(aspectmode="cube", xaxis=dict(range=rng[0], title="x [m]"),
                   yaxis=dict(range=rng[1], title="y [m]"), zaxis=dict(range=rng[2], title="z [m]")),
        updatemenus=[dict(type="buttons", buttons=[play, pause], x=0.0, y=0.0, xanchor="left", yanchor="top")],
        sliders=[dict(steps=steps, currentvalue=dict(prefix="t [s] = "), x=0.15, len=0.85, y=0.0)],
        margin=dict(l=10, r=10, t=50, b=10))
    return fig
