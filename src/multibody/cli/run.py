"""``multibody run``: simulate a model and write the result (HDF5, CSV, figures)."""
from __future__ import annotations

import json
import sys
from functools import partial

import click
import numpy as np

from ..errors import MultibodyError
from ..formulations.registry import FORMULATIONS
from ..integrate.steppers import STEPPERS
from .outputs import default_out, plan_run_outputs, write_run_outputs, write_streamed_run
from .summary import human_summary

#: the continuous formulations and the discrete ones of the energy-momentum stepper (paper 004)
FORMULATION_CHOICES = list(dict.fromkeys([*FORMULATIONS, *(f for s in STEPPERS.values() if s.discrete
                                                           for f in s.formulations)]))
#: intervals of the evenly spaced states a run with --plot stores (when no output option is given)
PLOT_STATES = 500
#: a run that will store at least this many states streams into its result file unless --no-stream (in memory
#: ~1.35 KB a state for the pendulum, ~1.7 KB for the double four-bar: ~150 MB; issue 17)
AUTO_STREAM_STATES = 100_000


@click.command("run")
@click.argument("model")
@click.option("--t-end", type=float, default=None, help="End time [s] (default: the model's).")
@click.option("--rtol", type=float, default=1e-6, show_default=True, help="Relative tolerance.")
@click.option("--atol", type=float, default=1e-8, show_default=True, help="Absolute tolerance.")
@click.option("--integrator", type=click.Choice(list(STEPPERS)), default="dopri5", show_default=True,
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
@click.option("--output-times", default="", metavar="T1,T2,...",
              help="Store the series at exactly these times [s] (sampled from the dense output; events "
                   "are still stored).")
@click.option("--output-step", type=float, default=0.0, metavar="DT",
              help="Store the series at t_start, t_start + DT, ... (dense output; events still stored).")
@click.option("--formulation", type=click.Choice(FORMULATION_CHOICES), default="lagrange", show_default=True,
              help="Equations of motion.")
@click.option("--stabilization", type=click.Choice(["projection", "baumgarte", "none"]), default="projection",
              show_default=True, help="Constraint stabilisation of the lagrange formulation.")
@click.option("--event", "event_specs", multiple=True, metavar="KIND@T:WHAT",
              help="An event added to the model's own (repeatable): lock@T:COORD, release@T:COORD (opens a "
                   "lock) or impulse@T:COORD=VALUE (impulsive applied force, N s or N m s); paper 002 eq. 22.")
@click.option("--transition", type=click.Choice(["lagrangian", "projected", "minimal", "naive"]),
              default="lagrangian", show_default=True,
              help="Velocity jump at the model's events (paper 002 eqs 24, 32, 37; 'naive' only zeroes "
                   "the locked rates and is NOT momentum consistent, for comparison).")
@click.option("--basis", type=click.Choice(["continuation", "flow", "recompute"]), default="continuation",
              show_default=True, help="Tangent basis over time of the nullspace formulation (paper 000 "
                                      "Sect. 2.4): discrete continuation Q_k expm(Omega h) (eq. 22), the "
                                      "integrated flow T' = -A+ A' T, or a fresh QR every step.")
@click.option("--eliminate", default="", metavar="ROWS",
              help="lagrange: comma-separated constraint rows (e.g. 'C.y,W4.normal') eliminated as redundant "
                   "(paper 003 Sect. 3.1; their reactions become zero); default: minimum-norm multipliers.")
@click.option("--out", default=None, metavar="PATH",
              help="Result file (HDF5; default MODEL.h5 in the current directory).")
@click.option("--csv", "csv_path", default=None, metavar="PATH", help="Also export CSV.")
@click.option("--plot", "plot_dir", default=None, metavar="DIR",
              help="Write PNG figures into this directory. Without --output-times/--output-step/"
                   "--output-interval the run then stores 501 evenly spaced states (and the events), so the "
                   "curves are smooth, when the integrator has a dense output (not for --formulation nullspace, "
                   "whose figures show the tangent basis of each step).")
@click.option("--report", "report_path", default=None, metavar="FILE",
              help="Also write a self-contained HTML report (summary, interactive figures, events, animation; "
                   "needs 'multibody[report]'); like --plot, stores 501 evenly spaced states by default.")
@click.option("--start-at-equilibrium", is_flag=True,
              help="Start at rest at the static equilibrium nearest to the model's initial configuration "
                   "(multibody equilibrium), so the run has no transient from an unbalanced start.")
@click.option("--stream/--no-stream", default=None,
              help="Write the stored states into the result file block by block during the run (memory stays "
                   "flat however long the run; --csv/--plot/--report read the file back); also with events. "
                   f"Default: streamed when the run will store at least {AUTO_STREAM_STATES:,} states "
                   "(known before the run with --output-step/--output-times or a fixed --step).")
@click.option("--time-limit", type=float, default=None, metavar="SECONDS",
              help="Stop a run still going after this much wall time with an error naming the time reached, "
                   "the steps and the smallest step (nothing is written; default: no limit).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def run_cmd(model, t_end, rtol, atol, integrator, rho_inf, step, output_interval, output_times, output_step,
            formulation, stabilization, transition, basis, eliminate,
            out, csv_path, plot_dir, as_json, event_specs=(), start_at_equilibrium=False, report_path=None,
            stream=None, time_limit=None):
    """Simulate MODEL (a built-in name, a model file .toml/.json, a .urdf robot or a .py file defining
    build()); a model file's [simulation] table suggests the options not given here."""
    from ..fast.warm import cold_start
    from ..formulations.lagrange import Stabilization
    from ..io.model_source import load_source
    from ..io.userfiles import watch_user_calls
    from ..simulation.driver import RunOptions, simulate

    outputs = plan_run_outputs(default_out(model) if out is None else out, csv_path, plot_dir,
                               report_path)   # before the run
    source = load_source(model)
    mdl, default_t = source.model, source.t_end
    if start_at_equilibrium:
        mdl = at_equilibrium(mdl)
    integrator, rtol, atol, step, output_interval, formulation = suggested(
        source.settings, integrator=integrator, rtol=rtol, atol=atol, step=step, output_interval=output_interval,
        formulation=formulation)
    t_end = default_t if t_end is None else t_end
    if step is None and STEPPERS.get(integrator, STEPPERS["dopri5"]).discrete:   # the paper's step
        step = _natural_step(model)
    if (plot_dir is not None or report_path is not None) and not (output_times or output_step or output_interval) and formulation != "nullspace" and \
            STEPPERS.get(integrator, STEPPERS["dopri5"]).dense_output:   # nullspace figures: per-step basis data
        output_step = t_end / PLOT_STATES
    options = RunOptions(integrator=integrator, rtol=rtol, atol=atol, step=step, output_interval=output_interval,
                         rho_inf=rho_inf, output_times=_times(output_times), output_step=output_step,
                         time_limit=time_limit)
    _check_with_origin(options, t_end, model, source.settings)
    continuous = not STEPPERS.get(integrator, STEPPERS["dopri5"]).discrete   # energy-momentum: no such options
    form_opts = ({"stabilization": Stabilization(stabilization)}
                 if formulation in ("lagrange", "projection") and continuous else {})
    if formulation == "nullspace":
        form_opts = {"basis": basis}
    if eliminate:
        if formulation != "lagrange":
            raise MultibodyError("--eliminate needs --formulation lagrange.")
        form_opts["eliminate"] = tuple(x.strip() for x in eliminate.split(",") if x.strip())
    from ..simulation.events import parse_event

    events = tuple(source.events) + tuple(parse_event(e) for e in event_specs)
    run = partial(simulate, mdl, t_end=t_end, formulation=formulation, options=options, formulation_options=form_opts,
                  progress=sys.stderr.isatty() and not as_json, events=events, transition=transition)
    if stream is None:
        stream = (expected_states(options, t_end) or 0) >= AUTO_STREAM_STATES
    with cold_start("background"), watch_user_calls(model):   # cold numba cache: NumPy path, compile for the next
        result = write_streamed_run(outputs, run, mdl, options) if stream else run()
    if not stream:
        write_run_outputs(outputs, result, mdl, options)     # all or nothing
    click.echo(json.dumps(result.summary) if as_json else human_summary(result.summary))


def expected_states(options, t_end: float, t_start: float = 0.0) -> float | None:
    """The number of states a run will store, when it is known before the run (issue 17).

    Parameters
    ----------
    options : RunOptions
        The run's options (checked).
    t_end, t_start : float in s
        The run's end and start.

    Returns
    -------
    float or None
        The output times, the output step's grid, or the steps of a fixed step (at most one per output
        interval); None for an adaptive run without output times (its step count is known only
        afterwards). Events add two states each (not counted)."""
    if options.output_times:
        return float(len(options.output_times))
    span = t_end - t_start
    if options.output_step:
        return span / options.output_step + 1
    if options.step:
        return span / max(options.step, options.output_interval) + 1
    return None


def at_equilibrium(model):
    """The model starting at rest at its static equilibrium (analysis.equilibrium; issue 21 item 2)."""
    from ..analysis.equilibrium import equilibrium

    return model.with_initial(q0=equilibrium(model).q, v0=np.zeros(model.n), velocity_given=())


def suggested(settings: dict, **given):
    """The run options in order: each as given on the command line, else the model file's suggestion."""
    ctx = click.get_current_context()
    out = []
    for name, value in given.items():
        from_default = ctx.get_parameter_source(name) is click.core.ParameterSource.DEFAULT
        out.append(settings[name] if from_default and name in settings else value)
    return out


def _check_with_origin(options, t_end, model: str, settings: dict) -> None:
    """The run options checked before the run; a bad value that came from the model file's [simulation]
    table is reported as the file's (issue 17)."""
    from ..simulation.options import check_options

    try:
        check_options(options, 0.0, t_end)
    except MultibodyError as exc:
        if not settings:
            raise
        raise MultibodyError(f"{exc} (the model file '{model}' suggests in its [simulation] table: "
                             f"{', '.join(f'{k} = {v!r}' for k, v in settings.items())})") from None


def _times(text: str) -> tuple:
    """--output-times "0,0.1,0.25" -> (0.0, 0.1, 0.25); a clear error naming a bad entry."""
    out = []
    for item in filter(None, (x.strip() for x in text.split(","))):
        try:
            out.append(float(item))
        except ValueError:
            raise MultibodyError(f"--output-times: '{item}' is not a number.") from None
    return tuple(out)


def _natural_step(name: str) -> float | None:
    """The built-in model's fixed step of the paper (models.Entry.step; None for other models)."""
    from ..models import MODELS

    entry = MODELS.get(name)
    return None if entry is None else entry.step
