"""Sections of :class:`multibody.Model`, :func:`multibody.matrix_system` and :func:`multibody.serial_chain`."""
from ..model import chain, system
from . import attach

_PENDULUM = """>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0))
'rod'
>>> model = mb.build()"""

attach(system.Model, {
    "": f"""Built by :class:`ModelBuilder`, :class:`SpatialModelBuilder`, :func:`matrix_system`,
:func:`serial_chain` or a model file; never constructed by hand.

Attributes
----------
name : str
    Name of the model.
coordinate_names : tuple of str
    The n coordinate names, e.g. "crank.x", "crank.theta" (m, rad).
constraints : tuple of ConstraintGroup
    Holonomic constraint groups, one per joint type; rows labelled "joint.component".
forces : tuple of ForceElement
    Gravity, springs, dampers, user forces.
q0 : (n,) ndarray
    Initial positions (a guess until assembled).
v0 : (n,) ndarray
    Initial velocities.
mass_matrix : (n, n) ndarray or None
    The constant mass matrix, or None when ``mass_fun`` gives M(q).
mass_fun : callable or None
    M(q) -> (n, n) for configuration-dependent mass matrices.
hold : tuple of int
    Coordinates kept at their initial position when the initial state is made consistent.
velocity_given : tuple of int
    Coordinates whose initial velocity is kept.
configurations : Mapping[str, ndarray]
    Named configurations (``configuration(name)``).
bodies : tuple of BodyInfo
    Bodies for labels and drawing.
length_scale : float in m
    A characteristic length (tolerances of the kinematic solves are relative to it).
source : str
    Where the description came from (a model file's path).
points : Mapping[str, callable]
    Named point sets for drawing (e.g. a chain's joints(q)).
joint_bodies : Mapping[str, tuple of str]
    Joint name -> the two bodies it connects, for joint reactions.
nonholonomic : tuple of PfaffianGroup
    Pfaffian groups Psi(q, t) v + psi_t = 0 (h rows).
closing : ClosingConditions or None
    Explicit closing conditions q_D = g(q_I, t) (paper 001 eq. 27).
distribution : ReactionDistribution or None
    Distribution matrix of the physical reactions (paper 001 eq. 32).

Examples
--------
{_PENDULUM}
>>> model.n, model.m, model.h
(2, 1, 0)
>>> model.coordinate_names, model.constraint_labels
(('bob.x', 'bob.y'), ('rod.length',))
""",
    "n": "Number of coordinates n.",
    "m": "Number of holonomic constraint rows m (redundant rows included).",
    "mass": """Parameters
----------
q : (n,) ndarray
    Coordinates (m, rad); ignored when the mass matrix is constant.

Returns
-------
(n, n) ndarray
    The mass matrix M(q) (kg, kg m, kg m^2 entries).

Examples
--------
{_PENDULUM}
>>> model.mass(model.q0).tolist()
[[1.0, 0.0], [0.0, 1.0]]
""".replace("{_PENDULUM}", _PENDULUM),
    "coordinate_index": """The index of a coordinate in q.

Parameters
----------
name : str
    A coordinate name, e.g. "slider.x".

Returns
-------
int
    Its position in ``coordinate_names``.

Raises
------
ModelError
    If the model has no such coordinate (the message lists them).

Examples
--------
{_PENDULUM}
>>> model.coordinate_index("bob.y")
1
""".replace("{_PENDULUM}", _PENDULUM),
    "with_initial": f"""Parameters
----------
q0, v0 : (n,) array_like, optional
    New initial positions (m, rad) and velocities (m/s, rad/s).
hold, velocity_given : sequence of int, optional
    New indices of held coordinates and of given velocities.

Returns
-------
Model
    The copy; the arguments not given are kept.

Raises
------
ModelError
    If ``q0`` or ``v0`` is not n finite numbers.

Examples
--------
{_PENDULUM}
>>> model.with_initial(q0=[0.0, -1.0]).q0.tolist()
[0.0, -1.0]
""",
    "with_constraints": """Parameters
----------
*groups : ConstraintGroup
    The constraint groups to add.

Returns
-------
Model
    The copy with the rows appended.

Raises
------
ModelError
    If a new row label repeats an existing one.
""",
    "with_locked": f"""Parameters
----------
coordinates : sequence of str or int
    Coordinate names or indices.
values : sequence of float
    The values they are locked at (m, rad), one per coordinate.
prefix : str, optional
    Prefix of the row labels; default "lock".

Returns
-------
Model
    The copy with one row per locked coordinate.

Raises
------
ModelError
    If a coordinate is unknown or an index is out of range.

Examples
--------
{_PENDULUM}
>>> model.with_locked(["bob.y"], [0.0]).constraint_labels
('rod.length', 'lock-bob.y.value')
""",
    "without_rows": f"""Parameters
----------
labels : iterable of str
    Row labels to drop.

Returns
-------
Model
    The copy without those rows.

Raises
------
ModelError
    If a label is not a row of the model, or it is part of a group that can only be released whole.

Examples
--------
{_PENDULUM}
>>> locked = model.with_locked(["bob.y"], [0.0])
>>> locked.without_rows(["lock-bob.y.value"]).constraint_labels
('rod.length',)
""",
    "configuration": f"""Parameters
----------
name : str or None
    None or "initial" for ``q0``, else the name of a configuration of the model.

Returns
-------
(n,) ndarray
    The configuration's coordinates.

Raises
------
ModelError
    If there is no configuration of that name (the message lists the known ones).

Examples
--------
{_PENDULUM}
>>> model.configuration("initial").tolist()
[1.0, 0.0]
""",
})

