"""``multibody kinematics MODEL``: kinematic analysis and inverse dynamics of a fully driven mechanism
(simulation.kinematic; issue 21 item 1)."""
from __future__ import annotations

import json

import click
import numpy as np


@click.command("kinematics")
@click.argument("model")
@click.option("--t-end", type=float, default=None, help="End time [s] (default: the model's own).")
@click.option("--output-step", type=float, default=None, help="Time between outputs [s] (default: t_end / 200).")
@click.option("--out", default=None, metavar="PATH", help="Write the Result (HDF5) here.")
@click.option("--quasi-static", is_flag=True,
              help="Without inertia: the efforts and reactions that hold the mechanism at rest at each position.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def kinematics_cmd(model, t_end, output_step, out, as_json, quasi_static=False):
    """Positions, velocities, accelerations, driver efforts and joint reactions of a fully driven MODEL."""
    from ..errors import MultibodyError
    from ..io.model_source import load_model
    from ..results.outputs import HDF5_SUFFIXES, check_file
    from ..simulation.kinematic import kinematic_analysis

    if out is not None:
        check_file("--out", out, HDF5_SUFFIXES)
    mdl, default_t = load_model(model)
    t_end = default_t if t_end is None else t_end
    if not (np.isfinite(t_end) and t_end > 0):
        raise MultibodyError(f"--t-end must be a positive number of seconds, got {t_end}.")
    step = t_end / 200 if output_step is None else output_step
    if not (np.isfinite(step) and 0 < step <= t_end) or t_end / step > 1e7:
        raise MultibodyError(f"--output-step must lie in (0, t_end] with at most 1e7 outputs, got {step}.")
    times = np.linspace(0.0, t_end, int(round(t_end / step)) + 1)
    res = kinematic_analysis(mdl, times, quasi_static=quasi_static)
    if out:
        res.save(out)
    s = res.summary
    if as_json:
        click.echo(json.dumps(s))
        return
    lines = [f"model {mdl.name}: {s['analysis']} analysis, {s['steps']} outputs to t = {s['t_end']:g} s"]
    lines += [f"  max |effort| {k}: {v:.6g}" for k, v in s["driver_effort_max"].items()]
    lines += [f"  reactions NOT unique (paper 003): {', '.join(k for k, u in s['reaction_unique'].items() if not u)}"] \
        if not all(s["reaction_unique"].values()) else []
    click.echo("\n".join(lines + ([f"  written {out}"] if out else [])))
