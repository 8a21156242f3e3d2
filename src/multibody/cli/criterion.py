"""``multibody criterion``: the projective criterion of paper 001 (eqs 16-23) at the initial
configuration of a model or along a sweep of one coordinate, as text, JSON and a figure in the style
of paper 001 Fig. 3."""
from __future__ import annotations

import json
from dataclasses import dataclass

import click
import numpy as np

from ..analysis.partition import criterion_at
from ..assembly import Workspace
from ..errors import MultibodyError
from ..kinematics import consistent_state, solve_positions
from ..model.system import Model
from ..results.outputs import check_dir


@dataclass(frozen=True)
class CriterionTable:
    """values (N,) of the swept coordinate (None: the initial configuration, N = 1); cos2_alpha,
    cos2_beta, cos2_alpha_geometric (N, n); independent, independent_geometric: N chosen sets."""

    model: Model
    coordinate: str | None
    values: np.ndarray | None
    cos2_alpha: np.ndarray
    cos2_beta: np.ndarray
    cos2_alpha_geometric: np.ndarray
    independent: list
    independent_geometric: list

    def to_json(self) -> dict:
        names = self.model.coordinate_names
        pick = (lambda a: a[0].tolist()) if self.values is None else (lambda a: a.tolist())
        coords = [{"name": nm, "cos2_alpha": pick(self.cos2_alpha[:, i]), "cos2_beta": pick(self.cos2_beta[:, i]),
                   "cos2_alpha_geometric": pick(self.cos2_alpha_geometric[:, i])} for i, nm in enumerate(names)]
        out = {"model": self.model.name, "metric": "mass (paper 001 eq. 23)", "coordinates": coords,
               "independent": self.independent[0] if self.values is None else self.independent,
               "independent_geometric": (self.independent_geometric[0] if self.values is None
                                         else self.independent_geometric)}
        if self.values is not None:
            out["sweep"] = {"coordinate": self.coordinate, "values": self.values.tolist()}
        return out


#: the most points of a --sweep (each is a Newton solve and two criteria)
MAX_SWEEP_POINTS = 100_000


def criterion_table(model: Model, sweep=None, t: float = 0.0) -> CriterionTable:
    """The criterion at the consistent initial configuration, or along ``sweep`` = (coordinate, start,
    stop, count): the coordinate is held at each value and the others follow by Newton from the
    previous point (a driven sweep, continuous along one assembly branch)."""
    ws = Workspace(model)
    if sweep is None:
        q0 = consistent_state(model, t, ws=ws)[0]
        configs, coord, values = [q0], None, None
    else:
        coord, start, stop, count = sweep
        if not (np.isfinite(start) and np.isfinite(stop)):
            raise MultibodyError(f"--sweep: START and STOP must be finite numbers, got {start} and {stop}.")
        if not 2 <= int(count) <= MAX_SWEEP_POINTS:
            raise MultibodyError(f"--sweep needs 2 to {MAX_SWEEP_POINTS:,} points, got {count}.")
        idx = model.coordinate_index(coord)
        values = np.linspace(float(start), float(stop), int(count))
        q = consistent_state(model, t, ws=ws)[0].copy()
        configs = []
        for x in values:
            q = _continue_to(model, ws, q, idx, x, t)
            configs.append(q.copy())
    mass = [criterion_at(model, q, t, ws=ws) for q in configs]
    geo = [criterion_at(model, q, t, ws=ws, metric="geometry", partition=c.partition)
           for q, c in zip(configs, mass)]
    names = model.coordinate_names
    return CriterionTable(model, coord, values, np.array([c.cos2_alpha for c in mass]),
                          np.array([c.cos2_beta for c in mass]), np.array([c.cos2_alpha for c in geo]),
                          [[names[i] for i in c.best()] for c in mass],
                          [[names[i] for i in c.best()] for c in geo])


#: largest change of the swept coordinate per continuation sub-step, relative to max(1, length scale)
SWEEP_SUBSTEP = 0.02


