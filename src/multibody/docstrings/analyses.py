"""Sections of the engineering analyses: :func:`multibody.equilibrium`, :func:`multibody.linearize`,
:func:`multibody.modes` and the objects they return."""
from importlib import import_module

from . import attach

# by module path: a package attribute of the same name as a function could shadow the submodule
equilibrium = import_module("multibody.analysis.equilibrium")
linearize = import_module("multibody.analysis.linearize")

#: a 1 m pendulum with a 1 kg bob, guessed off its circle
_PENDULUM = """>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(0.3, -0.9))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0), length=1.0)
'rod'
>>> model = mb.build()"""
_STATE = """state : Equilibrium or tuple or None, optional
    An :class:`~multibody.analysis.equilibrium.Equilibrium`, a consistent state ``(q, v)`` or
    ``(q, v, t)``, or None (default) for :func:`equilibrium` from the model's initial configuration."""
_REFUSED = """MultibodyError
    If the configuration is singular (the tangent space changes dimension there, paper 000 Sect. 2.5),
    the model has nonholonomic rows, or no equilibrium is found (``state=None``)."""

attach(equilibrium, {"equilibrium": """Parameters
----------
model : Model
    The model (forces at v = 0, drivers frozen at ``t``).
q : (n,) array_like, optional
    The guess; default ``model.q0``.
t : float in s, optional
    Time at which drivers and forces are evaluated.
max_iterations : int, optional
    Newton iterations before giving up.

Returns
-------
Equilibrium
    q, the minimum-norm multipliers, stiffness eigenvalues and stability, joint reactions, which
    reactions are unique, driver efforts.

Raises
------
MultibodyError
    If no equilibrium is found in ``max_iterations`` iterations or no step lowers the imbalance (the
    forces may have none, e.g. a free body under gravity), or the equilibrium is at a singular
    configuration.

Examples
--------
A 1 kg bob on a 1 m rod pushed sideways by F = m g hangs at 45 degrees (tan(theta) = F / (m g)), and
the rod carries m g sqrt(2) = 13.873 N:

>>> from multibody import ModelBuilder, equilibrium
>>> mb = ModelBuilder("pushed pendulum", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(0.0, -1.0))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0))
'rod'
>>> mb.force("bob", lambda t, q, v: (9.81, 0.0), on=(0.0, 0.0))
>>> eq = equilibrium(mb.build())
>>> eq.q.round(6).tolist(), round(float(eq.lam[0]), 3), eq.stability
([0.707107, -0.707107], 13.873, 'stable')
"""})

attach(equilibrium.Equilibrium, {
    "": """Attributes
----------
model : Model
    The model.
t : float in s
    Time of the equilibrium.
q : (n,) ndarray
    The configuration.
lam : (m,) ndarray
    Minimum-norm multipliers (unique only where ``unique`` says so, paper 003).
iterations : int
    Newton iterations taken.
residual : float
    Final imbalance |T^T f| relative to the force scale.
stiffness_eigenvalues : (dof,) ndarray
    Eigenvalues of the reduced stiffness T^T K T (N/m, N m/rad).
stability : {"stable", "unstable", "neutral"}
    From the signs of those eigenvalues.
reactions : dict
    Joint reaction components (N, N m) by label, e.g. "rod.on_ground.Fx".
unique : dict
    Pair name -> whether its reaction is unique (paper 003 eqs 21-27).
""",
    "stable": "True when every reduced-stiffness eigenvalue is positive (a strict minimum of the potential).",
    "to_dict": """A JSON-ready summary (what ``multibody equilibrium --json`` prints).

Returns
-------
dict
    model, t, q by name, stability, stiffness eigenvalues, driver efforts, multipliers and reactions by
    label, which reactions are unique, residual, iterations.

Examples
--------
The rod of a hanging 1 kg pendulum carries m g = 9.81 N:

{_PENDULUM}
>>> from multibody import equilibrium
>>> facts = equilibrium(model).to_dict()
>>> facts["stability"], round(facts["multipliers"]["rod.length"], 9)
('stable', 9.81)
""".replace("{_PENDULUM}", _PENDULUM),
})

