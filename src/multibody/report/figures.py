"""Interactive figures of a Result for the HTML report (plotly; optional extra ``report``). Long series are
decimated for display by a min/max envelope (every bucket of stored states keeps its smallest and largest
value, so spikes and the whole time span stay visible; nothing is truncated); values are sent as float32."""
from __future__ import annotations

import numpy as np

from ..errors import MultibodyError
from ..results.hdf5 import coordinate_units
from .timeline import markers

#: stored states per trace shown at most (twice the number of envelope buckets)
MAX_POINTS = 600
#: points per figure panel at most (a model with many coordinates gets fewer per trace, at least 60) and
#: traces above which a legend is left out (hovering names a curve): keeps a large model's page quick to open
PANEL_POINTS, LEGEND_MAX = 12_000, 40
#: series drawn by their own figure (the others get a generic one)
OWN = ("q", "v", "a", "energy", "work", "violation", "multipliers", "multipliers_unique", "reactions", "reactions_unique")
_UNIT_TITLES = {"m": "positions [m] / velocities [m/s]", "rad": "angles [rad] / rates [rad/s]",
                "1": "director components [-] / rates [1/s]", "": "coordinates / rates (model units)"}


def plotly():
    """plotly.graph_objects, or a clear error naming the extra to install."""
    try:
        import plotly.graph_objects as go
    except ImportError:
        raise MultibodyError("the HTML report needs plotly: pip install 'multibody[report]'.") from None
    return go


