"""The constraint residuals Phi(q) and A(q) v + Phi_t of the spatial director constraints in double-double arithmetic
(linalg.double_double, portable: error-free transformations, no long double), for the extended-precision projection
(formulations.extended_projection, issue 12).

Every spatial constraint of the director formulation is at most quadratic in q (paper 004, "The discrete null space
method for the energy consistent integration of constrained mechanical systems" / the director paper, Sects 1 and
4.3: the rigidity rows eq. 24, the lower pairs eqs 80, 100, 119, 129, 139), stored as model.director's
QuadraticConstraints: row k is Phi_k = 1/2 x^T H_k x + g_k^T x + c_k with x = q[cols_k]. So

    Phi_k         = sum_ij (H_k,ij / 2) x_i x_j + sum_i g_k,i x_i + c_k,
    A_k v + Phi_t = sum_ij (H_k,ij / 2) (x_i v_j + v_i x_j) + sum_i g_k,i v_i    (d/ds Phi_k(x + s v) at s = 0),

a sum of products of the (double) model data H / 2 (exact: a power of two), g, c with coordinates and velocities.
Each product is taken with TwoProduct (Dekker) and the sum pairwise in double-double (Hida, Li & Bailey's accurate
sum), vectorised over the rows: the absolute error is <= (8 + 2 ceil(log2 K)) eps_dd sum_i |term_i| (K terms per
row, eps_dd = 2^-104), i.e. ~1e-30 of the row's largest term, against eps ~ 1e-16 in double. The model data are
taken as they are stored (the constraint the run integrates is the one with these doubles; H, g, c need no
extra digits).

The angle driver (model.director_drivers.AngleDriver) Phi = cos f(t) s(q) - sin f(t) c(q) with two quadratic forms
s, c takes cos f and sin f in double-double too (linalg.double_double.sincos of the double f(t)): then the row is
sin(theta(q) - f) for the given double f(t) to ~1e-31, and its rate A v + Phi_t = C s' - S c' - f' (S s + C c).
A slide driver (SlideDriver) subtracts f(t) and f'(t) from the quadratic row's value and rate. The prescribed
motions f(t), f'(t) enter in double as model.director_drivers.motion_values computes them (the double evaluation
of the same rows uses the same numbers).
"""
from __future__ import annotations

import weakref

import numpy as np

from ..linalg import double_double as dd
from ..model.director import QuadraticConstraints
from ..model.director_drivers import AngleDriver, SlideDriver, motion_values

#: the terms of each group, built once: (id(group), ground) -> terms, dropped when the group is collected
_TERMS: dict = {}


class Terms:
    """The terms of r quadratic rows over the extended coordinates (index n: the ground, 0), padded per row to
    the same count with zero coefficients at the ground: I, J, coef (r, K) of (H / 2) x_I x_J, L, lin (r, K1) of
    g x_L, const (r,)."""

    def __init__(self, H, g, c, cols, ground: int):
        self.I, self.J, self.coef = _padded(H, cols[:, :, None], cols[:, None, :], 0.5, ground)
        self.L, _, self.lin = _padded(g, cols, cols, 1.0, ground)
        self.const = np.asarray(c, float)

    def values(self, qe, ve=None):
        """Phi (ve None) or A v (ve given) of every row as a double-double (r,)."""
        xi, xj = dd.take(qe, self.I), dd.take(qe, self.J)
        if ve is None:
            quad, lin = dd.mul(xi, xj), dd.take(qe, self.L)
        else:
            quad, lin = dd.add(dd.mul(xi, dd.take(ve, self.J)), dd.mul(dd.take(ve, self.I), xj)), dd.take(ve, self.L)
        parts = [dd.mul_d(quad, self.coef), dd.mul_d(lin, self.lin)]
        if ve is None:
            parts.append(dd.dd(self.const[:, None]))
        return sum_columns((np.concatenate([p[0] for p in parts], axis=1),
                            np.concatenate([p[1] for p in parts], axis=1)))