attach(linearize, {
    "linearize": f"""Parameters
----------
model : Model
    The model.
{_STATE}
inputs : sequence of str, optional
    Driver names or row labels (the driver becomes an actuator of effort u, N or N m) and coordinate
    names (a generalized force on that coordinate).
outputs : sequence of str, optional
    ``"q:NAME"`` (or ``"NAME"``) and ``"v:NAME"`` labels; default every coordinate and rate.

Returns
-------
Linearization
    M, C, K, B in the tangent coordinates z (q = q* + T z), the basis T and the output matrix.

Raises
------
{_REFUSED}
    Also for an unknown input or output.

Examples
--------
A pendulum of length L about its hanging equilibrium: M_r = m, K_r = m g / L.

{_PENDULUM}
>>> from multibody import linearize
>>> lin = linearize(model)
>>> lin.M.round(9).tolist(), lin.K.round(9).tolist()
([[1.0]], [[9.81]])
""",
    "modes": f"""Parameters
----------
model : Model
    The model.
{_STATE}

Returns
-------
Modes
    Frequencies in Hz (ascending; 0 neutral, NaN unstable), damping ratios and shapes (n, k).

Raises
------
{_REFUSED}

Examples
--------
A 1 m pendulum swings at sqrt(g / L) / (2 pi) = 0.49849 Hz:

{_PENDULUM}
>>> from multibody import modes
>>> modes(model).frequencies_hz.round(5).tolist()
[0.49849]
""",
})

attach(linearize.Linearization, {
    "": """Returned by :func:`linearize`.

Attributes
----------
T : (n, d) ndarray
    Orthonormal basis of the tangent space at q*.
M : (d, d) ndarray
    Reduced mass matrix T^T M T.
C : (d, d) ndarray
    Reduced damping matrix.
K : (d, d) ndarray
    Reduced stiffness matrix.
coordinate_names : tuple of str
    Names of the n redundant coordinates.
B : (d, inputs) ndarray
    Input matrix (None without inputs).
input_labels : tuple of str
    The inputs.
Cy : (outputs, 2 d) ndarray
    Output matrix on (z, z').
output_labels : tuple of str
    The outputs, "q:NAME" / "v:NAME".
q : (n,) ndarray
    The linearisation point's coordinates.
v : (n,) ndarray
    Its velocities.
t : float in s
    Its time.
""",
    "state_space": f"""The state-space matrices of x = (z, z').

Returns
-------
A : (2 d, 2 d) ndarray
B : (2 d, inputs) ndarray
C : (outputs, 2 d) ndarray
D : (outputs, inputs) ndarray

Examples
--------
{_PENDULUM}
>>> from multibody import linearize
>>> A, B, C, D = linearize(model).state_space()
>>> A.round(9).tolist()
[[0.0, 1.0], [-9.81, 0.0]]
""",
    "to_control": """Returns
-------
control.StateSpace
    With named inputs, outputs and states z0, ..., z0', ...

Raises
------
MultibodyError
    If python-control is not installed.
""",
})

attach(linearize.Modes, {
    "": """Returned by :func:`modes`.

Attributes
----------
frequencies_hz : (k,) ndarray
    Natural frequencies in Hz, ascending (0: neutral freedom; NaN: unstable).
damping_ratios : (k,) ndarray
    Modal damping ratios.
shapes : (n, k) ndarray
    Mode shapes in the redundant coordinates, largest entry 1.
coordinate_names : tuple of str
    Names of the n coordinates.
""",
    "to_dict": """Returns
-------
dict
    frequencies_hz and damping_ratios as lists (None for NaN), shapes as {coordinate: value} dicts.

Examples
--------
{_PENDULUM}
>>> from multibody import modes
>>> sorted(modes(model).to_dict())
['damping_ratios', 'frequencies_hz', 'shapes']
""".replace("{_PENDULUM}", _PENDULUM),
})
