"""Sections of :class:`multibody.SpatialModelBuilder`: the class, bodies, lower pairs and gravity."""
from ..model.director_builder import SpatialModelBuilder
from . import attach

_PAIR = """name : str
    Joint name; its rows are labelled "name.<row>".
body1 : str or None
    The parent body, None or "ground" for the fixed frame.
body2 : str
    The child body (list joints parent -> child)."""
_AXIS = """axis : (3,) float
    The pair's axis n (global, at the initial configuration; normalised)."""
_POINT2 = """point2 : (3,) float in m, optional
    The child's point when it differs from ``point``, global at the initial configuration."""
_RAISES = """Raises
------
ModelError
    If the name is taken, a body is unknown, ``body2`` is the ground or the axis is zero."""


def _dof(kind, rows, dof, extra="", call=None):
    """An example: one body jointed to the ground by this pair keeps ``dof`` of its 6 freedoms."""
    call = call or f'{kind}("J", "ground", "rod", point=(0.0, 0.0, 0.0){extra})'
    return f"""A rod jointed to the ground by this pair keeps {dof} of its 6 freedoms:

>>> from multibody import SpatialModelBuilder, consistent_state, evaluate, pivoted_qr
>>> sb = SpatialModelBuilder("{kind}")
>>> sb.add_body("rod", mass=1.0, inertia=(0.1, 0.1, 0.01), position=(0.0, 0.0, -0.5))
'rod'
>>> sb.{call}
>>> model = sb.build()
>>> model.m - 6, model.constraint_labels[6:]      # after the 6 rigid-body rows
({rows[0]}, {rows[1]})
>>> q, v = consistent_state(model)
>>> model.n - pivoted_qr(evaluate(model, 0.0, q, v).A).rank        # degrees of freedom
{dof}"""


