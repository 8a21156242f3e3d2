"""The run report: one self-contained HTML page that opens offline (plotly's JavaScript inlined once, the
animation's frames embedded): the run summary, interactive figures (:mod:`.figures`), the events table
(singular crossings with rank and admissible motions, locks with the energy before and after) and the
animation (:mod:`.animation`)."""
from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from .figures import all_figures, not_unique
from .timeline import crossings
from .source import write_atomically

_CSS = """body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f4}.note{color:#666;font-size:.85em}
.bad{color:#b00}.figure{margin:1em 0}"""


def _cell(value) -> str:
    """A summary value as short text (long lists are summarised, floats to 6 significant digits)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"{len(value)} entries"
    if isinstance(value, (dict, list, tuple)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 200 else text[:200] + " ..."
    return str(value)


def _table(header, rows) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def summary_section(result) -> str:
    skip = {"singular_crossings", "singular_events", "events", "final_q", "final_v", "coordinate_names", "figures"}
    rows = [(html.escape(k), html.escape(_cell(v))) for k, v in result.summary.items() if k not in skip]
    rows.append(("stored states", f"{len(result.t)} from t = {result.t[0]:.6g} s to {result.t[-1]:.6g} s"))
    return "<h2>Summary</h2>" + _table(("quantity", "value"), rows)


def _motion_text(e) -> str:
    """The admissible motions of a singular event (nullspace formulation, paper 000): continuing and new ones."""
    if "admissible" not in e:
        return "(listed by a run with --formulation nullspace)"
    names = e.get("coordinate_names", [])

    def fmt(vectors):
        cols = np.atleast_2d(np.asarray(vectors, float))
        return "; ".join(", ".join(f"{names[i] if i < len(names) else i} {c[i]:+.3f}"
                                   for i in np.argsort(-np.abs(c))[:4] if abs(c[i]) > 1e-6) for c in cols.T)
    return (f"continuing: {html.escape(fmt(e.get('continuing', [])))}<br>"
            f"new: {html.escape(fmt(e.get('new', [])))}")


#: singular events whose admissible motions are drawn (the first ones; each motion one small figure)
DRAWN_EVENTS = 3


def _motion_figures(result, model) -> str:
    """The continuing and the new admissible motions of the first singular events of a nullspace run (paper 000
    Figs 3, 6, 9) drawn on the mechanism at the event's configuration."""
    from .motions import motion_svg

    out = []
    events = [e for e in result.events if e.get("kind") == "singular" and "q" in e and "continuing" in e]
    for e in events[:DRAWN_EVENTS]:
        q = np.asarray(e["q"], float)
        for kind in ("continuing", "new"):
            for j, u in enumerate(np.atleast_2d(np.asarray(e[kind], float)).T):
                out.append(motion_svg(model, q, u, f"t = {float(e['t']):.4g} s: {kind} motion {j + 1}"))
    return (f"<h3>Admissible motions at the first singular configurations</h3><div>{''.join(out)}</div>"
            if out else "")


def events_section(result, model=None) -> str:
    rows = [(f"{float(c['t']):.6g}", c.get("rank", ""), c.get("generic_rank", ""), c.get("rank_drop", ""),
             _motion_text(c)) for c in crossings(result)]
    out = "<h2>Events</h2><h3>Singular crossings</h3>"
    out += _table(("t [s]", "rank", "generic rank", "rank drop", "admissible motions"), rows) if rows else \
        "<p class='note'>none located (summary: singular_crossings).</p>"
    if model is not None:
        try:
            out += _motion_figures(result, model)
        except MultibodyError:            # a model without geometry: the table only
            pass
    topo = [e for e in result.events if e.get("kind") != "singular" and "t" in e]
    rows = []
    for e in topo:
        before, after = e.get("energy_before"), e.get("energy_after")
        jump = f"{after - before:.6g}" if before is not None and after is not None else ""
        rows.append((f"{float(e['t']):.6g}", html.escape(str(e.get("name", ""))),
                     html.escape(", ".join(e.get("activated", []) or [])),
                     html.escape(", ".join(e.get("released", []) or [])), _cell(before), _cell(after), jump,
                     _cell(e.get("momentum_continuity_error", ""))))
    out += "<h3>Locks, releases, impulses</h3>"
    out += _table(("t [s]", "event", "activated", "released", "energy before [J]", "energy after [J]",
                   "change [J]", "momentum continuity error"), rows) if rows else "<p class='note'>none.</p>"
    return out


