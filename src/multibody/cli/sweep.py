"""``multibody sweep``: many scenarios of one model on Dask, gathered into one table (multibody.sweep)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import MultibodyError
from ..results.outputs import Outputs

#: the table formats of `sweep --out`
SWEEP_SUFFIXES = (".csv", ".h5", ".hdf5")


@click.command("sweep")
@click.argument("model")
@click.option("--param", "params", multiple=True, metavar="NAME=V1,V2,...",
              help="A parameter and its values (or NAME=START:STOP:COUNT); several --param give the "
                   "cartesian product. NAME: a keyword of the model's factory (e.g. omega0), a run option "
                   "(t_end, rtol, atol, integrator, step, formulation), q0:COORD / v0:COORD (initial "
                   "value / rate) or lock:COORD (time at which COORD is locked).")
@click.option("--t-end", type=float, default=None, help="End time [s] (default: the model's).")
@click.option("--rtol", type=float, default=1e-6, show_default=True, help="Relative tolerance.")
@click.option("--atol", type=float, default=1e-8, show_default=True, help="Absolute tolerance.")
@click.option("--integrator", default="dopri5", show_default=True, help="dopri5, dop853 or rk4 (+ step).")
@click.option("--formulation", default="lagrange", show_default=True, help="Equations of motion.")
@click.option("--workers", type=int, default=2, show_default=True,
              help="Worker processes of the local Dask cluster (ignored with --scheduler).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Address of a running Dask scheduler (e.g. tcp://host:8786) instead of a local cluster.")
@click.option("--tls-ca-file", default=None, metavar="PEM", help="With --scheduler tls://...: the CA certificate.")
@click.option("--tls-cert", default=None, metavar="PEM", help="With --scheduler tls://...: this client's certificate.")
@click.option("--tls-key", default=None, metavar="PEM", help="With --scheduler tls://...: this client's private key.")
@click.option("--batch-size", type=int, default=None, help="Scenarios per Dask task (default: automatic).")
@click.option("--out", "outs", multiple=True, metavar="PATH",
              help="Result table: .csv and/or .h5 (repeatable; default MODEL-sweep.csv).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary and the rows as one JSON object.")
def sweep_cmd(model, params, t_end, rtol, atol, integrator, formulation, workers, scheduler, batch_size, outs,
              as_json, tls_ca_file=None, tls_cert=None, tls_key=None):
    """Run MODEL for every combination of the --param values on Dask; one row per scenario."""
    from ..sweep.run import require_dask, sweep
    from ..sweep.scenarios import grid, parse_param, resolve_model

    require_dask()
    parsed = dict(parse_param(p) for p in params)
    if len(parsed) < len(params):
        raise MultibodyError("a parameter is given twice with --param; give all its values in one --param.")
    if batch_size is not None and batch_size < 1:
        raise MultibodyError(f"--batch-size must be a positive integer, got {batch_size}.")
    stem = Path(model).stem if model.endswith(".py") else model
    outputs, keys = Outputs(), []      # checked before the run, written all or none (issue 17)
    for i, p in enumerate(outs or (f"{stem}-sweep.csv",)):
        keys.append("--out" if i == 0 else f"--out ({i + 1})")
        outputs.file(keys[-1], p, SWEEP_SUFFIXES)
    tls = {"ca_file": tls_ca_file, "cert": tls_cert, "key": tls_key} if tls_ca_file or tls_cert or tls_key else None
    spec = resolve_model(model)
    defaults = {"rtol": rtol, "atol": atol, "integrator": integrator, "formulation": formulation,
                **({} if t_end is None else {"t_end": t_end})}
    scenarios = grid(parsed) if parsed else [{}]
    table = sweep(spec, scenarios, workers=workers, scheduler=scheduler, defaults=defaults,
                  batch_size=batch_size, progress=sys.stderr.isatty() and not as_json, tls=tls)
    with outputs.staging():
        for key in keys:
            table.write_to(outputs.stage(key), outputs.files[key].suffix)
    files = [str(outputs.final(key)) for key in keys]
    m = table.meta
    summary = {"model": spec.name, "scenarios": len(table), "ok": len(table) - len(table.failed),
               "failed": len(table.failed), "workers": m["workers"], "scheduler": m["scheduler"],
               "wall_time_s": m["wall_time_s"], "startup_s": m["startup_s"],
               "scenarios_per_s": len(table) / max(m["wall_time_s"], 1e-12), "files": files}
    if as_json:
        click.echo(json.dumps({**summary, "columns": table.columns, "rows": table.rows}, default=str))
    else:
        click.echo(_human(summary, table))
    if table.failed and len(table.failed) == len(table):
        from ..errors import SimulationError
        raise SimulationError(f"every scenario of the sweep failed ({len(table)}; the first: "
                              f"{table.failed[0]['error']}); the table with their errors is in {', '.join(files)}.")


def _human(s: dict, table) -> str:
    lines = [f"sweep {s['model']}: {s['scenarios']} scenarios, {s['ok']} ok, {s['failed']} failed on "
             f"{s['workers']} worker(s) ({s['scheduler']})",
             f"  {s['wall_time_s']:.3g} s wall ({s['scenarios_per_s']:.3g} scenarios/s), "
             f"before it: cluster start and worker warm-up {s['startup_s']:.3g} s"]
    for r in table.failed[:10]:
        lines.append(f"  failed scenario {r['scenario']}: {r['error']}")
    if len(table.failed) > 10:
        lines.append(f"  ... and {len(table.failed) - 10} more failed scenarios (see the table)")
    lines += [f"  wrote {p}" for p in s["files"]]
    return "\n".join(lines)
