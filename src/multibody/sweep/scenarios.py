"""The scenarios of a parameter sweep (:mod:`multibody.sweep.run` runs them on Dask) and one scenario's run.

A scenario is a dict of
- keyword arguments of the model's factory (``omega0`` of ``double-four-bar``, ``mass`` of ``pendulum``);
- run options ``t_end``, ``rtol``, ``atol``, ``integrator``, ``step``, ``formulation``;
- initial conditions ``q0:NAME`` / ``v0:NAME`` (a coordinate's initial value or rate; the state is
  then made consistent with the constraints, :func:`multibody.kinematics.consistent_state`);
- locking times ``lock:NAME`` (lock coordinate NAME at that time, paper 002; replaces the model's
  own locking event of that coordinate, e.g. ``lock:q2`` of ``three-r-pendulum-locking``; ``inf``:
  never locked).

:func:`run_scenario` turns one scenario into one table row (a failed scenario is a row with status
"failed" and its message); :func:`run_serial` runs a sweep in this process (the reference).
"""
from __future__ import annotations

import inspect
import itertools
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import MultibodyError
from .table import SweepTable
from ..io.userfiles import end_time, load_module, run_user_code
from ..results.tempfiles import Terminated

RUN_KEYS = ("t_end", "rtol", "atol", "integrator", "step", "formulation")
PREFIXES = ("q0:", "v0:", "lock:")
#: the most scenarios of one sweep (issue 17: mass=1:2:100000000000 tried to allocate 745 GiB)
MAX_SCENARIOS = 1_000_000


@dataclass(frozen=True)
class ModelSpec:
    """What a worker needs to build a scenario's model: the factory, default end time, default events."""

    name: str
    factory: Callable
    t_end: float
    events: tuple = ()


def resolve_model(spec: str) -> ModelSpec:
    """A built-in model name (``multibody models``), a model file (.toml/.json) or a .py file whose
    build(**kwargs) returns a Model."""
    from ..models import MODELS

    if spec in MODELS:
        e = MODELS[spec]
        return ModelSpec(spec, e.factory, e.t_end, tuple(e.events))
    path = Path(spec)
    if path.suffix in (".toml", ".json"):   # a model file: data, no parameters (scenarios vary q0:, v0:, lock:)
        import functools

        from ..io.model_file import build_file_model, load_model_file

        source = load_model_file(path)
        if any(not hasattr(e, "t") for e in source.events):
            raise MultibodyError(f"model file '{path}': sweeps take timed lock events only (lock:NAME=TIME), "
                                 "not 'rate-crosses-zero' events.")
        return ModelSpec(str(path), functools.partial(build_file_model, str(path)), source.t_end,
                         tuple(e for e in source.events if hasattr(e, "t")))
    module = load_module(spec, "build(**parameters)")
    return ModelSpec(str(path), module.build, end_time(module, spec))


# ----------------------------------------------------------------------------- scenarios
def parse_values(text: str) -> list:
    """``"1,2.5,dop853"`` -> [1, 2.5, "dop853"]; ``"START:STOP:COUNT"`` -> COUNT evenly spaced floats."""
    if text.count(":") == 2 and "," not in text:
        a, b, n = text.split(":")
        try:
            start, stop, count = float(a), float(b), int(n)
        except ValueError:
            raise MultibodyError(f"malformed range '{text}': expected START:STOP:COUNT, e.g. -1:-2:5.") from None
        if not (math.isfinite(start) and math.isfinite(stop) and 1 <= count <= MAX_SCENARIOS):
            raise MultibodyError(f"range '{text}': START and STOP must be finite and COUNT between 1 and "
                                 f"{MAX_SCENARIOS:,}.")
        return [float(x) for x in np.linspace(start, stop, count)]
    values = [_scalar(v.strip()) for v in text.split(",")]
    if any(v == "" for v in values):
        raise MultibodyError(f"malformed values '{text}': an empty value between commas.")
    return values