def _padded(a, rows_i, rows_j, scale, ground):
    """(I, J, scale a) (r, K) of the nonzero entries a[k, ...] of each row k, its column indices taken from
    rows_i / rows_j broadcast to a's shape; rows with fewer entries padded with (ground, ground, 0)."""
    r = a.shape[0]
    flat = a.reshape(r, -1)
    row, entry = np.nonzero(flat)                   # row-major: sorted by row
    counts = np.bincount(row, minlength=r)
    pos = np.arange(row.size) - (np.cumsum(counts) - counts)[row]
    K = max(int(counts.max(initial=0)), 1)
    I, J, coef = np.full((r, K), ground), np.full((r, K), ground), np.zeros((r, K))
    I[row, pos] = np.broadcast_to(rows_i, a.shape).reshape(r, -1)[row, entry]
    J[row, pos] = np.broadcast_to(rows_j, a.shape).reshape(r, -1)[row, entry]
    coef[row, pos] = scale * flat[row, entry]
    return I, J, coef


def sum_columns(x):
    """The row sums of a double-double (r, K) by pairwise double-double addition (depth ceil(log2 K))."""
    hi, lo = x
    while hi.shape[1] > 1:
        if hi.shape[1] % 2:
            hi, lo = (np.concatenate([a, np.zeros((a.shape[0], 1))], axis=1) for a in (hi, lo))
        h = hi.shape[1] // 2
        hi, lo = dd.add((hi[:, :h], lo[:, :h]), (hi[:, h:], lo[:, h:]))
    return hi[:, 0], lo[:, 0]


def terms(g, ground: int) -> Terms:
    """The Terms of a QuadraticConstraints group, or of an AngleDriver's 2 k forms (s_0, c_0, s_1, c_1, ...)."""
    key = (id(g), ground)
    if key not in _TERMS:
        if isinstance(g, AngleDriver):
            k, w = g.cols.shape
            cols = np.repeat(g.cols, 2, axis=0)
            out = Terms(g.H.reshape(2 * k, w, w), g.g.reshape(2 * k, w), g.c.reshape(2 * k), cols, ground)
        else:
            out = Terms(g.H, g.g, g.c, g.cols, ground)
        _TERMS[key] = out
        weakref.finalize(g, _TERMS.pop, key, None)      # a sweep's many models do not accumulate here
    return _TERMS[key]


def covers(g) -> bool:
    """True for the spatial groups this module evaluates."""
    return isinstance(g, (QuadraticConstraints, AngleDriver))


def spatial_residual(g, t, qe, ve=None):
    """Phi (ve None) or A v + Phi_t (ve given) of a spatial group at the extended double-doubles qe, ve (n + 1,),
    a double-double (rows,), motions included; None when the group is not a spatial one."""
    if not covers(g):
        return None
    T = terms(g, qe[0].size - 1)
    if isinstance(g, AngleDriver):
        return _angle_driver(g, T, t, qe, ve)
    out = T.values(qe, ve)
    if g.motions and isinstance(g, SlideDriver):         # Phi -= f, Phi_t = -f'
        f = motion_values(g.motions, t)
        out = dd.sub(out, dd.dd(f[:, 0 if ve is None else 1]))
    return out


def _angle_driver(g, T, t, qe, ve):
    """cos f s - sin f c, or its rate C s' - S c' - f' (S s + C c), in double-double."""
    f = motion_values(g.motions, t)
    C, S = dd.sincos(dd.dd(f[:, 0]))
    val = T.values(qe)
    s, c = (val[0][0::2], val[1][0::2]), (val[0][1::2], val[1][1::2])
    if ve is None:
        return dd.sub(dd.mul(C, s), dd.mul(S, c))
    rate = T.values(qe, ve)
    sd, cd = (rate[0][0::2], rate[1][0::2]), (rate[0][1::2], rate[1][1::2])
    phi_t = dd.mul_d(dd.add(dd.mul(S, s), dd.mul(C, c)), -f[:, 1])
    return dd.add(dd.sub(dd.mul(C, sd), dd.mul(S, cd)), phi_t)