def envelope(y: np.ndarray, max_points: int = MAX_POINTS) -> list[np.ndarray]:
    """Per column of y (k, c): the indices of the states shown, the first and last and, in each of
    max_points / 2 buckets of consecutive states, those of the smallest and the largest value."""
    k, c = y.shape
    if k <= max_points:
        return [np.arange(k)] * c
    buckets = max_points // 2
    size = -(-k // buckets)
    pad = np.concatenate([y, np.repeat(y[-1:], buckets * size - k, axis=0)]).reshape(buckets, size, c)
    pad = np.where(np.isfinite(pad), pad, 0.0)
    base = (np.arange(buckets) * size)[:, None]
    lo, hi = base + pad.argmin(axis=1), base + pad.argmax(axis=1)
    return [np.unique(np.clip(np.concatenate([[0, k - 1], lo[:, j], hi[:, j]]), 0, k - 1)) for j in range(c)]


def _lines(fig, t, y, labels, row=None, dashed=(), **kw):
    go = plotly()
    if y.shape[1] > LEGEND_MAX:
        kw["showlegend"] = False
    from plotly.colors import qualitative

    colors = qualitative.Plotly          # by column: a coordinate has the same colour in the q and v panels
    for j, idx in enumerate(envelope(y, max(60, min(MAX_POINTS, PANEL_POINTS // max(y.shape[1], 1))))):
        name = labels[j] + (" (not unique)" if j in dashed else "")
        line = dict(dash="dash" if j in dashed else "solid", width=1.5, color=colors[j % len(colors)])
        fig.add_trace(go.Scatter(x=t[idx].astype(np.float32), y=y[idx, j].astype(np.float32), name=name,
                                 mode="lines", line=line, legendgroup=labels[j], **kw),
                      row=row, col=1 if row else None)


def _figure(title, rows=1, ytitles=("",), log=False, result=None):
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.update_layout(title=dict(text=title, font=dict(size=14)), template="plotly_white", height=260 + 190 * rows,
                      margin=dict(l=60, r=20, t=50, b=40), legend=dict(font=dict(size=10)))
    for r, yt in enumerate(ytitles, start=1):
        fig.update_yaxes(title_text=yt, type="log" if log else None, row=r, col=1)
    fig.update_xaxes(title_text="t [s]", row=rows, col=1)
    for m in markers(result) if result is not None else ():
        fig.add_vline(x=m.t, line=dict(color="#d62728" if m.kind == "singular" else "black", width=1,
                                       dash="dash" if m.kind == "singular" else "solid"),
                      row="all", col=1, exclude_empty_subplots=False)
    return fig


def coordinate_figures(result) -> list:
    """q and v over time, one figure per kind of coordinate (results.hdf5.coordinate_units)."""
    units = np.array(coordinate_units(result.coordinate_names))
    out = []
    for unit, title in _UNIT_TITLES.items():
        cols = np.flatnonzero(units == unit)
        if not len(cols):
            continue
        fig = _figure(f"coordinates: {title}", 2, ("q", "v"), result=result)
        labels = [result.coordinate_names[i] for i in cols]
        _lines(fig, result.t, result.q[:, cols], labels, row=1)
        _lines(fig, result.t, result.v[:, cols], labels, row=2, showlegend=False)
        out.append(fig)
    return out


def energy_balance(result) -> tuple[np.ndarray, str]:
    """E(t) - E(t_s) - W(t) with W the work of drivers and non-conservative forces since the start t_s of the
    segment (series ``work``, simulation.work; zero up to the integration error), or E(t) - E(0) for a run
    without that series (conservative: zero up to the error; jumps at events are the events')."""
    total = result["energy"][:, 2]
    if "work" not in result.series:
        return total - total[0], "E(t) - E(0)"
    t = result.t
    segment = np.concatenate([[0], np.cumsum(t[1:] == t[:-1])])      # an event stores two states at its time
    first = np.searchsorted(segment, segment)                         # the first state of each one's segment
    return total - total[first] - result["work"][:, 0], "E(t) - E(segment start) - W(t)"


def energy_figure(result):
    """Kinetic, potential and total energy (and the work W, if recorded), and the energy balance."""
    e = result["energy"]
    balance, label = energy_balance(result)
    fig = _figure("energy and energy balance", 2, ("energy [J]", f"{label} [J]"), result=result)
    _lines(fig, result.t, e, list(result.series["energy"].labels), row=1)
    if "work" in result.series:
        _lines(fig, result.t, result["work"], ["work W (drivers, non-conservative forces)"], row=1)
    _lines(fig, result.t, balance[:, None], [label], row=2)
    return fig


def violation_figure(result):
    """max |Phi| and max |A v + Phi_t| on a log axis (exact zeros drawn at 1e-17)."""
    y = np.maximum(result["violation"], 1e-17)
    fig = _figure("constraint violation (values below 1e-17 drawn at 1e-17)", 1,
                  ("max |residual|",), log=True, result=result)
    _lines(fig, result.t, y, list(result.series["violation"].labels))
    return fig


def not_unique(result, name: str) -> set[int]:
    """Columns of ``name`` (multipliers or reactions) that are not unique at some stored state (paper 003:
    the ``<name>_unique`` flags, 1 unique / 0 not)."""
    flags = result.series.get(f"{name}_unique")
    if flags is None:
        return set()
    return set(np.flatnonzero(np.any(flags.data < 0.5, axis=0)).tolist())


def reaction_columns(labels) -> list[int]:
    """The global components (Fx, Fy, Mz) on the second body of every joint: those on the first body are
    their opposites (forces) and the body-frame components repeat them."""
    first: dict[str, str] = {}
    out = []
    for j, lab in enumerate(labels):
        joint, _, rest = lab.partition(".on_")
        body, _, comp = rest.rpartition(".")
        first.setdefault(joint, body)
        if body != first[joint] and comp in ("Fx", "Fy", "Mz"):
            out.append(j)
    return out


def multiplier_figures(result) -> list:
    """Multipliers and joint reactions; the columns that are not unique (paper 003) dashed and named so."""
    out = []
    if "multipliers" in result.series and result["multipliers"].shape[1]:
        fig = _figure("Lagrange multipliers (dashed: not unique, paper 003)", 1, ("lambda",), result=result)
        _lines(fig, result.t, result["multipliers"], list(result.series["multipliers"].labels),
               dashed=not_unique(result, "multipliers"))
        out.append(fig)
    if "reactions" in result.series and result["reactions"].shape[1]:
        labels = result.series["reactions"].labels
        cols = reaction_columns(labels)
        bad = not_unique(result, "reactions")
        fig = _figure("joint reactions on each joint's second body (global; dashed: not unique)", 1,
                      ("force [N] / moment [N m]",), result=result)
        _lines(fig, result.t, result["reactions"][:, cols], [labels[j] for j in cols],
               dashed={i for i, j in enumerate(cols) if j in bad})
        out.append(fig)
    return out


def other_figures(result) -> list:
    """Every further series (momentum, rank, joint coordinates, physical reactions, ...), one figure each."""
    out = []
    for name, s in result.series.items():
        if name in OWN or s.data.ndim != 2 or not s.data.shape[1]:
            continue
        fig = _figure(f"{name}{f' [{s.unit}]' if s.unit else ''}", 1, (name,), result=result)
        _lines(fig, result.t, s.data.astype(float), list(s.labels))
        out.append(fig)
    return out


def all_figures(result) -> list:
    figs = coordinate_figures(result)
    if "energy" in result.series:
        figs.append(energy_figure(result))
    if "violation" in result.series:
        figs.append(violation_figure(result))
    return figs + multiplier_figures(result) + other_figures(result)