def parse_param(text: str) -> tuple[str, list]:
    """``"NAME=V1,V2,..."`` -> (NAME, [V1, V2, ...])."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise MultibodyError(f"malformed --param '{text}': expected NAME=V1,V2,... (e.g. omega0=-1,-2) "
                             "or NAME=START:STOP:COUNT.")
    return name.strip(), parse_values(values.strip())


def grid(params: dict[str, list]) -> list[dict]:
    """Cartesian product of the parameter values, the last parameter varying fastest; refused (before
    anything is allocated) beyond MAX_SCENARIOS scenarios."""
    names = list(params)
    count = math.prod(len(v) for v in params.values())
    if count > MAX_SCENARIOS:
        sizes = " x ".join(f"{len(params[k])} ({k})" for k in names)
        raise MultibodyError(f"the sweep would have {count:,} scenarios ({sizes}); at most {MAX_SCENARIOS:,}.")
    return [dict(zip(names, combo)) for combo in itertools.product(*(params[k] for k in names))]


def _scalar(s: str):
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(s.lower(), s)


def check_scenarios(spec: ModelSpec, scenarios: list[dict]) -> None:
    """Every parameter name is a factory keyword, a run option or a q0:/v0:/lock: coordinate name."""
    if not scenarios:
        raise MultibodyError("the sweep has no scenarios.")
    names = set().union(*scenarios)
    sig = inspect.signature(spec.factory)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    kwargs = {p.name for p in sig.parameters.values() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    factory_names = names - set(RUN_KEYS) - {n for n in names if n.startswith(PREFIXES)}
    unknown = sorted(factory_names - kwargs) if not accepts_any else []
    if unknown:
        raise MultibodyError(f"model '{spec.name}' has no parameter {', '.join(map(repr, unknown))}; its "
                             f"factory accepts: {', '.join(sorted(kwargs)) or 'none'}; run options: "
                             f"{', '.join(RUN_KEYS)}; initial conditions and locks: q0:NAME, v0:NAME, lock:NAME.")
    for name in sorted(factory_names & kwargs):        # a number where the factory's default is one
        default = sig.parameters[name].default
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            bad = [v for sc in scenarios if name in sc for v in [sc[name]]
                   if isinstance(v, str) or isinstance(v, bool)]
            if bad:
                raise MultibodyError(f"parameter '{name}' of model '{spec.name}' is a number (default {default}), "
                                     f"got {bad[0]!r}.")
    coords = {n.split(":", 1)[1] for n in names if n.startswith(PREFIXES)}
    if coords or accepts_any or spec.name.endswith(".py"):   # a user's file: sys.exit, loops caught here
        try:
            model = run_user_code(spec.factory, f"model '{spec.name}'",
                                  **{k: scenarios[0][k] for k in factory_names if k in scenarios[0]})
        except MultibodyError:
            raise
        except TypeError as exc:
            raise MultibodyError(f"model '{spec.name}': {exc}") from None
        except Exception:
            return   # a bad value, not a bad name: that scenario fails in its own row
        bad = sorted(coords - set(model.coordinate_names))
        if bad:
            raise MultibodyError(f"model '{spec.name}' has no coordinate {', '.join(map(repr, bad))}; "
                                 f"coordinates: {', '.join(model.coordinate_names)}.")


# ----------------------------------------------------------------------------- one scenario
def run_scenario(spec: ModelSpec, index: int, scenario: dict, defaults: dict) -> dict:
    """Run one scenario (on a worker); never raises: a failure becomes a row with status "failed"."""
    row = {"scenario": index, **scenario}
    wall, cpu = time.perf_counter(), time.process_time()
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:   # numerical warnings: kept out of the log
            warnings.simplefilter("always")
            result = _simulate(spec, {**defaults, **scenario})
        s = result.summary
        row.update(status="ok", error="", steps=s["steps"], rhs_evaluations=s["rhs_evaluations"],
                   energy_drift_rel=s["energy_drift_rel"],
                   constraint_violation_max=s["constraint_violation_max"])
        row.update({f"q:{n}": float(x) for n, x in zip(s["coordinate_names"], s["final_q"])})
    except Terminated:
        raise
    except (Exception, SystemExit) as exc:  # any failure of this scenario is data, not a crash of the sweep
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        if caught:
            row["error"] += f" (first warning: {caught[0].category.__name__}: {caught[0].message})"
    row["wall_time_s"] = time.perf_counter() - wall
    row["cpu_time_s"] = time.process_time() - cpu
    return row


def run_batch(spec: ModelSpec, batch: list[tuple[int, dict]], defaults: dict) -> list[dict]:
    return [run_scenario(spec, i, sc, defaults) for i, sc in batch]


def _simulate(spec: ModelSpec, sc: dict):
    from ..simulation.driver import RunOptions, simulate

    factory_kw = {k: v for k, v in sc.items() if k not in RUN_KEYS and not k.startswith(PREFIXES)}
    model = run_user_code(spec.factory, f"model '{spec.name}'", **factory_kw)   # sys.exit, endless loops
    q0, v0 = model.q0.copy(), model.v0.copy()
    for key, val in sc.items():
        if key.startswith(("q0:", "v0:")):
            (q0 if key[:2] == "q0" else v0)[model.coordinate_index(key[3:])] = float(val)
    model = model.with_initial(q0=q0, v0=v0)
    opts = RunOptions(**{k: sc[k] for k in ("integrator", "rtol", "atol", "step") if k in sc})
    return simulate(model, t_end=float(sc.get("t_end", spec.t_end)), formulation=sc.get("formulation", "lagrange"),
                    options=opts, events=_events(spec.events, sc))


def _events(default: tuple, sc: dict) -> tuple:
    from ..simulation.events import AtTime, Lock, lock_at

    locks = {k[5:]: float(v) for k, v in sc.items() if k.startswith("lock:")}
    kept = [e for e in default if not (isinstance(e, AtTime) and isinstance(e.action, Lock)
                                       and set(map(str, e.action.coordinates)) & set(locks))]
    return tuple(kept) + tuple(lock_at(t, c) for c, t in locks.items() if math.isfinite(t))


def run_serial(spec: ModelSpec, scenarios: list[dict], defaults: dict | None = None) -> SweepTable:
    """The same sweep in this process, one scenario after the other (reference for :func:`sweep`)."""
    rows = [run_scenario(spec, i, sc, dict(defaults or {})) for i, sc in enumerate(scenarios)]
    return SweepTable.from_rows(rows, {"model": spec.name, "workers": 0, "defaults": dict(defaults or {})})
