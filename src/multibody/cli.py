"""Command line: a thin layer over models, simulate, results and plot.

Every user error (unknown model or option, bad model file, inconsistent initial conditions) is
printed as one paragraph on stderr with exit code 2 and no traceback; a failed run writes nothing.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from .errors import MultibodyError
from .userfiles import load_module
from .model.system import Model

EXIT_USER_ERROR = 2


def load_model(spec: str) -> tuple[Model, float]:
    """A built-in model name, or a path to a Python file that defines build() -> Model.

    Returns the model and its default end time."""
    from .models import MODELS

    if spec in MODELS:
        entry = MODELS[spec]
        return entry.factory(), entry.t_end
    module = load_module(spec)
    build = module.build
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
    _limit_blas_threads()


def _limit_blas_threads() -> None:
    """One BLAS thread unless MULTIBODY_BLAS_THREADS says otherwise: the dense systems of a mechanism are
    small, and a threaded BLAS on a loaded machine made a 300 x 300 solve 200 times slower (measured on
    the 2-core development machine)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(int(os.environ.get("MULTIBODY_BLAS_THREADS", "1")), user_api="blas")


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
              help="dopri5 (Dormand-Prince 5(4)), dop853 (8(5,3)), rk4 (fixed step, needs --step), "
                   "generalized-alpha (implicit, index-3 with sparse Newton, for stiff and large models; --step, "
                   "--rho-inf) or energy-momentum (spatial models, paper 004; --step, --formulation "
                   "constrained|reduced).")
@click.option("--rho-inf", type=float, default=0.9, show_default=True,
              help="generalized-alpha: spectral radius at infinite step (1: no numerical damping).")
@click.option("--step", type=float, default=None, help="Fixed step size [s] (no error control).")
@click.option("--output-interval", type=float, default=0.0, show_default=True,
              help="Store at most one state per interval [s] in the result (0: every accepted step); "
                   "the first and last states and events are always stored.")
@click.option("--formulation", default="lagrange", show_default=True, help="Equations of motion.")
@click.option("--stabilization", type=click.Choice(["projection", "baumgarte", "none"]), default="projection",
              show_default=True, help="Constraint stabilisation of the lagrange formulation.")
@click.option("--transition", type=click.Choice(["lagrangian", "projected", "minimal", "naive"]),
              default="lagrangian", show_default=True,
              help="Velocity jump at the model's events (paper 002 eqs 24, 32, 37; 'naive' only zeroes "
                   "the locked rates and is NOT momentum consistent, for comparison).")
@click.option("--basis", type=click.Choice(["continuation", "recompute"]), default="continuation",
              show_default=True, help="Tangent basis over time of the nullspace formulation (paper 000 "
                                      "Sect. 2.4): QR continuation or a fresh QR every step.")
