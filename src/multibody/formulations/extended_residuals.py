"""The constraint residuals Phi(q) and A(q) v + Phi_t of the planar primitives in double-double arithmetic
(linalg.double_double, ~1e-31 relative on every IEEE double platform), for the extended-precision projection
(formulations.extended_projection, issue 12).

The planar primitives (model.constraints: Coincident, Distance, Angle, LineProjection, CoordinateDriver) are sums of
products of coordinates, body-fixed lengths and cos / sin of the body angles (markers: p = r + A(theta) s',
Nikravesh ch. 6); A(q) v + Phi_t is the time derivative of the same expressions along v (the marker velocities
r' + B(theta) s' theta'), so it needs no Jacobian. Every product and sum is taken in double-double and cos / sin
of the angles too (linalg.double_double.sincos): a double cos is only faithful to ~1 ulp, an error of the same
size as the round-off c ~ 4e-17 of evaluating Phi in double that the projection must get below. The prescribed
motions f(t) enter in double (their rounding is that of the given time, the same on both branches).

The spatial director constraints (quadratic in q) are evaluated by formulations.extended_spatial, a user's Generic
rows by formulations.extended_generic (their own double-double function where the user gives one, else double,
the same on every platform): every constraint group of the project is covered, no group needs long double.
"""
from __future__ import annotations

import numpy as np

from ..linalg import double_double as dd
from ..model.constraints import Angle, Coincident, CoordinateDriver, Distance, Generic, LineProjection
from .extended_generic import generic_residual
from .extended_spatial import covers as spatial_covers
from .extended_spatial import spatial_residual


class Trig:
    """cos and sin (double-doubles, (n + 1,)) of every extended coordinate qe (the markers read the angles')."""

    def __init__(self, c, s):
        self.c, self.s = c, s

    @classmethod
    def at(cls, qe):
        """cos / sin of the double-double qe, or None where an entry is not a valid angle for sincos."""
        try:
            return cls(*dd.sincos(qe))
        except ValueError:
            return None

    def shifted(self, d):
        """At qe + d for a small double-double d (linalg.double_double.sincos_shift), None when d is too large."""
        out = dd.sincos_shift(self.c, self.s, d)
        return None if out is None else Trig(*out)


def _row(x, i):
    return x[0][i], x[1][i]


def _place(m, qe, trig, memo):
    """(pos, u) of a MarkerSet at qe, each a double-double (2, k) (rows x, y), computed once per q (memo)."""
    key = id(m)
    if key not in memo:
        th = m.cols[:, 2]
        cs = (np.stack([trig.c[0][th], trig.s[0][th]]), np.stack([trig.c[1][th], trig.s[1][th]]))
        p, r = dd.mul_d(cs, m.local[:, 0]), dd.mul_d(cs, m.local[:, 1])        # (c lx, s lx), (c ly, s ly)
        u = dd.add(p, (np.stack([-r[0][1], r[0][0]]), np.stack([-r[1][1], r[1][0]])))  # A(theta) s'
        pos = u if m.is_vector else dd.add(dd.take(qe, m.cols[:, :2].T), u)
        memo[key] = pos, u
    return memo[key]


def _marker(m, qe, ve, trig, memo):
    """(pos, vel) of a MarkerSet as double-doubles (2, k) (vel None without ve): vel = r' + B(theta) s' theta'."""
    pos, u = _place(m, qe, trig, memo)
    if ve is None:
        return pos, None
    vel = dd.mul((np.stack([-u[0][1], u[0][0]]), np.stack([-u[1][1], u[1][0]])), dd.take(ve, m.cols[:, 2]))
    return pos, vel if m.is_vector else dd.add(dd.take(ve, m.cols[:, :2].T), vel)


def _dot(x, y):
    """Column-wise x . y of two double-doubles (2, k)."""
    p = dd.mul(x, y)
    return dd.add(_row(p, 0), _row(p, 1))


def _interleave(xy):
    """(2, k) rows x, y -> 2k rows x0, y0, x1, y1, ... (the Coincident row order)."""
    return xy[0].T.ravel(), xy[1].T.ravel()