def _continue_to(model, ws, q, idx, x, t):
    """q with q[idx] = x and Phi = 0, by sub-steps from q: Euler predictor along the tangent
    (C dq = 0 with dq[idx] given, minimum-norm on the others), Newton corrector with q[idx] held."""
    free = [i for i in range(model.n) if i != idx]
    step = SWEEP_SUBSTEP * max(1.0, model.length_scale)
    count = max(1, int(np.ceil(abs(x - q[idx]) / step)))
    for target in np.linspace(q[idx], x, count + 1)[1:]:
        C = ws.constraints(t, q, np.zeros(model.n))[1]
        dq = np.zeros(model.n)
        dq[idx] = target - q[idx]
        if C.shape[0]:
            dq[free] = np.linalg.lstsq(C[:, free], -C[:, idx] * dq[idx], rcond=None)[0]
        try:
            q = solve_positions(model, q + dq, t, hold=(idx,), ws=ws)
        except MultibodyError as exc:
            raise MultibodyError(f"the sweep of {model.coordinate_names[idx]} stops at {target:g}: {exc} "
                                 "(holding a coordinate fails where it is a singular choice, "
                                 "cos^2 alpha = 0, or beyond the reach of the mechanism).") from None
    return q


def _text(table: CriterionTable) -> str:
    names = table.model.coordinate_names
    width = max(map(len, names))
    if table.values is None:
        lines = [f"model {table.model.name}: projective criterion (paper 001 eq. 23) at the initial configuration",
                 f"  {'coordinate':<{width}}  cos2_alpha  cos2_beta  cos2_alpha(geometry)"]
        lines += [f"  {nm:<{width}}  {table.cos2_alpha[0, i]:10.6f}  {table.cos2_beta[0, i]:9.6f}  "
                  f"{table.cos2_alpha_geometric[0, i]:10.6f}" for i, nm in enumerate(names)]
        lines.append(f"  independent: {', '.join(table.independent[0]) or '(none: no degree of freedom)'}"
                     f"   (geometry only: {', '.join(table.independent_geometric[0]) or '-'})")
        return "\n".join(lines)
    lines = [f"model {table.model.name}: criterion along {table.coordinate} = {table.values[0]:g} .. "
             f"{table.values[-1]:g} ({len(table.values)} points)",
             f"  {table.coordinate + ' =':>10}  " + "  ".join(f"{nm:>{max(width, 8)}}" for nm in names)
             + "  independent"]
    for k, x in enumerate(table.values):
        lines.append(f"  {x:10.4f}  " + "  ".join(f"{c:>{max(width, 8)}.4f}" for c in table.cos2_alpha[k])
                     + "  " + ", ".join(table.independent[k]))
    return "\n".join(lines)


@click.command("criterion")
@click.argument("model")
@click.option("--sweep", nargs=4, type=(str, float, float, int), default=None,
              metavar="COORD START STOP N", help="Hold COORD at N values from START to STOP.")
@click.option("--plot", "plot_dir", default=None, metavar="DIR",
              help="Write the figure (paper 001 Fig. 3 style) into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.option("--html", "html_path", default=None, metavar="FILE",
              help="Also write the table and its figure as a self-contained HTML page (issue 15).")
def criterion_cmd(model, sweep, plot_dir, as_json, html_path=None):
    """Projective criterion (paper 001): cos^2 alpha_i and cos^2 beta_i of every coordinate and the
    best independent coordinates of MODEL, with the geometry-only (M = I) choice for comparison."""
    from ..io.model_source import load_model

    from .analyze import _html_target

    if plot_dir is not None:
        check_dir("--plot", plot_dir)
    html_out = _html_target(html_path)
    mdl, _ = load_model(model)
    table = criterion_table(mdl, sweep)
    out = table.to_json()
    if html_out:
        out["html"] = str(_criterion_page(table, html_out))
    if plot_dir:
        from ..plot.criterion import criterion_figure

        out["figure"] = str(criterion_figure(table, plot_dir))
    if as_json:
        click.echo(json.dumps(out))
    else:
        click.echo(_text(table) + (f"\n  figure {out['figure']}" if "figure" in out else ""))


def _criterion_page(table, path):
    """The page of --html: the table and the figure of plot.criterion (drawn into a temporary directory)."""
    import tempfile
    from pathlib import Path

    from ..plot.criterion import criterion_figure
    from ..report.findings import criterion_html, write_html

    with tempfile.TemporaryDirectory() as d:
        png = Path(criterion_figure(table, d)).read_bytes()
    return write_html(path, criterion_html(table, png))
