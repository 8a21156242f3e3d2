"""Sections of :class:`multibody.ModelBuilder`: the class, bodies, joints and joint drivers."""
from ..model.builder import ModelBuilder
from . import attach

_POINTS = """at : (2,) float in m, optional
    The joint point as one global point of the initial (guessed) configuration; or
on_a, on_b : (2,) float in m, optional
    the joint point in body-fixed coordinates of ``a`` and of ``b`` (from the centre of mass, body x-axis
    first). Give ``at`` or both ``on_a`` and ``on_b``."""
_JOINT_RAISES = """ModelError
    If the joint name is taken, a body is unknown, ``a`` and ``b`` are the same body, or the joint point is
    not given exactly once."""
_NAME = """str
    The joint's name (its rows are labelled "name.component")."""

attach(ModelBuilder, {
    "": """Parameters
----------
name : str
    Name of the model (named in every error message and in result files).
gravity : (2,) float in m/s^2, optional
    Gravitational acceleration in the global frame, e.g. ``(0, -9.81)``; default (0, 0), no gravity.
source : str, optional
    Where the description came from (a model file's path); kept as ``Model.source``.

Raises
------
ModelError
    If ``gravity`` is not two finite numbers.

See Also
--------
SpatialModelBuilder : spatial rigid bodies in director coordinates.
matrix_system : a system given by M(q) and h(q, v, t).

Examples
--------
A pendulum of length 1 m: two coordinates, one constraint row, one degree of freedom.

>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum", gravity=(0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0, 0), on_b=(0, 0))
'rod'
>>> model = mb.build()
>>> model.n, model.m, model.constraint_labels
(2, 1, ('rod.length',))
""",
    "add_body": """Parameters
----------
name : str
    Body name; its coordinates are "name.x", "name.y", "name.theta".
mass : float in kg
    Positive mass.
inertia : float in kg m^2
    Positive moment of inertia about the centre of mass.
position : (2,) float in m, optional
    Initial centre of mass (a guess when joints close loops); default the origin.
angle : float in rad, optional
    Initial angle of the body-fixed x-axis from the global x-axis.
velocity : (2,) float in m/s, optional
    Initial velocity of the centre of mass.
angular_velocity : float in rad/s, optional
    Initial angular velocity.
outline : (k, 2) array_like in m, optional
    Body-fixed points drawn as a polyline in figures.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the name is empty or taken, the mass or inertia is not a positive finite number, or a pose or
    velocity entry is not finite.

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("disk")
>>> mb.add_body("disk", mass=2.0, inertia=0.01, position=(0.5, 0.0))
'disk'
>>> mb.build().coordinate_names
('disk.x', 'disk.y', 'disk.theta')
""",
    "add_bar": """Parameters
----------
name : str
    Body name.
length : float in m
    Positive length; the bar's ends are at body-fixed x = -length/2 and +length/2.
mass : float in kg
    Positive mass.
position : (2,) float in m
    Initial centre (the middle of the bar).
angle : float in rad
    Initial angle of the bar from the global x-axis.
velocity : (2,) float in m/s, optional
    Initial velocity of the centre.
angular_velocity : float in rad/s, optional
    Initial angular velocity.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the length or mass is not positive and finite, or their inertia overflows.

Examples
--------
A 0.6 m bar of 2 kg has the moment of inertia m L^2 / 12 = 0.06 kg m^2:

>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("bar")
>>> mb.add_bar("rod", length=0.6, mass=2.0, position=(0.0, 0.0), angle=0.0)
'rod'
>>> model = mb.build()
>>> round(float(model.mass(model.q0)[2, 2]), 12)
0.06
""",
    "add_point_mass": """A point mass: coordinates "name.x", "name.y" only (no orientation).

Parameters
----------
name : str
    Body name.
mass : float in kg
    Positive mass.
position : (2,) float in m, optional
    Initial position.
velocity : (2,) float in m/s, optional
    Initial velocity.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the name is empty or taken, or the mass is not positive and finite.

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("bob", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
'bob'
>>> mb.build().coordinate_names
('bob.x', 'bob.y')
""",
    "revolute": f"""Parameters
----------
name : str
    Joint name; rows "name.x", "name.y".
a, b : str
    The two bodies ("ground" for the fixed frame).
{_POINTS}

Returns
-------
{_NAME}

Raises
------
{_JOINT_RAISES}

Examples
--------
A pendulum hinged at the origin; its bar's left end is the pin:

>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum", gravity=(0.0, -9.81))
>>> mb.add_bar("bar", length=1.0, mass=1.0, position=(0.5, 0.0), angle=0.0)
'bar'
>>> mb.revolute("O", "ground", "bar", at=(0.0, 0.0))
'O'
>>> mb.build().constraint_labels
('O.x', 'O.y')
""",
    "weld": f"""Parameters
----------
name : str
    Joint name; rows "name.x", "name.y", "name.angle".
a, b : str
    The two bodies ("ground" for the fixed frame); neither may be a point mass.
{_POINTS}

Returns
-------
{_NAME}

Raises
------
{_JOINT_RAISES}
    Also if ``a`` or ``b`` is a point mass (no orientation to constrain).

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("welded")
>>> mb.add_bar("bar", length=1.0, mass=1.0, position=(0.5, 0.0), angle=0.0)
'bar'
>>> mb.weld("W", "ground", "bar", at=(0.0, 0.0))
'W'
>>> model = mb.build()
>>> model.m, model.n
(3, 3)
""",
    "prismatic": f"""Parameters
----------
name : str
    Joint name; rows "name.angle" (constant relative angle) and "name.normal" (no motion across the axis).
a, b : str
    The two bodies ("ground" for the fixed frame); neither may be a point mass.
axis : (2,) float
    Direction of sliding in the global frame at the initial configuration (normalised; fixed in ``a``).
{_POINTS}

Returns
-------
{_NAME}

Raises
------
{_JOINT_RAISES}
    Also if the axis is zero or not finite, or ``a`` or ``b`` is a point mass.

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("slider")
>>> mb.add_body("slider", mass=0.5, inertia=1e-3, position=(0.7, 0.0))
'slider'
>>> mb.prismatic("P", "ground", "slider", axis=(1.0, 0.0), at=(0.7, 0.0))
'P'
>>> mb.build().constraint_labels
('P.angle', 'P.normal')
""",
    "distance": """Parameters
----------
name : str
    Joint name; one row "name.length".
a, b : str
    The two bodies ("ground" for the fixed frame).
on_a, on_b : (2,) float in m, optional
    The rod's ends in body-fixed coordinates of ``a`` and ``b``; or
at_a, at_b : (2,) float in m, optional
    the ends as global points of the initial configuration (each end given exactly once).
length : float in m, optional
    Positive rod length; default the initial distance of the two points.

Returns
-------
str
    ``name``.

Raises
------
ModelError
    If the name is taken, a body is unknown, ``a`` is ``b``, an end is not given exactly once, or the
    length is not positive.

Examples
--------
>>> from multibody import ModelBuilder
>>> mb = ModelBuilder("pendulum", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(0.6, -0.8))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0))
'rod'
>>> model = mb.build()
>>> model.constraint_labels
('rod.length',)
""",
    "driver": """Parameters
----------
joint : str
    Name of a revolute joint (coordinate theta_b - theta_a, rad) or a prismatic joint (the slide along its
    axis, m) added before.
motion : Motion
    The prescribed coordinate f(t) with its derivatives.
name : str, optional
    Name of the driver; default "<joint>-driver". Its one row is "name.angle" (revolute) or
    "name.slide" (prismatic).

Returns
-------
str
    The driver's name.

Raises
------
ModelError
    If ``joint`` is not a revolute or prismatic joint of the builder, or ``motion`` is not a
    :class:`Motion`.

Examples
--------
A slider-crank (crank 0.2 m, rod 0.6 m) has one degree of freedom; its driver leaves none, and the
slider sits at x = r cos(theta) + sqrt(l^2 - r^2 sin(theta)^2) = 0.674456 m at theta = 60 degrees:

>>> import numpy as np
>>> from multibody import ModelBuilder, Motion, consistent_state, evaluate, pivoted_qr
>>> mb = ModelBuilder("slider-crank", gravity=(0.0, -9.81))
>>> mb.add_bar("crank", length=0.2, mass=1.0, position=(0.05, 0.0866), angle=np.pi / 3)
'crank'
>>> mb.add_bar("rod", length=0.6, mass=2.0, position=(0.34, 0.0866), angle=-0.29)
'rod'
>>> mb.add_body("slider", mass=0.5, inertia=1e-3, position=(0.68, 0.0))
'slider'
>>> for name, a, b, pa, pb in [("O", "ground", "crank", (0, 0), (-0.1, 0)),
...                            ("A", "crank", "rod", (0.1, 0), (-0.3, 0)),
...                            ("B", "rod", "slider", (0.3, 0), (0, 0))]:
...     _ = mb.revolute(name, a, b, on_a=pa, on_b=pb)
>>> mb.prismatic("P", "ground", "slider", axis=(1.0, 0.0), at=(0.68, 0.0))
'P'
>>> mb.driver("O", Motion.constant_rate(np.pi / 3, 2 * np.pi))
'O-driver'
>>> model = mb.build()
>>> q, v = consistent_state(model)
>>> model.n - pivoted_qr(evaluate(model, 0.0, q, v).A).rank      # degrees of freedom left
0
>>> print(f"{q[model.coordinate_index('slider.x')]:.6f}")
0.674456
""",
})