@click.option("--eliminate", default="", metavar="ROWS",
              help="lagrange: comma-separated constraint rows (e.g. 'C.y,W4.normal') eliminated as redundant "
                   "(paper 003 Sect. 3.1; their reactions become zero); default: minimum-norm multipliers.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Result file (HDF5; default MODEL.h5 in the current directory).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, help="Also export CSV.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False), default=None,
              help="Write PNG figures into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def run_cmd(model, t_end, rtol, atol, integrator, rho_inf, step, output_interval, formulation, stabilization, transition, basis, eliminate,
            out, csv_path, plot_dir, as_json):
    """Simulate MODEL (a built-in name or a .py file defining build())."""
    from .formulations.lagrange import Stabilization
    from .runner import RunOptions, simulate

    mdl, default_t = load_model(model)
    options = RunOptions(integrator=integrator, rtol=rtol, atol=atol, step=step, output_interval=output_interval,
                         rho_inf=rho_inf)
    form_opts = ({"stabilization": Stabilization(stabilization)} if formulation in ("lagrange", "projection")
                 else {})
    if formulation == "nullspace":
        form_opts = {"basis": basis}
    if eliminate:
        if formulation != "lagrange":
            raise MultibodyError("--eliminate needs --formulation lagrange.")
        form_opts["eliminate"] = tuple(x.strip() for x in eliminate.split(",") if x.strip())
    from .models import MODELS

    events = MODELS[model].events if model in MODELS else ()
    result = simulate(mdl, t_end=default_t if t_end is None else t_end, formulation=formulation,
                      options=options, formulation_options=form_opts,
                      progress=sys.stderr.isatty() and not as_json, events=events, transition=transition)
    out = Path(out or f"{Path(model).stem if model.endswith('.py') else model}.h5")
    result.summary["result_file"] = str(result.save(out))
    if csv_path:
        result.summary["csv_file"] = str(result.to_csv(csv_path))
    if plot_dir:
        from .plot import standard_figures

        result.summary["figures"] = [str(p) for p in standard_figures(result, mdl, plot_dir)]
        if any(e.get("kind") != "singular" for e in result.events):   # singular: nullspace's own
            from .plot_topology import topology_figures

            result.summary["figures"] += [str(p) for p in topology_figures(result, plot_dir)]
        if "momentum" in result.series:
            from .plot_spatial import spatial_figures

            result.summary["figures"] += [str(p) for p in spatial_figures(result, mdl, plot_dir)]
        if formulation == "nullspace":
            from .plot_nullspace import nullspace_figures

            result.summary["figures"] += [str(p) for p in nullspace_figures(result, mdl, plot_dir, options)]
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
    if "newton_iterations" in s and "factorizations" in s:   # generalized-alpha
        lines[1] = (f"  t_end {s['t_end']:g} s: {s['steps']} steps of {s['step']:g} s ({s['halved_steps']} halved), "
                    f"{s['newton_iterations']} Newton iterations, {s['factorizations']} sparse factorisations, "
                    f"{s['wall_time_s']:.3g} s wall (rho_inf {s['rho_inf']:g})")
    if s.get("integrator") == "energy-momentum":
        lines.append(f"  Newton (tol {s['newton_tolerance']:g}): max {s['newton_iterations_max']} iterations per "
                     f"step; iteration-matrix condition {s['condition_min']:.3g} .. {s['condition_max']:.3g}; "
                     f"{s['unknowns']} unknowns, {s['degrees_of_freedom']} DOF, redundant "
                     f"{', '.join(s['redundant_constraints']) or 'none'}")
    for e in s.get("events", []):
        lines.append(f"  event t={e['t']:g} {e['name']} ({e['transition']}): energy {e['energy_before']:.6g} -> "
                     f"{e['energy_after']:.6g} J, momentum continuity error {e['momentum_continuity_error']:.2e}")
    if "singular_events" in s:   # nullspace (paper 000): basis, rank and singular configurations
        lines.append(f"  basis {s['basis']}: rank {s['generic_rank']}, dof {s['dof']}, redundancy {s['redundancy']}; "
                     f"largest qd jump {s['qd_ind_jump_max_rel']:.3g} (relative); singular at t = "
                     + (", ".join(f"{e['t']:.6g} (rank {e['rank']})" for e in s["singular_events"]) or "none"))
    if "coordinate_switches" in s:   # partitioning (paper 001): independent coordinates and their switches
        lines.append(f"  independent {', '.join(s['independent_initial']) or '-'}; "
                     f"{len(s['coordinate_switches'])} switches" + "".join(
                         f"; t={w['t']:.4g} {','.join(w['old'])}->{','.join(w['new'])}"
                         for w in s["coordinate_switches"][:6]))
    if s.get("non_unique_reactions"):   # paper 003: reactions a rigid model does not determine
        lines.append(f"  NOT unique (redundancy {s['redundancy_max']}): reactions of "
                     f"{', '.join(s['non_unique_reactions'])} (see series reactions_unique)")
    for key in ("result_file", "csv_file"):
        if key in s:
            lines.append(f"  wrote {s[key]}")
    for p in s.get("figures", []):
        lines.append(f"  figure {p}")
    return "\n".join(lines)

from .cli_analyze import analyze_cmd; main.add_command(analyze_cmd)  # noqa: E402
from .cli_criterion import criterion_cmd; main.add_command(criterion_cmd)  # noqa: E402
from .cli_sweep import sweep_cmd; main.add_command(sweep_cmd)  # noqa: E402
from .cli_reactions import reactions_experiment_cmd; main.add_command(reactions_experiment_cmd)  # noqa: E402
