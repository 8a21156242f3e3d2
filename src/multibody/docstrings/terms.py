"""Sections of the terms at a state (:class:`multibody.State`, :class:`multibody.Terms`,
:class:`multibody.Workspace`, :func:`multibody.evaluate`) and of the rank decision
(:class:`multibody.RankTolerance`, :func:`multibody.pivoted_qr`, :class:`~multibody.linalg.rank.PivotedQR`)."""
from .. import assembly
from ..linalg import rank
from . import attach

_TQV = """t : float in s
    Time.
q : (n,) ndarray
    Coordinates (m, rad).
v : (n,) ndarray
    Velocities (m/s, rad/s)."""
#: a pendulum bob at (0.6, -0.8) on a 1 m rod, moving at 1 m/s across it
_BOB = """>>> import numpy as np
>>> from multibody import ModelBuilder, Workspace
>>> mb = ModelBuilder("pendulum", gravity=(0.0, -9.81))
>>> mb.add_point_mass("bob", mass=1.0, position=(0.6, -0.8))
'bob'
>>> mb.distance("rod", "ground", "bob", on_a=(0.0, 0.0), on_b=(0.0, 0.0))
'rod'
>>> ws = Workspace(mb.build())
>>> q, v = np.array([0.6, -0.8]), np.array([0.8, 0.6])"""

attach(assembly.State, {"": """Parameters
----------
t : float in s
    Time.
q : (n,) ndarray
    Coordinates (m, rad).
v : (n,) ndarray
    Velocities (m/s, rad/s).

Examples
--------
>>> import numpy as np
>>> from multibody import State
>>> State(0.0, np.zeros(2), np.ones(2)).v.tolist()
[1.0, 1.0]
"""})

attach(assembly.Terms, {"": """The terms of M q'' + A^T lambda = f, A q'' = gamma at one state (paper 000 eqs 3, 6).

Parameters
----------
M : (n, n) ndarray
    Mass matrix.
f : (n,) ndarray
    Applied and velocity-dependent generalized forces (N, N m).
Phi : (m,) ndarray
    Constraint residuals.
A : (m, n) ndarray
    Constraint Jacobian Phi_q.
Phi_t : (m,) ndarray
    Partial time derivative of Phi (drivers).
gamma : (m,) ndarray
    Right-hand side of the acceleration constraints A q'' = gamma.

Examples
--------
The bob at (0.6, -0.8) moving at 1 m/s across its 1 m rod: gamma = -|v|^2 / L = -1 (centripetal).

{_BOB}
>>> from multibody import evaluate
>>> terms = evaluate(ws.model, 0.0, q, v)
>>> terms.Phi.round(12).tolist(), terms.gamma.round(12).tolist()
([0.0], [-1.0])
""".replace("{_BOB}", _BOB)})

attach(assembly.Workspace, {
    "": f"""Parameters
----------
model : Model
    The model it evaluates (kept as ``ws.model``).

Examples
--------
{_BOB}
>>> ws.m, ws.h
(1, 0)
""",
    "extend": f"""The extended arrays (n + 1,) with a trailing zero for the ground column.

Parameters
----------
q, v : (n,) ndarray
    Coordinates and velocities.

Returns
-------
qe : (n + 1,) ndarray
    Coordinates and a trailing zero: the workspace's own buffer (overwritten by the next call).
ve : (n + 1,) ndarray
    Velocities and a trailing zero, likewise.
""",
    "constraints": f"""Parameters
----------
{_TQV}

Returns
-------
Phi : (m,) ndarray
A : (m, n) ndarray
Phi_t : (m,) ndarray
gamma : (m,) ndarray

Examples
--------
The rod's row is |p| - L: its Jacobian is the unit vector along the rod, and gamma = -|v|^2 / L = -1
for the bob moving at 1 m/s across the rod (the centripetal term):

{_BOB}
>>> Phi, A, Phi_t, gamma = ws.constraints(0.0, q, v)
>>> A.round(12).tolist(), gamma.round(12).tolist()
([[0.6, -0.8]], [-1.0])
""",
    "sparse_constraints": f"""Parameters
----------
{_TQV}

Returns
-------
Phi : (m,) ndarray
A : scipy.sparse.csr_matrix, (m, n)
Phi_t : (m,) ndarray
gamma : (m,) ndarray
""",
    "velocity_constraints": f"""Parameters
----------
{_TQV}

Returns
-------
Phi : (m,) ndarray
C : (m + h, n) ndarray
b : (m + h,) ndarray
Gamma : (m + h,) ndarray

Examples
--------
A knife edge along x (no holonomic rows): its row of C forbids the sideways velocity y'.

>>> import numpy as np
>>> from multibody import ModelBuilder, Workspace
>>> mb = ModelBuilder("sled")
>>> mb.add_body("sled", mass=1.0, inertia=0.1)
'sled'
>>> mb.knife_edge("blade", "sled", direction=(1.0, 0.0), on=(0.0, 0.0))
'blade'
>>> Phi, C, b, Gamma = Workspace(mb.build()).velocity_constraints(0.0, np.zeros(3), np.zeros(3))
>>> C.tolist()
[[0.0, 1.0, 0.0]]
""",
    "forces": f"""The generalized forces f(t, q, v) of all force elements.

Parameters
----------
{_TQV}

Returns
-------
(n,) ndarray
    f in N (translations) and N m (rotations).

Examples
--------
{_BOB}
>>> ws.forces(0.0, q, v).tolist()
[0.0, -9.81]
""",
    "potential": f"""The potential energy V(t, q) of all force elements (gravity, springs, user potentials).

Parameters
----------
t : float in s
    Time.
q : (n,) ndarray
    Coordinates.

Returns
-------
float
    V in J.

Examples
--------
m g y = 1 kg 9.81 m/s^2 (-0.8 m):

{_BOB}
>>> round(ws.potential(0.0, q), 12)
-7.848
""",
    "terms": f"""All terms at (t, q, v).

Parameters
----------
{_TQV}

Returns
-------
Terms
    M, f, Phi, A, Phi_t, gamma.

Examples
--------
{_BOB}
>>> ws.terms(0.0, q, v).f.tolist()
[0.0, -9.81]
""".replace("{_BOB}", _BOB),
})