attach(SpatialModelBuilder, {
    "": """Each body has 12 coordinates, the centre of mass phi and the directors d1, d2, d3 (its body-fixed
frame in global components): "name.x", "name.y", "name.z", "name.d1x", ..., "name.d3z" (paper 004
Sect. 2), with 6 internal rows d_i . d_j = delta_ij labelled "name.rigid.d1d1", ... (eq. 24).

Parameters
----------
name : str
    Name of the model.
source : str, optional
    Where the description came from (a model file's path); kept as ``Model.source``.

See Also
--------
ModelBuilder : planar bodies.

Examples
--------
A spherical pendulum: 12 coordinates, 6 + 3 rows, 3 degrees of freedom.

>>> from multibody import SpatialModelBuilder
>>> sb = SpatialModelBuilder("spherical pendulum")
>>> sb.add_body("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.0, 0.0, -1.0))
'bob'
>>> sb.spherical("S", "ground", "bob", point=(0.0, 0.0, 0.0))
>>> sb.gravity()
>>> model = sb.build()
>>> model.n, model.m
(12, 9)
""",
    "add_body": """Parameters
----------
name : str
    Body name (not "ground").
mass : float in kg
    Positive mass.
inertia : (3,) or (3, 3) float in kg m^2
    Principal moments of inertia about the centre of mass (with ``directors``), or the inertia tensor in
    global components, whose principal frame becomes the directors. The principal values must satisfy
    the triangle inequality J_i <= J_j + J_k (at most one equality: a flat body).
position : (3,) float in m
    Initial centre of mass.
directors : (3, 3) float, optional
    Columns d1, d2, d3 of a right-handed orthonormal frame, the principal axes of ``inertia`` (3,);
    default the global axes.
velocity : (3,) float in m/s, optional
    Initial velocity of the centre of mass.
omega : (3,) float in rad/s, optional
    Initial angular velocity (global components); the directors' rates are omega x d_i.
outline : (k, 3) array_like in m, optional
    Global points at the initial configuration, drawn by the 3-D figures.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the name is taken or "ground", the mass is not positive, the inertia has another shape or violates
    the triangle inequality, or the directors are not a right-handed orthonormal frame.

Examples
--------
The mass matrix is constant (paper 004 eq. 23): m for the centre of mass and the Euler tensor
E_i = (J_j + J_k - J_i) / 2 for the directors (eq. 158), here (0.005, 0.005, 0.095) kg m^2.

>>> from multibody import SpatialModelBuilder
>>> sb = SpatialModelBuilder("rod")
>>> sb.add_body("rod", mass=2.0, inertia=(0.1, 0.1, 0.01), position=(0.0, 0.0, 0.0))
'rod'
>>> model = sb.build()
>>> model.mass(model.q0).diagonal()[[0, 3, 6, 9]].round(12).tolist()
[2.0, 0.005, 0.005, 0.095]
""",
    "joint": f"""Parameters
----------
kind : {{"S", "R", "C", "P", "E"}}
    Spherical (3 rows), revolute (5), cylindrical (4), prismatic (5) or planar (3) pair.
{_PAIR}
point : (3,) float in m
    The joint point, global at the initial configuration.
point2 : (3,) float in m, optional
    The child's point when it differs (C, P, E pairs).
axis : (3,) float, optional
    The axis n^1, global at the initial configuration; default (0, 0, 1).

{_RAISES}
    Also if ``kind`` is not one of the five.

Examples
--------
{_dof("joint", ("5", "('J.x', 'J.y', 'J.z', 'J.axis1', 'J.axis2')"), 1,
       call='joint("R", "J", "ground", "rod", point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))')}
""",
    "spherical": f"""Parameters
----------
{_PAIR}
point : (3,) float in m
    The common point, global at the initial configuration.

{_RAISES}

Examples
--------
{_dof("spherical", ("3", "('J.x', 'J.y', 'J.z')"), 3)}
""",
    "revolute": f"""Parameters
----------
{_PAIR}
point : (3,) float in m
    A point of the axis, global at the initial configuration.
{_AXIS}

{_RAISES}

Examples
--------
{_dof("revolute", ("5", "('J.x', 'J.y', 'J.z', 'J.axis1', 'J.axis2')"), 1, ", axis=(0.0, 1.0, 0.0)")}
""",
    "cylindrical": f"""Parameters
----------
{_PAIR}
point : (3,) float in m
    A point of the axis, global at the initial configuration.
{_AXIS}
{_POINT2}

{_RAISES}

Examples
--------
{_dof("cylindrical", ("4", "('J.m1', 'J.m2', 'J.axis1', 'J.axis2')"), 2, ", axis=(0.0, 0.0, 1.0)")}
""",
    "prismatic": f"""Parameters
----------
{_PAIR}
point : (3,) float in m
    A point of the line of sliding, global at the initial configuration.
{_AXIS}
{_POINT2}

{_RAISES}

Examples
--------
{_dof("prismatic", ("5", "('J.m1', 'J.m2', 'J.d12', 'J.d23', 'J.d31')"), 1, ", axis=(0.0, 0.0, 1.0)")}
""",
    "planar": f"""Parameters
----------
{_PAIR}
point : (3,) float in m
    A point of the plane, global at the initial configuration.
axis : (3,) float
    The plane's normal n (global, at the initial configuration; normalised).
{_POINT2}

{_RAISES}

Examples
--------
{_dof("planar", ("3", "('J.n', 'J.axis1', 'J.axis2')"), 3, ", axis=(0.0, 0.0, 1.0)")}
""",
    "gravity": """Parameters
----------
g : float in m/s^2, optional
    Magnitude; default 9.81.
direction : (3,) float, optional
    Direction (normalised); default (0, 0, -1).

Raises
------
ModelError
    If the direction is zero or not finite.

Examples
--------
The generalized force on the centre of mass of a 2 kg body is m g = (0, 0, -19.62) N:

>>> from multibody import SpatialModelBuilder, evaluate
>>> sb = SpatialModelBuilder("falling")
>>> sb.add_body("box", mass=2.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0))
'box'
>>> sb.gravity()
>>> model = sb.build()
>>> evaluate(model, 0.0, model.q0, model.v0).f[:3].round(12).tolist()
[0.0, 0.0, -19.62]
""",
})