attach(system, {"matrix_system": """Parameters
----------
name : str
    Name of the model.
coordinate_names : sequence of str
    The n coordinate names.
mass : (n, n) array_like or callable
    The constant mass matrix, or M(q) -> (n, n); symmetric and positive (semi-)definite.
forces : callable, optional
    h(q, v, t) -> (n,), the generalized forces (conservative ones included).
potential : callable, optional
    V(q) -> float in J, used only for the energy output (``forces`` must then contain -dV/dq).
constraints : iterable, optional
    Dicts with keys "name", "phi" (callable Phi(q, t) -> (r,)) and optionally "jacobian", "phi_t",
    "gamma", "rows", "extended" (as ``ModelBuilder.constraint``), or prebuilt ConstraintGroups.
q0 : (n,) array_like
    Initial positions (a guess until assembled).
v0 : (n,) array_like, optional
    Initial velocities; default zero.
hold, velocity_given : sequence of int, optional
    Indices of coordinates held at ``q0`` / velocities given by ``v0`` when the state is made consistent.
configurations : dict, optional
    Named configurations {name: (n,)}.
source : str, optional
    Where the description came from.
nonholonomic : iterable, optional
    Dicts with keys "name", "psi" (callable Psi(q, t) -> (r, n)) and optionally "psi_t", "gamma",
    "rows", or prebuilt Pfaffian groups.

Returns
-------
Model
    The validated model.

Raises
------
ModelError
    If the mass matrix has the wrong shape, is not symmetric or has a negative eigenvalue, ``q0``/``v0``
    are not n finite numbers, an index in ``hold``/``velocity_given`` is out of range, a constraint is
    not a dict with "name" and "phi" (or "psi"), or row labels repeat.

Examples
--------
A 1 kg mass on a 4 N/m spring has one mode of omega = 2 rad/s, f = 1/pi = 0.31831 Hz:

>>> from multibody import matrix_system, modes
>>> model = matrix_system("oscillator", ["x"], mass=[[1.0]], forces=lambda q, v, t: -4.0 * q,
...                       potential=lambda q: 2.0 * q[0] ** 2, q0=[0.1])
>>> modes(model).frequencies_hz.round(5).tolist()
[0.31831]
"""})

attach(chain, {"serial_chain": """Parameters
----------
name : str
    Name of the model; the coordinates are "q1", ..., "qN" (rad).
lengths : sequence of float in m
    Link lengths L_k.
masses : sequence of float in kg
    Positive link masses.
inertias : sequence of float in kg m^2
    Positive moments of inertia about each link's centre of mass.
com : sequence of float in m, optional
    Distance of each centre of mass from the link's proximal joint; default L/2.
base_angle : float in rad, optional
    Angle of the first link at q = 0 from the global x-axis.
gravity : (2,) float in m/s^2, optional
    Default (0, -9.81).
q0 : (N,) array_like
    Initial joint angles.
v0 : (N,) array_like, optional
    Initial joint rates; default zero.
joint_forces : callable, optional
    ``joint_forces(q, v, t) -> (N,)``, generalized forces added to the chain's (e.g. joint torques, N m).
constraints : iterable, optional
    As for :func:`matrix_system`.
source : str, optional
    Where the description came from.

Returns
-------
Model
    The chain, with M(q) and h(q, v) from the closed forms above and the joints as drawing points.

Raises
------
ModelError
    If an array does not have N finite entries or a mass or inertia is not positive.

Examples
--------
One uniform link (L = 1 m, m = 1 kg, I = 1/12 kg m^2) about its end: M = m (L/2)^2 + I = 1/3 kg m^2;
a double pendulum's equilibrium hangs straight down, q = (-pi/2, 0).

>>> import numpy as np
>>> from multibody import equilibrium, serial_chain
>>> link = serial_chain("link", lengths=[1.0], masses=[1.0], inertias=[1 / 12], q0=[0.0])
>>> float(link.mass(link.q0)[0, 0] * 3)
1.0
>>> double = serial_chain("double", lengths=[1.0, 1.0], masses=[1.0, 1.0], inertias=[0.1, 0.1],
...                       q0=[-1.0, 0.3])
>>> eq = equilibrium(double)
>>> bool(np.allclose(eq.q, [-np.pi / 2, 0.0], atol=1e-8)), eq.stability
(True, 'stable')
"""})