attach(assembly, {"evaluate": f"""Parameters
----------
model : Model
    The model.
{_TQV}
ws : Workspace, optional
    A workspace of the model, reused between calls.

Returns
-------
Terms
    M (n, n), f (n,), Phi (m,), A (m, n), Phi_t (m,), gamma (m,).

Examples
--------
{_BOB}
>>> from multibody import evaluate
>>> terms = evaluate(ws.model, 0.0, q, v)
>>> terms.M.tolist(), terms.f.tolist(), terms.A.round(12).tolist()
([[1.0, 0.0], [0.0, 1.0]], [0.0, -9.81], [[0.6, -0.8]])
"""})

attach(rank.RankTolerance, {"": """Parameters
----------
rtol : float, optional
    Relative tolerance; default sqrt(eps) = 1.5e-8.
atol : float, optional
    Absolute floor; default 1e-300.

Examples
--------
>>> from multibody import RankTolerance
>>> RankTolerance().rtol
1.4901161193847656e-08
"""})

attach(rank.PivotedQR, {
    "": """Returned by :func:`pivoted_qr`.

Attributes
----------
Q : (n, n) ndarray
    Orthogonal factor.
R : (n, m) ndarray
    Upper triangular factor with decreasing |R_ii|.
perm : (m,) ndarray of int
    The row order of A chosen by the pivoting.
rank : int
    The numerical rank.
R_diag : (min(m, n),) ndarray
    |R_ii|, the diagonal magnitudes.
tolerance : RankTolerance
    The tolerance of the rank decision.
""",
    "independent_rows": "Rows of A that pivoting found independent (sorted), (rank,) int.",
    "redundant_rows": "Rows of A that pivoting found dependent on the others (sorted), (m - rank,) int.",
    "null_space": "Q2 (n, n - rank): an orthonormal basis of the null space of A (the tangent space).",
})

attach(rank, {"pivoted_qr": """Parameters
----------
A : (m, n) ndarray
    The constraint Jacobian (or any matrix whose row rank is wanted).
tolerance : RankTolerance, optional
    Relative and absolute tolerances of the decision.

Returns
-------
PivotedQR
    Q, R, the row order ``perm``, ``rank``, ``R_diag`` and the null space basis ``null_space``.

Examples
--------
A parallelogram with a third, redundant crank (paper 000's example of redundant constraints): 12
coordinates, 12 rows, rank 11, so one row is redundant and the mechanism keeps one degree of freedom.

>>> import numpy as np
>>> from multibody import ModelBuilder, consistent_state, evaluate, pivoted_qr
>>> mb = ModelBuilder("parallelogram")
>>> for name, x in (("left", 0.0), ("middle", 0.5), ("right", 1.0)):
...     _ = mb.add_bar(name, length=1.0, mass=1.0, position=(x, 0.5), angle=np.pi / 2)
...     _ = mb.revolute(name + "-pin", "ground", name, at=(x, 0.0))
>>> mb.add_bar("coupler", length=1.0, mass=1.0, position=(0.5, 1.0), angle=0.0)
'coupler'
>>> for name, x in (("left", 0.0), ("middle", 0.5), ("right", 1.0)):
...     _ = mb.revolute(name + "-top", name, "coupler", at=(x, 1.0))
>>> model = mb.build()
>>> q, v = consistent_state(model)
>>> qr = pivoted_qr(evaluate(model, 0.0, q, v).A)
>>> model.n, model.m, qr.rank, len(qr.redundant_rows), qr.null_space.shape
(12, 12, 11, 1, (12, 1))
"""})
