"""Sections of the position and velocity solves (:func:`multibody.consistent_state`,
:func:`multibody.solve_positions`, :func:`multibody.solve_velocities`)."""
from .. import kinematics
from . import attach

#: a 1 m pendulum whose bob is guessed at (1.2, 0), off the circle
_BOB = """>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(1.2, 0.0))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0), length=1.0)
'rod'
>>> model = mb.build()"""
_COMMON = """ws : Workspace, optional
    A workspace of the model, reused between calls.
tol : KinematicTolerance, optional
    Position tolerance (relative to ``model.length_scale``), velocity consistency, iteration limits.
sparse : bool or None, optional
    True: the sparse solve (A of full row rank); False: the dense one; None (default): sparse for large
    eligible models (falling back to dense when A is rank deficient)."""

attach(kinematics, {
    "solve_positions": f"""Parameters
----------
model : Model
    The model.
q : (n,) array_like
    The guess (m, rad).
t : float in s, optional
    Time (drivers).
hold : sequence of int, optional
    Indices of coordinates kept at their guessed values.
{_COMMON}

Returns
-------
(n,) ndarray
    q on Phi(q, t) = 0 (to ``tol.position`` times the length scale).

Raises
------
AssemblyError
    If Newton does not meet the tolerance in ``tol.max_iterations`` iterations; the message names the
    largest residual rows and the held coordinates.
MultibodyError
    If ``sparse=True`` on a model the sparse path does not handle (nonholonomic rows, Generic groups).

Examples
--------
The minimum-norm correction moves the bob radially onto the circle:

{_BOB}
>>> from multibody import solve_positions
>>> solve_positions(model, model.q0).round(12).tolist()
[1.0, 0.0]
""",
    "solve_velocities": f"""Parameters
----------
model : Model
    The model.
q : (n,) ndarray
    Consistent coordinates.
v : (n,) array_like
    The guess (m/s, rad/s).
t : float in s, optional
    Time.
given : sequence of int, optional
    Indices of velocities kept as given.
{_COMMON}

Returns
-------
(n,) ndarray
    v with C v + b = 0.

Raises
------
AssemblyError
    If the given velocities contradict the constraints (the message names the violated rows).
MultibodyError
    If ``sparse=True`` on a model the sparse path does not handle.

Examples
--------
At (1, 0) the rod allows only vertical motion: the guess (1, 1) loses its radial part.

{_BOB}
>>> import numpy as np
>>> from multibody import solve_velocities
>>> solve_velocities(model, np.array([1.0, 0.0]), np.array([1.0, 1.0])).round(12).tolist()
[0.0, 1.0]
""",
    "consistent_state": f"""Parameters
----------
model : Model
    The model; ``model.hold`` and ``model.velocity_given`` say which initial values are kept.
t : float in s, optional
    Time.
q, v : (n,) array_like, optional
    Guesses; default ``model.q0`` and ``model.v0``.
ws : Workspace, optional
    A workspace of the model.

Returns
-------
q : (n,) ndarray
    Positions on Phi = 0.
v : (n,) ndarray
    Velocities on C v + b = 0.

Raises
------
AssemblyError
    If the positions cannot be assembled or the given velocities contradict the constraints.

Examples
--------
{_BOB}
>>> from multibody import consistent_state
>>> q, v = consistent_state(model)
>>> q.round(12).tolist(), v.tolist()
([1.0, 0.0], [0.0, 0.0])
""",
})
