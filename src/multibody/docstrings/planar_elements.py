"""Sections of :class:`multibody.ModelBuilder`: drivers of coordinates, user and nonholonomic constraints,
force elements, initial data and :meth:`~multibody.ModelBuilder.build`."""
from ..model.builder import ModelBuilder
from . import attach

attach(ModelBuilder, {
    "drive_coordinate": """Parameters
----------
coordinate : str
    A coordinate of the model, "body.x", "body.y" (m) or "body.theta" (rad); checked by :meth:`build`.
motion : Motion
    The prescribed value f(t) with its derivatives.
name : str, optional
    Name of the driver; default "<coordinate>-driver". Its row is "name.value".

Returns
-------
str
    The driver's name.

Raises
------
ModelError
    If ``motion`` is not a :class:`Motion` (an unknown coordinate is refused by :meth:`build`).

Examples
--------
>>> from multibody import ModelBuilder, Motion
>>> mb = ModelBuilder("cart")
>>> mb.add_point_mass("cart", mass=1.0)
'cart'
>>> mb.drive_coordinate("cart.x", Motion.harmonic(0.1, 2.0))
'cart.x-driver'
>>> mb.build().constraint_labels
('cart.x-driver.value',)
""",
    "constraint": """Parameters
----------
name : str
    Constraint name; its rows are "name.0", "name.1", ...
phi : callable
    ``phi(q, t) -> (r,)`` on the model's n coordinates (in the order of ``Model.coordinate_names``).
jacobian : callable, optional
    ``jacobian(q, t) -> (r, n)``; default by complex-step differentiation of ``phi``.
phi_t : callable, optional
    ``phi_t(q, t) -> (r,)``, the partial time derivative.
gamma : callable, optional
    ``gamma(q, v, t) -> (r,)``, the right-hand side of A q'' = gamma.
rows : int, optional
    Number of rows r; default the size of ``phi(0, 0)``.
extended : callable, optional
    ``extended(q, v, t)`` with q, v double-doubles (pairs (hi, lo) of (n,) float arrays; v None for Phi) ->
    Phi or Phi_q v + Phi_t as a double-double pair of (r,) arrays (multibody.linalg.double_double), for the
    extended-precision polish next to a singular configuration; without it these rows stay in double there.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If ``phi`` is not callable.

Examples
--------
A point mass kept on the unit circle x^2 + y^2 = 1:

>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("circle")
>>> mb.add_point_mass("p", mass=1.0, position=(1.0, 0.0))
'p'
>>> mb.constraint("circle", lambda q, t: q[0] ** 2 + q[1] ** 2 - 1.0)
'circle'
>>> mb.build().constraint_labels
('circle.0',)
""",
    "knife_edge": """Parameters
----------
name : str
    Constraint name; one nonholonomic row "name.normal".
body : str
    A planar rigid body (not a point mass, not the ground).
direction : (2,) float
    The allowed direction of motion of the contact point, global at the initial configuration.
at : (2,) float in m, optional
    The contact point as a global point; or
on : (2,) float in m, optional
    in body-fixed coordinates (exactly one of the two).

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the name is taken, the body is unknown or not a planar rigid body, the direction is zero, or
    the point is not given exactly once.

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("sled")
>>> mb.add_body("sled", mass=1.0, inertia=0.1)
'sled'
>>> mb.knife_edge("blade", "sled", direction=(1.0, 0.0), on=(0.0, 0.0))
'blade'
>>> model = mb.build()
>>> model.m, model.h, model.velocity_labels
(0, 1, ('blade.normal',))
""",
    "pfaffian": """Parameters
----------
name : str
    Constraint name; rows "name.0", "name.1", ...
psi : callable
    ``psi(q, t) -> (r, n)``, the matrix Psi.
psi_t : callable, optional
    ``psi_t(q, t) -> (r,)``; default zero.
gamma : callable, optional
    ``gamma(q, v, t) -> (r,)``; default by complex-step differentiation.
rows : int, optional
    Number of rows r; default from the shape of ``psi``.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If ``psi`` is not callable or a nonholonomic constraint of that name exists.

Examples
--------
>>> import numpy as np
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("skate")
>>> mb.add_body("skate", mass=1.0, inertia=0.1)
'skate'
>>> mb.pfaffian("no-slip", lambda q, t: np.array([[-np.sin(q[2]), np.cos(q[2]), 0.0]]))
'no-slip'
>>> mb.build().h
1
""",
    "spring_damper": """Parameters
----------
name : str
    Name of the element.
a, b : str
    The two bodies ("ground" for the fixed frame).
stiffness : float in N/m
    Non-negative spring constant k.
damping : float in N s/m, optional
    Non-negative damping coefficient.
free_length : float in m, optional
    Non-negative free length l0; default the initial distance of the points.
on_a, on_b : (2,) float in m, optional
    The attachment points in body-fixed coordinates; or
at_a, at_b : (2,) float in m, optional
    as global points of the initial configuration (each point given exactly once).

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the name is taken, a body is unknown, ``a`` is ``b``, a point is not given exactly once, or the
    stiffness, damping or free length is negative.

Examples
--------
A 2 kg block on a vertical slide hanging from a spring (k = 100 N/m, l0 = 1 m): the equilibrium is
y = -l0 - m g / k = -1.1962 m.

>>> from multibody import ModelBuilder, equilibrium
>>> mb = ModelBuilder("hanging", gravity=(0.0, -9.81))
>>> mb.add_body("block", mass=2.0, inertia=0.1, position=(0.0, -1.0))
'block'
>>> mb.prismatic("guide", "ground", "block", axis=(0.0, 1.0), at=(0.0, -1.0))
'guide'
>>> mb.spring_damper("spring", "ground", "block", stiffness=100.0, on_a=(0.0, 0.0), on_b=(0.0, 0.0))
'spring'
>>> eq = equilibrium(mb.build())
>>> print(f"{eq.q[1]:.4f} {eq.stability}")
-1.1962 stable
""",
    "force": """Parameters
----------
body : str
    The body the force acts on.
fun : callable
    ``fun(t, q, v) -> (fx, fy)`` in N, global frame.
on : (2,) float in m, optional
    The point of application in body-fixed coordinates; or
at : (2,) float in m, optional
    as a global point of the initial configuration (exactly one of the two).

Raises
------
ModelError
    If the body is unknown or the point is not given exactly once.

Examples
--------
>>> from multibody import ModelBuilder, evaluate
>>> mb = ModelBuilder("pushed")
>>> mb.add_point_mass("p", mass=1.0)
'p'
>>> mb.force("p", lambda t, q, v: (3.0, 0.0), on=(0.0, 0.0))
>>> model = mb.build()
>>> evaluate(model, 0.0, model.q0, model.v0).f.tolist()
[3.0, 0.0]
""",
    "torque": """Parameters
----------
body : str
    A planar rigid body.
fun : callable
    ``fun(t, q, v) -> float``, the torque in N m (counter-clockwise positive).

Raises
------
ModelError
    If the body is unknown or a point mass.

Examples
--------
>>> from multibody import ModelBuilder, evaluate
>>> mb = ModelBuilder("turned")
>>> mb.add_body("wheel", mass=1.0, inertia=0.1)
'wheel'
>>> mb.torque("wheel", lambda t, q, v: 2.0)
>>> model = mb.build()
>>> evaluate(model, 0.0, model.q0, model.v0).f.tolist()
[0.0, 0.0, 2.0]
""",
    "hold": """Parameters
----------
*coordinates : str
    Coordinate names ("body.x", "body.y", "body.theta"), checked by :meth:`build`.

Examples
--------
The bob of a 1 m pendulum guessed at (0.9, -0.3): holding x leaves y = -sqrt(1 - 0.81) = -0.43589.

>>> from multibody import ModelBuilder, consistent_state
>>> mb = ModelBuilder("pendulum")
>>> mb.add_point_mass("bob", mass=1.0, position=(0.9, -0.3))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0), length=1.0)
'rod'
>>> mb.hold("bob.x")
>>> q, v = consistent_state(mb.build())
>>> print(f"{q[0]:.5f} {q[1]:.5f}")
0.90000 -0.43589
""",
    "set_velocity": """Parameters
----------
coordinate : str
    "body.x", "body.y" (m/s) or "body.theta" (rad/s).
value : float
    The initial velocity.

Raises
------
ModelError
    If the coordinate is not one of the builder's or the value is not finite.

Examples
--------
A pendulum bob at (0, -1) given x' = 2 m/s: the rod leaves y' = 0.

>>> from multibody import ModelBuilder, consistent_state
>>> mb = ModelBuilder("pendulum")
>>> mb.add_point_mass("bob", mass=1.0, position=(0.0, -1.0))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0))
'rod'
>>> mb.set_velocity("bob.x", 2.0)
>>> q, v = consistent_state(mb.build())
>>> v.round(12).tolist()
[2.0, 0.0]
""",
    "add_configuration": """Parameters
----------
name : str
    Name of the configuration (``Model.configuration(name)``).
poses : dict
    ``{body: (x, y, theta)}`` in m and rad for every movable body (a point mass takes (x, y)).

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum")
>>> mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
'bob'
>>> mb.add_configuration("down", {"bob": (0.0, -1.0, 0.0)})
>>> mb.build().configuration("down").tolist()
[0.0, -1.0]
""",
    "build": """Validate and freeze everything added into an immutable :class:`Model`.

The initial positions stay the guesses given; :func:`consistent_state` (and every run) assembles them.

Returns
-------
Model
    The model: coordinates, one constraint group per joint type, force elements and initial data.

Raises
------
ModelError
    If there are no bodies, a driven or held coordinate is unknown, a named configuration misses a body,
    a joint point on a point mass is not its centre, or the mass matrix is not positive.

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("empty")
>>> mb.build()
Traceback (most recent call last):
...
multibody.errors.ModelError: Model 'empty' has no bodies: add one with add_body, add_bar or add_point_mass.
""",
})
