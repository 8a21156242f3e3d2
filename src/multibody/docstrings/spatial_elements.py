"""Sections of :class:`multibody.SpatialModelBuilder`: force elements, drivers, user constraints, held
coordinates and :meth:`~multibody.SpatialModelBuilder.build`."""
from ..model.director_builder import SpatialModelBuilder
from . import attach

_NAME_TAKEN = "If the name is empty or already used by another element"
_PENDULUM = """>>> from multibody import SpatialModelBuilder
>>> sb = SpatialModelBuilder("pendulum")
>>> sb.add_body("rod", mass=2.0, inertia=(0.1, 0.1, 0.01), position=(0.5, 0.0, 0.0))
'rod'
>>> sb.revolute("R", "ground", "rod", point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))"""
_USER = """Returns
-------
str
    ``name``.

Raises
------
ModelError
    {taken}, or ``{fun}`` is not callable."""

attach(SpatialModelBuilder, {
    "spring_damper": f"""Parameters
----------
name : str
    Name of the element.
body1, body2 : str or None
    The two bodies (None or "ground" for the fixed frame), not the same.
point1, point2 : (3,) float in m
    The attachment points on body1 and body2, global at the initial configuration.
stiffness : float in N/m
    Spring constant k.
damping : float in N s/m, optional
    Damping coefficient.
free_length : float in m, optional
    Free length l0; default the initial distance of the points.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    {_NAME_TAKEN}, a body is unknown or both ends are on the same body.

Examples
--------
A 1 kg box on a vertical guide hanging from a spring (k = 50 N/m, l0 = 1 m) rests at
z = -l0 - m g / k = -1.1962 m:

>>> from multibody import SpatialModelBuilder, equilibrium
>>> sb = SpatialModelBuilder("bouncer")
>>> sb.add_body("box", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, -1.0))
'box'
>>> sb.prismatic("guide", "ground", "box", point=(0.0, 0.0, -1.0), axis=(0.0, 0.0, 1.0))
>>> sb.spring_damper("spring", "ground", "box", point1=(0, 0, 0), point2=(0, 0, -1.0), stiffness=50.0)
'spring'
>>> sb.gravity()
>>> eq = equilibrium(sb.build())
>>> round(float(eq.q[2]), 4), eq.stability
(-1.1962, 'stable')
""",
    "rotational_spring_damper": f"""Parameters
----------
name : str
    Name of the element.
joint : str
    A revolute (R) or cylindrical (C) pair added before.
stiffness : float in N m/rad
    Torsion spring constant k.
damping : float in N m s/rad, optional
    Damping coefficient c.
free_angle : float in rad, optional
    The angle of zero torque, measured from the initial configuration.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If there is no such joint, it is not an R or C pair, or the name is empty or taken.

Examples
--------
A 2 kg rod hinged at one end (centre of mass r = 0.5 m out) on a horizontal axis, held up by a torsion
spring k = 100 N m/rad: at equilibrium k theta = m g r cos(theta).

>>> import numpy as np
>>> from multibody import equilibrium
{_PENDULUM}
>>> sb.gravity()
>>> sb.rotational_spring_damper("spring", "R", stiffness=100.0)
'spring'
>>> eq = equilibrium(sb.build())
>>> theta = np.arcsin(-eq.q[2] / 0.5)          # the centre of mass sinks to z = -r sin(theta)
>>> bool(abs(100.0 * theta - 2.0 * 9.81 * 0.5 * np.cos(theta)) < 1e-6), eq.stability
(True, 'stable')
""",
    "driver": f"""Parameters
----------
joint : str
    An R, C or P pair added before.
motion : Motion
    The prescribed coordinate f(t): an angle in rad or a slide in m.
coordinate : {{"theta", "u"}}, optional
    The driven coordinate; required for a C pair (R pairs drive theta, P pairs u).
name : str, optional
    Name of the driver; default "<joint>-driver".

Returns
-------
str
    The driver's name.

Raises
------
ModelError
    If the joint is unknown or not an R, C or P pair, the coordinate does not fit the pair, ``motion`` is
    not a :class:`Motion`, or the name is taken.

Examples
--------
A driven revolute pair leaves no degree of freedom:

>>> from multibody import Motion, consistent_state, evaluate, pivoted_qr
{_PENDULUM}
>>> sb.driver("R", Motion.constant_rate(0.0, 1.0))
'R-driver'
>>> model = sb.build()
>>> model.constraint_labels[-1]
'R-driver.theta'
>>> q, v = consistent_state(model)
>>> model.n - pivoted_qr(evaluate(model, 0.0, q, v).A).rank
0
""",
    "force": f"""Parameters
----------
body : str
    The body the force acts on (not the ground).
fun : callable
    ``fun(t, q, v) -> (3,)``, the force in N, global components.
point : (3,) float in m, optional
    The point of application, global at the initial configuration (fixed in the body); default the
    centre of mass.
name : str, optional
    Name of the element; default "force-<k>".

Returns
-------
str
    The element's name.

Raises
------
ModelError
    {_NAME_TAKEN}, or the body is unknown or the ground.

Examples
--------
>>> from multibody import SpatialModelBuilder, evaluate
>>> sb = SpatialModelBuilder("pushed")
>>> sb.add_body("box", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
'box'
>>> sb.force("box", lambda t, q, v: (1.0, 0.0, 0.0))
'force-0'
>>> model = sb.build()
>>> evaluate(model, 0.0, model.q0, model.v0).f[:3].tolist()
[1.0, 0.0, 0.0]
""",
    "torque": f"""Parameters
----------
body : str
    The body the torque acts on (not the ground).
fun : callable
    ``fun(t, q, v) -> (3,)``, the torque in N m, global components.
name : str, optional
    Name of the element; default "torque-<k>".

Returns
-------
str
    The element's name.

Raises
------
ModelError
    {_NAME_TAKEN}, or the body is unknown or the ground.

Examples
--------
A torque (0, 0, 1) N m on a body with d1 = e_x, d2 = e_y: 1/2 tau x d_1 = (0, 0.5, 0) on d1 and
1/2 tau x d_2 = (-0.5, 0, 0) on d2.

>>> from multibody import SpatialModelBuilder, evaluate
>>> sb = SpatialModelBuilder("turned")
>>> sb.add_body("box", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
'box'
>>> sb.torque("box", lambda t, q, v: (0.0, 0.0, 1.0))
'torque-0'
>>> model = sb.build()
>>> evaluate(model, 0.0, model.q0, model.v0).f[3:9].round(12).tolist()
[0.0, 0.5, 0.0, -0.5, 0.0, 0.0]
""",
    "constraint": """Parameters
----------
name : str
    Constraint name; rows "name.0", "name.1", ...
phi : callable
    ``phi(q, t) -> (r,)`` on the model's coordinates (12 per body, in ``Model.coordinate_names`` order).
jacobian : callable, optional
    ``jacobian(q, t) -> (r, n)``; default by complex step.
phi_t : callable, optional
    ``phi_t(q, t) -> (r,)``.
gamma : callable, optional
    ``gamma(q, v, t) -> (r,)``.
rows : int, optional
    Number of rows; default the size of ``phi(0, 0)``.
extended : callable, optional
    ``extended(q, v, t)`` with q, v double-doubles (pairs (hi, lo) of (n,) float arrays; v None for Phi) ->
    Phi or Phi_q v + Phi_t as a double-double pair of (r,) arrays (multibody.linalg.double_double), for the
    extended-precision polish next to a singular configuration; without it these rows stay in double there.

""" + _USER.format(taken=_NAME_TAKEN, fun="phi") + """

Examples
--------
A body whose centre of mass stays at height z = 0:

>>> from multibody import SpatialModelBuilder
>>> sb = SpatialModelBuilder("on the floor")
>>> sb.add_body("puck", mass=1.0, inertia=(0.1, 0.1, 0.2), position=(0.0, 0.0, 0.0))
'puck'
>>> sb.constraint("floor", lambda q, t: q[2])
'floor'
>>> sb.build().constraint_labels[-1]
'floor.0'
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
    ``gamma(q, v, t) -> (r,)``; default by complex step.
rows : int, optional
    Number of rows; default from the shape of ``psi``.

""" + _USER.format(taken=_NAME_TAKEN, fun="psi"),
    "hold": """Parameters
----------
*coordinates : str
    Coordinate names ("body.x", "body.d3z", ...), checked by :meth:`build`.
""",
    "build": """Freeze the bodies, pairs and elements into an immutable :class:`Model` (12 coordinates per body).

Returns
-------
Model
    Constant mass matrix (paper 004 eq. 23), one rigid-body group (eq. 24), one group per pair kind
    (Sect. 4.5), gravity and the force elements; the initial data as given.

Raises
------
ModelError
    If there are no bodies or a held coordinate is unknown (and for invalid user constraints).

Examples
--------
>>> from multibody import SpatialModelBuilder
>>> SpatialModelBuilder("empty").build()
Traceback (most recent call last):
...
multibody.errors.ModelError: model 'empty' has no bodies.
""",
})