def _coincident(g, qe, ve, trig, memo):
    (pa, va), (pb, vb) = _marker(g.pi, qe, ve, trig, memo), _marker(g.pj, qe, ve, trig, memo)
    return _interleave(dd.sub(va, vb) if ve is not None else dd.sub(pa, pb))


def _distance(g, qe, ve, trig, memo):
    (pa, va), (pb, vb) = _marker(g.pi, qe, ve, trig, memo), _marker(g.pj, qe, ve, trig, memo)
    d, L = dd.sub(pa, pb), g.length
    if ve is not None:
        return dd.div(_dot(d, dd.sub(va, vb)), L)                          # d.d' / L
    return dd.div(dd.sub(_dot(d, d), dd.two_prod(L, L)), 2.0 * L)        # (d.d - L^2) / (2 L)


def _angle(g, qe, ve, trig, memo):
    a, b = g.cols[:, 0], g.cols[:, 1]
    if ve is not None:
        return dd.sub(dd.take(ve, b), dd.take(ve, a))
    return dd.sub(dd.sub(dd.take(qe, b), dd.take(qe, a)), dd.dd(g.offset))


def _line(g, qe, ve, trig, memo):
    (e, ev), (pa, va), (pb, vb) = (_marker(m, qe, ve, trig, memo) for m in (g.e, g.pi, g.pj))
    d = dd.sub(pb, pa)
    if ve is not None:
        return dd.add(_dot(ev, d), _dot(e, dd.sub(vb, va)))
    return dd.sub(_dot(e, d), dd.dd(g.offset))


def _driver(g, qe, ve, trig, memo):
    k = g.cols[:, 0]
    return dd.take(ve, k) if ve is not None else dd.sub(dd.take(qe, k), dd.dd(g.offset))


_GROUPS = {Coincident: _coincident, Distance: _distance, Angle: _angle, LineProjection: _line,
           CoordinateDriver: _driver}


def covered(model) -> bool:
    """True when every constraint group of the model has residuals here: the planar primitives, the spatial
    director groups (formulations.extended_spatial) and Generic (formulations.extended_generic)."""
    return all(type(g) in _GROUPS or spatial_covers(g) or isinstance(g, Generic) for g in model.constraints)


def gains(model) -> bool:
    """True when some row is evaluated in more than double: a group other than a Generic without its extended
    residual (a model of such Generic groups only has nothing to polish: formulations.extended_generic)."""
    return any(not isinstance(g, Generic) or g.extended_fun is not None for g in model.constraints)


def residuals(model, t, qe, trig, ve=None, memo=None):
    """Phi(q, t) (ve None) or A(q) v + Phi_t (ve given) as one double-double over the model's rows, at the
    extended coordinates qe and velocities ve ((n + 1,) double-doubles, last entry 0) with trig = Trig at qe
    (None: the model has no planar primitive); None when a group is not covered. ``memo``: a dict kept while q
    stays the same (the markers' positions are computed once)."""
    memo = {} if memo is None else memo
    his, los = [], []
    for g in model.constraints:
        out = _group(g, t, qe, ve, trig, memo)
        if out is None:
            return None
        his.append(np.asarray(out[0], float).ravel())
        los.append(np.asarray(out[1], float).ravel())
    return np.concatenate([np.zeros(0), *his]), np.concatenate([np.zeros(0), *los])


def _group(g, t, qe, ve, trig, memo):
    """One group's rows as a double-double, motions included (None: not covered)."""
    fn = _GROUPS.get(type(g))
    if fn is None:
        out = spatial_residual(g, t, qe, ve)
        return generic_residual(g, t, qe, ve) if out is None else out
    out = fn(g, qe, ve, trig, memo)
    if g.motions:           # Phi -= f(t); Phi_t = -f'(t)
        shift = np.zeros(g.rows)
        for row, motion in g.motions:
            shift[row] = motion(t)[0 if ve is None else 1]
        out = dd.sub(out, dd.dd(shift))
    return out


def needs_trig(model) -> bool:
    """True when a planar primitive reads cos / sin of body angles (the Trig of residuals is needed)."""
    return any(type(g) in _GROUPS for g in model.constraints)
