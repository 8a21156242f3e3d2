"""The residuals of a user's constraint (model.constraints.Generic) in the extended-precision projection
(formulations.extended_projection, issue 12): the same precision on every platform, and said which.

A Generic row is a Python function of the user's, Phi(q, t) in double. No refinement of the coordinates makes its
value more accurate than the function's own rounding: a Newton or residual-refinement step can drive Phi only
down to the error with which Phi is evaluated (~eps times the size of the terms that cancel in it, eps = 2.2e-16),
and the level set the run then keeps is that far from Phi = 0 (formulations.extended_projection, "Why"). So:

- with ``extended`` (``ModelBuilder.constraint(..., extended=f)``, ``SpatialModelBuilder.constraint``, or the
  ``"extended"`` key of a constraint dict): f(q, v, t) gets q (and v, or None) as double-doubles, pairs (hi, lo)
  of (n,) float arrays, and returns Phi(q, t) (v None) or Phi_q v + Phi_t (v given) as a double-double pair of
  (rows,) arrays, computed with linalg.double_double (two_sum, two_prod, add, mul, sincos, ...). The rows then
  carry the precision of that function (~1e-31 relative where it is written with those operations) like the
  built-in primitives (formulations.extended_residuals, extended_spatial);
- without it the rows are the user's function in double: Phi(q rounded to double, t) and
  Phi_q v + Phi_t with the Jacobian and Phi_t the group computes (analytic or complex step), rounded to double.
  Those rows keep double's round-off, ~eps |terms|, on every platform; the other rows of the model are still
  evaluated in double-double. numpy's long double is never used (it is double on Windows and Apple-silicon
  macOS: a silent platform dependence).

:func:`generic_precision` names the precision of a group's rows (for the guide and the tests).
"""
from __future__ import annotations

import numpy as np

from ..errors import SimulationError
from ..linalg import double_double as dd
from ..model.constraints import Generic


def generic_precision(g) -> str:
    """"double-double (user)" for a Generic group with an extended residual, "double" without one."""
    return "double-double (user)" if getattr(g, "extended_fun", None) is not None else "double"


def generic_residual(g, t, qe, ve=None):
    """Phi (ve None) or Phi_q v + Phi_t (ve given) of a Generic group at the extended double-doubles qe, ve (n + 1,)
    as a double-double (rows,): the user's extended function where given, else the double function (module text);
    None when g is not a Generic group."""
    if not isinstance(g, Generic):
        return None
    n = g.n
    q = (np.asarray(qe[0][:n], float), np.asarray(qe[1][:n], float))
    v = None if ve is None else (np.asarray(ve[0][:n], float), np.asarray(ve[1][:n], float))
    if g.extended_fun is not None:
        return _checked(g, g.extended_fun(q, v, t))
    qd = dd.to_float(q)
    if v is None:
        return dd.dd(g._phi(qd, t).real)
    return dd.dd(g._jac(qd, t).real @ dd.to_float(v) + g._phi_t(qd, t).real)


def _checked(g, out):
    """The user's (hi, lo) as two (rows,) float arrays, or a SimulationError naming the constraint."""
    name = g.labels[0].rsplit(".", 1)[0]
    try:
        hi, lo = (np.asarray(x, float).reshape(g.rows) for x in out)
    except (TypeError, ValueError):
        raise SimulationError(f"constraint '{name}': its extended residual must return a pair (hi, lo) of "
                              f"{g.rows} floats each (a double-double), got {out!r:.80}") from None
    if not (np.all(np.isfinite(hi)) and np.all(np.isfinite(lo))):
        raise SimulationError(f"constraint '{name}': its extended residual returned a value that is not finite")
    return hi, lo