def uniqueness_section(result) -> str:
    parts = []
    for name in ("multipliers", "reactions"):
        if f"{name}_unique" not in result.series:
            continue
        labels = result.series[name].labels
        bad = sorted(not_unique(result, name))
        text = (f"<span class='bad'>{', '.join(html.escape(labels[j]) for j in bad)}</span>" if bad
                else "none (all unique at every stored state)")
        parts.append(f"<p><b>{name}</b> not unique (paper 003, eqs 17-20, 27): {text}</p>")
    return "".join(parts)


def report_html(result, animation_html: str | None, note: str = "", model=None) -> str:
    """The whole page as a string (plotly's JavaScript inlined: no network needed to open it)."""
    from plotly.offline import get_plotlyjs

    figs = all_figures(result)
    view = _view(result, model)
    body = "".join(f"<div class='figure plot' id='plot-{i}' style='min-height:{f.layout.height}px'></div>"
                   f"<script type='application/json' id='spec-plot-{i}'>{_safe_json(f.to_json())}</script>"
                   for i, f in enumerate(figs))
    title = html.escape(str(result.summary.get("model", "run")))
    anim = animation_html or f"<p class='note'>no animation: {html.escape(note)}</p>"
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{title}: multibody report</title>"
            f"<style>{_CSS}</style><script type='text/plain' id='mb-plotly'>{get_plotlyjs()}</script></head><body>"
            f"<h1>{title}: multibody run report</h1>{summary_section(result)}{events_section(result, model)}"
            f"<h2>Animation</h2><div id='animation'>{anim}</div>{view}"
            f"<h2>Series</h2><p class='note'>Long runs are decimated for display (min/max envelope of "
            f"{len(result.t)} stored states); red dashed lines: singular crossings, black: locks/events.</p>"
            f"{uniqueness_section(result)}{body}<script>{_LAZY}</script></body></html>\n")


#: each figure is drawn by Plotly.newPlot when it comes near the window (IntersectionObserver), and plotly's
#: JavaScript (inlined as text) is compiled before the first one: the page opens at once even with a thousand
#: curves, and the figures below the summary, events and animation are drawn as they are scrolled to
_LAZY = """(function () {
  const config = {responsive: true, displaylogo: false};
  function ensurePlotly() {
    if (window.Plotly) return;
    const s = document.createElement("script");
    s.textContent = document.getElementById("mb-plotly").textContent;
    document.head.appendChild(s);
  }
  function draw(div) {
    if (div.dataset.drawn) return;
    div.dataset.drawn = "1";
    ensurePlotly();
    const spec = JSON.parse(document.getElementById("spec-" + div.id).textContent);
    Plotly.newPlot(div, {data: spec.data, layout: spec.layout, frames: spec.frames || [], config: config});
  }
  const plots = document.querySelectorAll("div.plot");
  if (!("IntersectionObserver" in window)) { plots.forEach(draw); return; }
  const seen = new IntersectionObserver(function (entries) {
    entries.forEach(function (e) { if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); } });
  }, {rootMargin: "300px"});
  plots.forEach(function (d) { seen.observe(d); });
})();"""


def _view(result, model) -> str:
    """The interactive 3-D view of a spatial model (:mod:`.view3d`), drawn lazily like the figures."""
    from .view3d import spatial_view

    fig = spatial_view(result, model) if model is not None else None
    if fig is None:
        return ""
    return (f"<div class='figure plot plot3d' id='plot-view3d' style='min-height:{fig.layout.height}px'></div>"
            f"<script type='application/json' id='spec-plot-view3d'>{_safe_json(fig.to_json())}</script>")


def _safe_json(text: str) -> str:
    """JSON inside a <script> element: '</' cannot end the element early."""
    return text.replace("</", "<\\/")


def write_report(result, model, path, max_frames: int = 150) -> Path:
    """Write the report of ``result`` to ``path`` atomically; without a model the page has no animation."""
    page = report_html_for(result, model, max_frames)
    return write_atomically(Path(path), lambda tmp: tmp.write_text(page, encoding="utf-8"))


def report_html_for(result, model, max_frames: int = 150) -> str:
    """The report page of ``result`` (with the animation when the model is known)."""
    from .animation import Animation
    from .figures import plotly

    plotly()
    anim, note = None, "the result's model is not known (give --model SPEC)"
    if model is not None:
        try:
            anim = Animation(result, model, max_frames).html()
        except MultibodyError as exc:         # a model without geometry: the page says so
            note = str(exc)
    return report_html(result, anim, note, model)
