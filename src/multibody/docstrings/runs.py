"""Sections of runs: :func:`multibody.simulate`, :class:`multibody.RunOptions`, :func:`multibody.lock_at`."""
from importlib import import_module

from . import attach

driver = import_module("multibody.simulation.driver")
events = import_module("multibody.simulation.events")
options = import_module("multibody.simulation.options")

#: a block sliding down a frictionless 45-degree rail: x(t) = g t^2 / 4 (acceleration g / sqrt 2 along it)
_BLOCK = """>>> from multibody import ModelBuilder, RunOptions, simulate
>>> mb = ModelBuilder("incline", gravity=(0.0, -9.81))
>>> mb.add_body("block", mass=1.0, inertia=0.1)
'block'
>>> mb.prismatic("rail", "ground", "block", axis=(1.0, -1.0), at=(0.0, 0.0))
'rail'
>>> model = mb.build()"""

attach(driver, {"simulate": f"""Parameters
----------
model : Model
    The model; its initial state is made consistent first (:func:`consistent_state`).
t_end : float in s
    End time (after ``t_start``).
t_start : float in s, optional
    Start time; default 0.
formulation : str, optional
    The equations: "lagrange" (default), "nullspace", "projection", "minimal", "partitioning" or
    "closing" (:data:`multibody.formulations.registry.FORMULATIONS`); the energy-momentum integrator runs
    "constrained" (given "lagrange") or "reduced" (paper 004).
options : RunOptions, optional
    Integrator, tolerances, step, output times.
formulation_options : dict, optional
    Keyword arguments of the formulation, e.g. ``{{"fast": False}}`` for the NumPy reference path of
    "lagrange" (no compiled kernels).
progress : bool, optional
    Show a progress bar on stderr.
events : sequence, optional
    Events such as :func:`lock_at` (constraint activation and release, impulses).
transition : {{"lagrangian", "projected", "minimal", "naive"}}, optional
    The velocity jump condition at events (paper 002).
stream : ResultStream, optional
    Write the stored states to a file as the run goes (no events yet).

Returns
-------
Result
    Time series q, v, a, multipliers, energy, violation (and the formulation's own), the summary
    (steps, errors, energy drift, constraint violation, singular crossings, backend) and the event log.

Raises
------
MultibodyError
    If an option, the formulation, the time span or an event is invalid (before anything runs).
AssemblyError
    If the initial state cannot be made consistent with the constraints.
SimulationError
    If the run cannot be completed (step size collapse, a singular system, a branch jump); the message
    names the model, the time and the cause.

Examples
--------
A block sliding down a frictionless 45-degree rail moves x = g t^2 / 4 = 2.4525 m in 1 s:

{_BLOCK}
>>> result = simulate(model, t_end=1.0, options=RunOptions(output_step=0.5),
...                   formulation_options={{"fast": False}})
>>> result.t.tolist(), round(float(result.column("q", "block.x")[-1]), 9)
([0.0, 0.5, 1.0], 2.4525)
"""})

attach(options.RunOptions, {"": """Parameters
----------
integrator : str, optional
    "dopri5" (default), "dop853", "rk4", "generalized-alpha" or "energy-momentum".
rtol : float, optional
    Relative error tolerance of the adaptive integrators; default 1e-6.
atol : float, optional
    Absolute error tolerance (in the units of each coordinate); default 1e-8.
step : float in s, optional
    Fixed step size (required by rk4, generalized-alpha and energy-momentum); a Runge-Kutta method
    given a step takes it without error control. Default None: adaptive steps.
max_step : float in s, optional
    Largest step; default unlimited.
output_interval : float in s, optional
    0 (default): store every accepted step; > 0: at most one state per interval.
output_times : sequence of float in s, optional
    Explicit, increasing output times within [t_start, t_end].
output_step : float in s, optional
    > 0: output times t_start, t_start + output_step, ..., up to t_end.
rho_inf : float, optional
    Spectral radius at infinity of generalized-alpha, in [0, 1]; default 0.9.
diagnostics : bool, optional
    Per-step extras that cost work; default True.
time_limit : float in s, optional
    Wall-clock limit of the run; a run still going then stops with :class:`SimulationError` naming the time
    reached, the share done, the steps and the smallest step (nothing is written). Default None: no limit.

Notes
-----
The options are checked when a run starts: :func:`simulate` raises :class:`MultibodyError` naming the
bad one (tolerances below what double precision resolves, a missing fixed step, output times and an
output step together, output times with an integrator without dense output, ...).

Examples
--------
>>> from multibody import RunOptions
>>> RunOptions(integrator="dop853", rtol=1e-10, atol=1e-12).integrator
'dop853'
"""})

attach(events, {"lock_at": f"""Parameters
----------
t : float in s
    Time of the event.
*coordinates : str or int
    Coordinate names or indices; each gets a row q_k - q_k(t) = 0 labelled "lock-<name>.value"
    (joint locking, paper 002 eq. 38).

Returns
-------
AtTime
    The event, for ``simulate(..., events=[...])``.

Examples
--------
Locking the sliding block at t = 0.5 s keeps x = g t^2 / 4 = 0.613125 m and takes the kinetic energy
1/2 m (g t / sqrt 2)^2 = 6.0148 J out in the jump:

{_BLOCK}
>>> from multibody import lock_at
>>> result = simulate(model, t_end=1.0, events=[lock_at(0.5, "block.x")],
...                   formulation_options={{"fast": False}})
>>> round(float(result.column("q", "block.x")[-1]), 9)
0.613125
>>> round(result.events[0]["kinetic_energy_of_jump"], 4)
6.0148
"""})

errors = import_module("multibody.errors")
attach(errors, {
    "MultibodyError": """Examples
--------
Catch it to handle any user error (the command line prints its message and exits with code 2):

>>> from multibody import ModelBuilder, MultibodyError
>>> try:
...     ModelBuilder("pendulum").add_point_mass("bob", mass=-1.0)
... except MultibodyError as error:
...     print(error)
The mass of point mass 'bob' must be a positive finite number, got -1.0.
""",
    "ModelError": """Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum")
>>> mb.add_point_mass("bob", mass=1.0)
'bob'
>>> mb.revolute("O", "ground", "moon", at=(0.0, 0.0))
Traceback (most recent call last):
...
multibody.errors.ModelError: Joint 'O' in model 'pendulum' refers to unknown body 'moon' (known: ground, bob).
""",
    "AssemblyError": """Examples
--------
A 1 m rod cannot reach a bob held at x = 2 m:

>>> from multibody import ModelBuilder, consistent_state
>>> mb = ModelBuilder("pendulum")
>>> mb.add_point_mass("bob", mass=1.0, position=(2.0, 0.0))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0), length=1.0)
'rod'
>>> mb.hold("bob.x")
>>> consistent_state(mb.build())
Traceback (most recent call last):
...
multibody.errors.AssemblyError: Model 'pendulum' cannot be assembled at t = 0: ...
""",
})
