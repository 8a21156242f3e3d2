"""Sections of :class:`multibody.Motion` (prescribed motions of drivers)."""
from ..model import motion
from . import attach

attach(motion.Motion, {
    "": """Parameters
----------
f, df, ddf : callable
    f(t), f'(t), f''(t) (t in s; f in rad or m).
description : str, optional
    Text for reports.
spec : tuple, optional
    The parameters of a library motion (written to model files); empty for user functions.

Examples
--------
>>> from multibody import Motion
>>> Motion.constant_rate(1.0, 2.0)(0.5)          # f, f', f'' at t = 0.5 s
(2.0, 2.0, 0.0)
""",
    "polynomial": """Parameters
----------
coefficients : sequence of float
    c0, c1, c2, ... (units of f per s^k).

Returns
-------
Motion
    The motion, with exact derivatives.

Examples
--------
f = 0 + t + 0.5 t^2 at t = 2: f = 4, f' = 1 + t = 3, f'' = 1.

>>> from multibody import Motion
>>> Motion.polynomial([0.0, 1.0, 0.5])(2.0)
(4.0, 3.0, 1.0)
""",
    "constant_rate": """Parameters
----------
start : float
    f(0) (rad or m).
rate : float
    f' (rad/s or m/s).

Returns
-------
Motion
    ``Motion.polynomial([start, rate])``.

Examples
--------
>>> from multibody import Motion
>>> Motion.constant_rate(1.0, 2.0)(0.5)
(2.0, 2.0, 0.0)
""",
    "harmonic": """Parameters
----------
amplitude : float
    a (rad or m).
omega : float in rad/s
    Angular frequency.
phase : float in rad, optional
    Phase at t = 0.
offset : float, optional
    Mean value (rad or m).

Returns
-------
Motion
    The motion, with exact derivatives.

Examples
--------
At a quarter period the velocity is zero and f'' = -a omega^2:

>>> import numpy as np
>>> from multibody import Motion
>>> f, df, ddf = Motion.harmonic(2.0, np.pi)(0.5)
>>> round(f, 12), round(df, 12), round(ddf / np.pi ** 2, 12)
(2.0, 0.0, -2.0)
""",
    "functions": """Parameters
----------
f, df, ddf : callable
    f(t), f'(t), f''(t); a motion built so cannot be written to a model file.

Returns
-------
Motion
    The motion.

Raises
------
ModelError
    If one of them is not callable.

Examples
--------
>>> import numpy as np
>>> from multibody import Motion
>>> Motion.functions(np.exp, np.exp, np.exp)(0.0)
(1.0, 1.0, 1.0)
""",
})
