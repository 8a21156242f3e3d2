"""``multibody analyze MODEL``: rank, DOF, redundancy and singularity at a configuration (paper 000
Sect. 2.5; analysis.mobility)."""
from __future__ import annotations

import json

import click
import numpy as np


@click.command("analyze")
@click.argument("model")
@click.option("--configuration", default=None,
              help="Named configuration of the model (e.g. 'singular'; default: the initial one).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--html", "html_path", default=None, metavar="FILE",
              help="Also write the findings as a self-contained HTML page (admissible motions drawn; issue 15).")
def analyze_cmd(model, configuration, as_json, html_path=None):
    """Mobility of MODEL: n, m, h, rank, dof, redundancy, singular, R diagonal, admissible motions."""
    from ..analysis.mobility import analyze
    from ..io.model_source import load_model

    html_out = _html_target(html_path)
    mdl, _ = load_model(model)
    res = analyze(mdl, configuration)
    from ..analysis.solvability import reactions_report    # paper 003: which reactions are unique
    table = reactions_report(mdl, configuration)
    if html_out:
        from ..report.findings import analysis_html, write_html

        write_html(html_out, analysis_html(mdl, res, table, analyzed_configuration(mdl, configuration)))
    click.echo(json.dumps({**res.to_dict(), "reactions": table}) if as_json
               else human(res) + "\n" + human_reactions(table))


def human(r) -> str:
    lines = [f"model {r.model}  configuration {r.configuration}",
             f"  n {r.n}  m {r.m}  h {r.h}  rank {r.rank}  dof {r.dof}  redundancy {r.redundancy}  "
             f"singular {'yes' if r.singular else 'no'} (rank nearby {r.nearby_rank}; "
             f"rank tolerance |R_ii| > {r.rank_rtol:.2g} |R_11|)",
             "  pivoted R diagonal  " + " ".join(f"{d:.3g}" for d in r.R_diag),
             "  redundant rows      " + (", ".join(r.redundant_rows) or "none")]
    T = r.admissible_motions
    if T.shape[1]:
        lines.append("  admissible motions (columns of T, orthonormal)")
        width = max(map(len, r.coordinate_names))
        for name, row in zip(r.coordinate_names, T):
            lines.append(f"    {name:<{width}} " + " ".join(f"{x:+.4f}" for x in np.where(np.abs(row) < 5e-16, 0, row)))
    return "\n".join(lines)


def human_reactions(table) -> str:
    """The per-pair solvability table (paper 003 Sect. 3.3)."""
    if not table:
        return "  reactions: no constraint rows"
    width = max(len("pair"), *(len(e["name"]) for e in table))    # short names: the header still fits
    lines = ["  reactions (paper 003 eq. 27)",
             f"    {'pair':<{width}}  unique  multipliers  rows"]
    for e in table:
        lines.append(f"    {e['name']:<{width}}  {'yes' if e['unique'] else 'NO ':<6}  "
                     f"{'unique' if e['multipliers_unique'] else 'not unique':<11}  {', '.join(e['rows'])}")
    return "\n".join(lines)


def _html_target(path):
    """--html: a writable .html path, checked before the analysis."""
    if path is None:
        return None
    from ..report.source import check_output

    return check_output(path, (".html", ".htm"), "--html")


def analyzed_configuration(model, configuration):
    """The configuration analysis.mobility.analyze examines (the named one, assembled if it is off Phi = 0)."""
    from ..assembly import Workspace
    from ..kinematics import solve_positions

    q = np.asarray(model.configuration(configuration), float)
    ws = Workspace(model)
    Phi = ws.constraints(0.0, q, np.zeros(model.n))[0]
    if Phi.size and np.max(np.abs(Phi)) > 1e-6 * model.length_scale:
        q = solve_positions(model, q, 0.0, hold=model.hold, ws=ws)
    return q
