"""Command line: a thin layer over models, simulate, results and plot.

Every user error (unknown model or option, bad model file, inconsistent initial conditions) is
printed as one paragraph on stderr with exit code 2 and no traceback; a failed run writes nothing.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import click

from .errors import MultibodyError
from .model.system import Model

EXIT_USER_ERROR = 2


def load_model(spec: str) -> tuple[Model, float]:
    """A built-in model name, or a path to a Python file that defines build() -> Model.

    Returns the model and its default end time."""
    from .models import MODELS

    if spec in MODELS:
        entry = MODELS[spec]
        return entry.factory(), entry.t_end
    path = Path(spec)
    if path.suffix != ".py":
        raise MultibodyError(f"unknown model '{spec}': not a built-in model (see 'multibody models') "
                             "and not a path to a .py file.")
    if not path.is_file():
        raise MultibodyError(f"model file '{spec}' does not exist.")
    module_spec = importlib.util.spec_from_file_location(f"multibody_user_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: report, never a traceback
        raise MultibodyError(f"model file '{spec}' failed to load: {type(exc).__name__}: {exc}") from None
    build = getattr(module, "build", None)
    if not callable(build):
        raise MultibodyError(f"model file '{spec}' does not define a function build() returning a model.")
    try:
        model = build()
    except MultibodyError:
        raise
    except Exception as exc:
        raise MultibodyError(f"build() in '{spec}' raised {type(exc).__name__}: {exc}") from None
    if not isinstance(model, Model):
        raise MultibodyError(f"build() in '{spec}' returned {type(model).__name__}, not a multibody Model.")
    return model, float(getattr(module, "T_END", 1.0))


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MultibodyError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(EXIT_USER_ERROR)


@click.group(cls=_Group)
@click.version_option(package_name="multibody")
def main():
    """multibody: dynamics of constrained mechanical systems in redundant coordinates."""


@main.command("models")
def models_cmd():
    """List the built-in models."""
    from .models import MODELS

    width = max(map(len, MODELS))
    for name, entry in MODELS.items():
        click.echo(f"{name:<{width}}  {entry.summary}")


@main.command("run")
@click.argument("model")
@click.option("--t-end", type=float, default=None, help="End time [s] (default: the model's).")
@click.option("--rtol", type=float, default=1e-6, show_default=True, help="Relative tolerance.")
@click.option("--atol", type=float, default=1e-8, show_default=True, help="Absolute tolerance.")
@click.option("--integrator", default="dopri5", show_default=True,
              help="dopri5 (Dormand-Prince 5(4)), dop853 (8(5,3)) or rk4 (fixed step, needs --step).")
@click.option("--step", type=float, default=None, help="Fixed step size [s] (no error control).")
@click.option("--formulation", default="lagrange", show_default=True, help="Equations of motion.")
@click.option("--stabilization", type=click.Choice(["projection", "baumgarte", "none"]), default="projection",
              show_default=True, help="Constraint stabilisation of the lagrange formulation.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Result file (HDF5; default MODEL.h5 in the current directory).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, help="Also export CSV.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False), default=None,
              help="Write PNG figures into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def run_cmd(model, t_end, rtol, atol, integrator, step, formulation, stabilization, out, csv_path, plot_dir,
            as_json):
    """Simulate MODEL (a built-in name or a .py file defining build())."""
    from .formulations.lagrange import Stabilization
    from .runner import RunOptions, simulate

    mdl, default_t = load_model(model)
    options = RunOptions(integrator=integrator, rtol=rtol, atol=atol, step=step)
    form_opts = {"stabilization": Stabilization(stabilization)} if formulation == "lagrange" else {}
    result = simulate(mdl, t_end=default_t if t_end is None else t_end, formulation=formulation,
                      options=options, formulation_options=form_opts,
                      progress=sys.stderr.isatty() and not as_json)
    out = Path(out or f"{Path(model).stem if model.endswith('.py') else model}.h5")
    result.summary["result_file"] = str(result.save(out))
    if csv_path:
        result.summary["csv_file"] = str(result.to_csv(csv_path))
    if plot_dir:
        from .plot import standard_figures

        result.summary["figures"] = [str(p) for p in standard_figures(result, mdl, plot_dir)]
    click.echo(json.dumps(result.summary) if as_json else human_summary(result.summary))


def human_summary(s: dict) -> str:
    lines = [f"model {s['model']}  formulation {s['formulation']}  integrator {s['integrator']}"
             f" (rtol {s['rtol']:g}, atol {s['atol']:g})",
             f"  t_end {s['t_end']:g} s: {s['steps']} steps ({s['rejected_steps']} rejected), "
             f"{s['rhs_evaluations']} right-hand-side evaluations, {s['wall_time_s']:.3g} s wall",
             f"  energy drift (relative)  {s['energy_drift_rel']:.3e}",
             f"  max |Phi|                {s['constraint_violation_max']:.3e}",
             f"  max |A v + Phi_t|        {s['velocity_violation_max']:.3e}",
             "  final q  " + ", ".join(f"{n}={x:.6g}" for n, x in zip(s["coordinate_names"], s["final_q"]))]
    for key in ("result_file", "csv_file"):
        if key in s:
            lines.append(f"  wrote {s[key]}")
    for p in s.get("figures", []):
        lines.append(f"  figure {p}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    main()
