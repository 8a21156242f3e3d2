"""``analyze --html`` and ``criterion --html``: the findings of a configuration analysis on one self-contained
page (no network, figures as inline SVG or embedded PNG). Mobility (paper 000 Sect. 2.5): n, m, h, rank,
DOF, redundancy, the pivoted R diagonal, the redundant rows, the uniqueness of every pair's reaction
(paper 003 eq. 27) and each admissible motion drawn on the mechanism (q and q +- a T_k, linear, not
projected). Projective criterion (paper 001 eq. 23): cos^2 alpha, cos^2 beta per coordinate, the chosen set."""
from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from .motions import motion_svg
from .page import _CSS, _table
from .source import write_atomically

#: at most this many admissible motions are drawn
MAX_MOTIONS = 6


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n")


def analysis_html(model, mob, reactions: list, q: np.ndarray) -> str:
    """The page of ``multibody analyze --html`` (mob: analysis.mobility.Mobility at q)."""
    rows = [(k, html.escape(str(v))) for k, v in (
        ("configuration", mob.configuration), ("n (coordinates)", mob.n), ("m (constraint rows)", mob.m),
        ("h (nonholonomic rows)", mob.h), ("rank", mob.rank), ("degrees of freedom", mob.dof),
        ("redundancy", mob.redundancy), ("singular", f"{'yes' if mob.singular else 'no'} (rank nearby "
                                                     f"{mob.nearby_rank})"),
        ("rank tolerance", f"|R_ii| > {mob.rank_rtol:.2g} |R_11|"),
        ("redundant rows", ", ".join(mob.redundant_rows) or "none"),
        ("pivoted R diagonal", " ".join(f"{d:.3g}" for d in mob.R_diag)))]
    body = "<h2>Mobility (paper 000 Sect. 2.5)</h2>" + _table(("quantity", "value"), rows)
    pairs = [(html.escape(e["name"]), "yes" if e["unique"] else "<span class='bad'>NO</span>",
              "unique" if e["multipliers_unique"] else "not unique", html.escape(", ".join(e["rows"])))
             for e in reactions]
    body += "<h2>Reactions (paper 003 eq. 27)</h2>" + (
        _table(("pair", "reaction unique", "multipliers", "rows"), pairs) if pairs else "<p>no constraint rows</p>")
    T = mob.admissible_motions
    body += f"<h2>Admissible motions ({T.shape[1]}, orthonormal columns of T)</h2>"
    if T.shape[1]:
        body += _table(["coordinate"] + [f"T{k + 1}" for k in range(T.shape[1])],
                       [[html.escape(nm)] + [f"{x:+.4f}" for x in np.where(np.abs(r) < 5e-16, 0, r)]
                        for nm, r in zip(mob.coordinate_names, T)])
        try:
            body += "".join(motion_svg(model, q, T[:, k], f"{model.name}: admissible motion T{k + 1}")
                            for k in range(min(T.shape[1], MAX_MOTIONS)))
        except MultibodyError as exc:          # a model without geometry: the table only
            body += f"<p class='note'>not drawn: {html.escape(str(exc))}</p>"
    return _page(f"{model.name}: analysis", body)


def criterion_html(table, png: bytes | None) -> str:
    """The page of ``multibody criterion --html`` (table: cli.criterion.CriterionTable; png its figure)."""
    data = table.to_json()
    names = [c["name"] for c in data["coordinates"]]
    if table.values is None:
        rows = [(html.escape(c["name"]), f"{c['cos2_alpha']:.6f}", f"{c['cos2_beta']:.6f}",
                 f"{c['cos2_alpha_geometric']:.6f}") for c in data["coordinates"]]
        body = _table(("coordinate", "cos2 alpha", "cos2 beta", "cos2 alpha (M = I)"), rows)
        body += f"<p>independent: <b>{html.escape(', '.join(data['independent']) or '-')}</b> (geometry only: " \
                f"{html.escape(', '.join(data['independent_geometric']) or '-')})</p>"
    else:
        rows = [[f"{x:.4f}"] + [f"{c:.4f}" for c in table.cos2_alpha[k]] + [html.escape(", ".join(table.independent[k]))]
                for k, x in enumerate(table.values)]
        body = _table([html.escape(table.coordinate)] + [f"cos2 alpha {html.escape(n)}" for n in names]
                      + ["independent"], rows)
    if png:
        body = f"<img alt='criterion figure' src='data:image/png;base64,{base64.b64encode(png).decode()}'>" + body
    return _page(f"{table.model.name}: projective criterion (paper 001 eq. 23)", body)


def write_html(path, text: str) -> Path:
    return write_atomically(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))
