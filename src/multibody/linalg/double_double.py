"""Double-double arithmetic on NumPy arrays: a value is an unevaluated sum hi + lo of two doubles with
|lo| <= ulp(hi) / 2, carrying ~106 bits (eps_dd = 2^-104 ~ 4.9e-32 relative), on every IEEE double platform.

Built from error-free transformations (no long double, no fused multiply-add needed):

- :func:`two_sum` s + e = a + b exactly (Knuth, TAOCP vol. 2, Sect. 4.2.2, Theorem B; Møller 1965);
- :func:`two_prod` p + e = a b exactly, with Dekker's splitting of a double into two 26-bit halves
  (Dekker 1971, "A floating-point technique for extending the available precision", Numer. Math. 18,
  mul12 and split);
- :func:`add`, :func:`mul`, :func:`div` the double-double sum, product and quotient (Dekker 1971 add2, mul2,
  div2; the accurate sum of Hida, Li & Bailey 2001, "Algorithms for quad-double precision floating point
  arithmetic", ARITH-15, Sect. 3, whose relative error is <= 2 eps^2);
- :func:`sincos` cos and sin of a double-double angle: an exact Cody-Waite reduction modulo pi/2 with pi/2 in four
  pieces (Cody & Waite 1980, "Software manual for the elementary functions", ch. 8; the 33-bit pieces of fdlibm's
  __ieee754_rem_pio2), a table of cos and sin at j / 64 (j = -51..51) and Taylor polynomials in the rest
  |delta| <= 1/128 (truncation < 1e-34 relative). The table and the pieces of pi/2 are exact rationals rounded once:
  pi from its first 64 decimals, the series of cos and sin summed in Fractions until the alternating tail is below
  2^-130.

A pair (hi, lo) of float arrays (or floats) is a double-double; plain floats enter as (x, 0.0). Valid for finite
values away from overflow (|a| < 1e300: the splitting multiplies by 2^27 + 1) and, for :func:`sincos`, for angles
|x| < 2^19 (the reduction's products k * piece stay exact).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

#: Dekker's splitter 2^27 + 1 (53-bit doubles into two halves of <= 26 significant bits)
SPLITTER = 134217729.0
#: pi to 64 decimals (error < 1e-64): the exact rational all constants below are rounded from
PI = Fraction("3.1415926535897932384626433832795028841971693993751058209749445923")
#: the table's spacing 1 / STEPS_PER_RAD and the Taylor degree of the rest (|delta| <= 1/128: next term < 1e-34)
STEPS_PER_RAD = 64
TAYLOR_TERMS = 6
#: |angle| bound of sincos (k < 2^20 multiples of the 33-bit pieces of pi/2 stay exact)
MAX_ANGLE = 2.0 ** 19


def two_sum(a, b):
    """(s, e) with s = fl(a + b), s + e = a + b exactly (Knuth's TwoSum, no ordering of |a|, |b| needed)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fast_two_sum(a, b):
    """(s, e) with s + e = a + b exactly, for |a| >= |b| (Dekker's fast2sum)."""
    s = a + b
    return s, b - (s - a)


def _split(a):
    t = SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """(p, e) with p = fl(a b), p + e = a b exactly (Dekker's mul12 with splitting)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def add(x, y):
    """x + y of two double-doubles (Hida, Li & Bailey's accurate sum: relative error <= 2 eps^2)."""
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


def neg(x):
    """-x."""
    return -x[0], -x[1]


def sub(x, y):
    """x - y."""
    return add(x, neg(y))


def mul(x, y):
    """x y of two double-doubles (Dekker's mul2: relative error <= ~4 eps^2)."""
    p, e = two_prod(x[0], y[0])
    return _fast_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def mul_d(x, b):
    """x b for a double-double x and a double b."""
    p, e = two_prod(x[0], b)
    return _fast_two_sum(p, e + x[1] * b)


def div(x, b):
    """x / b for a double-double x and a double b != 0 (Dekker's div2 with a double divisor)."""
    q1 = x[0] / b
    p, e = two_prod(q1, b)
    q2 = (((x[0] - p) - e) + x[1]) / b
    return _fast_two_sum(q1, q2)


def take(x, index):
    """x[index] of a double-double array."""
    return x[0][index], x[1][index]


def dot2(x, y):
    """x_0 y_0 + x_1 y_1 of two pairs of double-double arrays (planar dot products)."""
    return add(mul(x[0], y[0]), mul(x[1], y[1]))


def dd(a):
    """A float (array) as a double-double (a, 0)."""
    a = np.asarray(a, float)
    return a, np.zeros_like(a)


def to_float(x):
    """hi + lo rounded to double."""
    return x[0] + x[1]


def _round(f: Fraction) -> tuple[float, float]:
    """The exact rational f as (hi, lo): hi = f rounded to double, lo = the rest rounded."""
    hi = float(f)
    return hi, float(f - Fraction(hi))


def _series(a: Fraction, first: int) -> Fraction:
    """sum_k (-1)^k a^(2k + first) / (2k + first)! (first 0: cos a, 1: sin a), summed until the alternating tail
    (bounded by its first term, the terms decreasing for |a| < 1) is below 2^-130."""
    total, term, n = Fraction(0), Fraction(a) ** first / math.factorial(first), first
    while abs(term) > Fraction(1, 2 ** 130):
        total += term
        term = -term * a * a / ((n + 1) * (n + 2))
        n += 2
    return total


def _truncate(x: float, bits: int) -> float:
    """x with all but its leading ``bits`` significant bits cleared."""
    m, e = math.frexp(x)
    return math.ldexp(math.floor(m * 2 ** bits), e - bits)


@cache
def _constants():
    """(pieces of pi/2, cos table, sin table, Taylor coefficients of cos and sin) as double-doubles / doubles."""
    half_pi, pieces = PI / 2, []
    rest = half_pi
    for bits in (33, 33, 53, 53):
        pieces.append(_truncate(float(rest), bits))
        rest -= Fraction(pieces[-1])
    j = np.arange(-51, 52)
    table = [np.array([_round(_series(Fraction(int(i), STEPS_PER_RAD), first)) for i in j]).T for first in (0, 1)]
    coef = [[_round(Fraction((-1) ** k, math.factorial(2 * k + first))) for k in range(TAYLOR_TERMS)]
            for first in (0, 1)]
    return pieces, table, coef


def _reduce(x):
    """(r, k mod 4): r = x - k pi/2 as a double-double, |r| <= pi/4 (+ a rounding), exact up to eps^2 |r|."""
    (p1, p2, p3, p4), _, _ = _constants()
    k = np.rint(x[0] * (2.0 / math.pi))
    r = (x[0] - k * p1, np.zeros_like(x[0]))      # exact: Sterbenz, and k p1 has <= 53 bits
    r = add(r, two_sum(-k * p2, x[1]))             # k p2 exact
    r = add(r, add(two_prod(-k, p3), dd(-k * p4)))
    return r, k.astype(np.int64) % 4


def _poly(coef, x):
    """sum_k coef_k x^k (Horner in double-double)."""
    acc = (np.full_like(x[0], coef[-1][0]), np.full_like(x[0], coef[-1][1]))
    for c in coef[-2::-1]:
        acc = add(mul(acc, x), (c[0], c[1]))
    return acc


def sincos(x):
    """(cos x, sin x) of a double-double angle x (arrays), each a double-double (relative error ~1e-31 where the
    value is not tiny; absolute ~1e-32). Raises ValueError for |x| >= MAX_ANGLE."""
    x = (np.asarray(x[0], float), np.asarray(x[1], float))
    if np.any(~np.isfinite(x[0])) or np.any(np.abs(x[0]) >= MAX_ANGLE):
        raise ValueError(f"double-double sincos needs finite angles below {MAX_ANGLE:g} rad")
    _, (tc, ts), (cc, cs) = _constants()
    r, quadrant = _reduce(x)
    j = np.rint(r[0] * STEPS_PER_RAD)
    d = add(two_sum(r[0], -j / STEPS_PER_RAD), (r[1], np.zeros_like(r[1])))       # j / 64 exact
    d2 = mul(d, d)
    cd, sd = _poly(cc, d2), mul(d, _poly(cs, d2))
    i = j.astype(np.int64) + 51
    ca, sa = (tc[0][i], tc[1][i]), (ts[0][i], ts[1][i])
    c = sub(mul(ca, cd), mul(sa, sd))          # cos(a + d) = cos a cos d - sin a sin d
    s = add(mul(sa, cd), mul(ca, sd))          # sin(a + d) = sin a cos d + cos a sin d
    # x = r + k pi/2: quadrant 0 (c, s), 1 (-s, c), 2 (-c, -s), 3 (s, -c)
    swap, cneg, sneg = quadrant % 2 == 1, (quadrant == 1) | (quadrant == 2), quadrant >= 2
    cos = tuple(np.where(cneg, -1.0, 1.0) * np.where(swap, b, a) for a, b in zip(c, s))
    sin = tuple(np.where(sneg, -1.0, 1.0) * np.where(swap, a, b) for a, b in zip(c, s))
    return cos, sin


#: sincos_shift: |d| below this keeps the truncated terms (d^4 / 24 of cos d, d^5 / 120 of sin d) < 5e-34
SHIFT_LIMIT = 1e-8


def sincos_shift(c, s, d):
    """(cos(x + d), sin(x + d)) from c = cos x, s = sin x (double-doubles) and a small double-double d
    (|d| <= SHIFT_LIMIT): the angle-sum formulas with cos d = 1 - d^2 / 2 and sin d = d - d^3 / 6 (Taylor, the next
    terms < 5e-34); None when some |d| is larger (then call sincos)."""
    if np.any(np.abs(d[0]) > SHIFT_LIMIT):
        return None
    half_d2 = mul_d(mul(d, d), 0.5)
    cd = add((np.ones_like(d[0]), np.zeros_like(d[0])), neg(half_d2))
    sd = add(d, dd(-d[0] * half_d2[0] / 3.0))
    return sub(mul(c, cd), mul(s, sd)), add(mul(s, cd), mul(c, sd))
