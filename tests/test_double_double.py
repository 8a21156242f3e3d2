"""Double-double residuals of the extended-precision projection (issue 12): right on every IEEE double platform.

Every reference is exact rational arithmetic (fractions.Fraction, no long double, no mpmath): a double is a rational,
so the error-free transformations are checked for equality, and cos / sin / the constraint residuals against
Taylor series summed in Fractions until the alternating tail is below 1e-45 (the tail of an alternating series with
decreasing terms is bounded by its first term). Double-double carries 2^-104 ~ 4.9e-32 relative per operation.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from multibody.formulations import extended_projection
from multibody.formulations.extended_residuals import Trig, covered, residuals
from multibody.linalg import double_double as dd
from multibody.model.builder import ModelBuilder
from multibody.model.constraints import Angle, Coincident, CoordinateDriver, Distance, LineProjection
from multibody.model.motion import Motion
from multibody.models.four_bars import double_four_bar

EPS_DD = 2.0 ** -104
#: relative agreement asked of a residual: a few dozen double-double operations on summands of the row's size
RESIDUAL_REL = 1e-30


def _exact(x) -> Fraction:
    return Fraction(float(x[0])) + Fraction(float(x[1])) if isinstance(x, tuple) else Fraction(float(x))


def _series(x: Fraction, first: int) -> Fraction:
    """cos (first 0) or sin (first 1) of the rational x, exact to 1e-45 (terms decrease once n > |x|)."""
    total, term, n = Fraction(0), x ** first / math.factorial(first), first
    while n <= abs(x) + 2 or abs(term) > Fraction(1, 10 ** 45):
        total += term
        term = -term * x * x / ((n + 1) * (n + 2))
        n += 2
    return total


def test_error_free_transformations_are_exact(rng):
    """TwoSum and TwoProduct (Dekker's splitting) represent a + b and a b exactly, over 40 orders of magnitude."""
    a = rng.standard_normal(200) * 10.0 ** rng.integers(-20, 20, 200)
    b = rng.standard_normal(200) * 10.0 ** rng.integers(-20, 20, 200)
    s, e = dd.two_sum(a, b)
    p, f = dd.two_prod(a, b)
    for i in range(200):
        assert Fraction(s[i]) + Fraction(e[i]) == Fraction(a[i]) + Fraction(b[i])
        assert Fraction(p[i]) + Fraction(f[i]) == Fraction(a[i]) * Fraction(b[i])


def test_sums_products_quotients_within_a_few_eps_dd(rng):
    """add, mul, div of normalized double-doubles (|lo| <= ulp(hi) / 2): relative error <= 4 eps_dd (Dekker 1971;
    Hida, Li & Bailey 2001), cancelling sums included."""
    x = dd.two_sum(rng.standard_normal(50), rng.standard_normal(50) * 1e-17)
    y = dd.two_sum(rng.standard_normal(50), rng.standard_normal(50) * 1e-17)
    y = (np.where(np.arange(50) < 10, -x[0] + 1e-5, y[0]), y[1])          # 10 sums that cancel to ~1e-5
    b = rng.uniform(0.5, 3.0, 50)
    for got, want in ((dd.add(x, y), lambda i: _exact(_at(x, i)) + _exact(_at(y, i))),
                      (dd.mul(x, y), lambda i: _exact(_at(x, i)) * _exact(_at(y, i))),
                      (dd.div(x, b), lambda i: _exact(_at(x, i)) / Fraction(b[i]))):
        for i in range(50):
            exact = want(i)
            assert abs(_exact(_at(got, i)) - exact) <= 4 * EPS_DD * abs(exact)


def _at(x, i):
    return float(x[0][i]), float(x[1][i])


@pytest.mark.parametrize("scale", [1.0, 40.0])
def test_sincos_agrees_with_the_exact_series(rng, scale):
    """cos and sin of double-double angles (hi + lo, |lo| ~ 1e-17 |hi|; up to 40 rad, the cranks' range over 10 s, and
    next to multiples of pi/2 where the reduction cancels) within 4 eps_dd (absolute, the values are <= 1)."""
    hi = np.concatenate([scale * rng.uniform(-1.0, 1.0, 12), [math.pi / 2, math.pi, -3 * math.pi / 2, 1e-12]])
    x = (hi, hi * rng.uniform(-1e-17, 1e-17, hi.size))
    c, s = dd.sincos(x)
    for i in range(hi.size):
        angle = _exact(_at(x, i))
        assert abs(_exact(_at(c, i)) - _series(angle, 0)) <= 4 * EPS_DD
        assert abs(_exact(_at(s, i)) - _series(angle, 1)) <= 4 * EPS_DD


def test_sincos_shift_carries_the_angle_sum(rng):
    """cos / sin at x + d from those at x with |d| <= 1e-8 (the projection's corrections): within 4 eps_dd."""
    hi = rng.uniform(-7.0, 7.0, 10)
    d = (rng.uniform(-1e-8, 1e-8, 10), np.zeros(10))
    shifted = dd.sincos_shift(*dd.sincos(dd.dd(hi)), d)
    for i in range(10):
        angle = Fraction(hi[i]) + Fraction(d[0][i])
        assert abs(_exact(_at(shifted[0], i)) - _series(angle, 0)) <= 4 * EPS_DD
        assert abs(_exact(_at(shifted[1], i)) - _series(angle, 1)) <= 4 * EPS_DD
    assert dd.sincos_shift(*dd.sincos(dd.dd(hi)), (d[0] * 1e3, d[1])) is None


def _mechanism():
    """A planar model with every primitive double-double covers: revolutes (Coincident), a rod (Distance), a
    prismatic joint (Angle, LineProjection), a driven revolute (Angle with a motion) and a driven coordinate."""
    mb = ModelBuilder("primitives", gravity=(0.0, -9.81))
    mb.add_bar("crank", length=0.2, mass=1.0, position=(0.05, 0.0866), angle=math.pi / 3)
    mb.add_bar("rod", length=0.6, mass=2.0, position=(0.33, 0.0866), angle=-0.29)
    mb.add_body("slider", mass=0.5, inertia=1e-3, position=(0.66, 0.0), angle=0.0)
    mb.add_point_mass("bob", mass=0.3, position=(0.9, 0.4))
    mb.revolute("O", "ground", "crank", at=(0, 0))
    mb.revolute("A", "crank", "rod", at=(0.1, 0.1732))
    mb.prismatic("P", "ground", "slider", axis=(1, 0), at=(0.66, 0.0))
    mb.distance("D", "slider", "bob", at_a=(0.66, 0.0), at_b=(0.9, 0.4))
    mb.driver("O", Motion.constant_rate(math.pi / 3, 2.0))
    mb.drive_coordinate("bob.x", Motion.harmonic(0.1, 3.0, offset=0.9))
    return mb.build()


def _marker_exact(m, q, v, cos, sin):
    """Exact (pos, vel) lists of (x, y) Fractions: p = r + A(theta) s', p' = r' + B(theta) s' theta'."""
    out = []
    for cols, (lx, ly) in zip(m.cols, m.local):
        c, s, w, lx, ly = cos[cols[2]], sin[cols[2]], v[cols[2]], Fraction(lx), Fraction(ly)
        u = (c * lx - s * ly, s * lx + c * ly)
        pos = u if m.is_vector else (q[cols[0]] + u[0], q[cols[1]] + u[1])
        vel = (-u[1] * w, u[0] * w) if m.is_vector else (v[cols[0]] - u[1] * w, v[cols[1]] + u[0] * w)
        out.append((pos, vel))
    return out


def _group_exact(g, q, v, cos, sin, t):
    """(Phi rows, A v + Phi_t rows) of one group in Fractions, from model.constraints' formulas."""
    dot = lambda a, b: a[0] * b[0] + a[1] * b[1]      # noqa: E731
    sub = lambda a, b: (a[0] - b[0], a[1] - b[1])      # noqa: E731
    if isinstance(g, (Angle, CoordinateDriver)):
        phi = [(q[c[1]] - q[c[0]] if isinstance(g, Angle) else q[c[0]]) - Fraction(o) for c, o in zip(g.cols, g.offset)]
        rate = [v[c[1]] - v[c[0]] if isinstance(g, Angle) else v[c[0]] for c in g.cols]
    else:
        mk = lambda m: _marker_exact(m, q, v, cos, sin)     # noqa: E731
        if isinstance(g, Coincident):
            pairs = list(zip(mk(g.pi), mk(g.pj)))
            phi = [x for a, b in pairs for x in sub(a[0], b[0])]
            rate = [x for a, b in pairs for x in sub(a[1], b[1])]
        elif isinstance(g, Distance):
            phi, rate = [], []
            for a, b, L in zip(mk(g.pi), mk(g.pj), map(Fraction, g.length)):
                d = sub(a[0], b[0])
                phi.append((dot(d, d) - L * L) / (2 * L))
                rate.append(dot(d, sub(a[1], b[1])) / L)
        else:
            assert isinstance(g, LineProjection)
            phi, rate = [], []
            for e, a, b, o in zip(mk(g.e), mk(g.pi), mk(g.pj), g.offset):
                d = sub(b[0], a[0])
                phi.append(dot(e[0], d) - Fraction(o))
                rate.append(dot(e[1], d) + dot(e[0], sub(b[1], a[1])))
    for row, motion in g.motions:
        f, df, _ = motion(t)
        phi[row] -= Fraction(f)
        rate[row] -= Fraction(df)
    return phi, rate


@pytest.mark.parametrize("factory", [_mechanism, double_four_bar])
def test_residuals_agree_with_exact_rational_evaluation(rng, factory):
    """Phi(q) and A(q) v + Phi_t in double-double at a double-double state (q = a double plus a 1e-17 relative
    correction, as in the projection) agree with their exact rational evaluation to RESIDUAL_REL relative to the
    state's size; the same residual evaluated in double is off by ~1e-17 (its round-off, what the projection removes)."""
    model = factory()
    assert covered(model)
    n, t = model.n, 0.3
    q = (np.append(model.q0 + 0.1 * rng.standard_normal(n), 0.0), np.append(rng.uniform(-1e-17, 1e-17, n), 0.0))
    v = (np.append(rng.standard_normal(n), 0.0), np.append(rng.uniform(-1e-17, 1e-17, n), 0.0))
    qx, vx = [_exact(_at(q, i)) for i in range(n + 1)], [_exact(_at(v, i)) for i in range(n + 1)]
    cos, sin = [_series(a, 0) for a in qx], [_series(a, 1) for a in qx]
    exact_phi, exact_rate = [], []
    for g in model.constraints:
        phi, rate = _group_exact(g, qx, vx, cos, sin, t)
        exact_phi += phi
        exact_rate += rate
    trig = Trig.at(q)
    scale = max(np.abs(q[0]).max(), np.abs(v[0]).max(), 1.0)
    for got, exact in ((residuals(model, t, q, trig), exact_phi), (residuals(model, t, q, trig, v), exact_rate)):
        assert len(exact) == got[0].size
        err = max(abs(_exact(_at(got, i)) - exact[i]) for i in range(len(exact)))
        assert err <= RESIDUAL_REL * scale ** 2


def test_long_double_and_double_double_paths_are_both_selectable():
    """The switch: double-double is available everywhere; long double only where it is wider than double."""
    assert extended_projection.extended_available("double-double")
    wide = np.finfo(np.longdouble).eps < np.finfo(float).eps / 100
    assert extended_projection.extended_available("long double") == wide
