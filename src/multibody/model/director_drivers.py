"""Drivers of spatial lower pairs in director coordinates (paper 004 Sect. 4.5; issue 23).

Both joint coordinates of the spatial pairs are at most quadratic in q, like the pairs themselves:

* the slide of P and C pairs, u = n . (p2 - p1) (eqs 98, 116: n parent-fixed, p2 - p1 linear in q),
  is a quadratic row: the driver is Phi = u(q) - f(t), a :class:`SlideDriver` (QuadraticConstraints
  with a prescribed motion: Phi_t = -f', gamma = -v^T H v + f'');
* the angle theta of R and C pairs (from r, parent-fixed and perpendicular to the axis n, to a,
  child-fixed and perpendicular to n) has cos theta = c(q) = a . r and sin theta = s(q) = a . w with
  w = n x r parent-fixed: both bilinear in the directors of the two bodies. The driver row

      Phi = cos f(t) s(q) - sin f(t) c(q) = sin(theta - f(t))

  (:class:`AngleDriver`) vanishes at theta = f (and at the far branch theta = f + pi, which a run
  that starts at theta = f(0) never reaches continuously), has dPhi/dtheta = cos(theta - f) = 1 on
  the solution, so its multiplier lam is the driver torque about n in N m (the torque on the child is
  -lam n, equations M q'' + A^T lam = f), and its derivatives follow by the product rule:
  with C = cos f, S = sin f,
      Phi_t = -f' (S s + C c),
      gamma = -(C v^T H_s v - S v^T H_c v + 2 (C' s' - S' c') + C'' s - S'' c),
  C' = -S f', S' = C f', C'' = -C f'^2 - S f'', S'' = -S f'^2 + C f'', s' = s_q v, c' = c_q v.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .constraints import ConstraintGroup, ConstraintValues
from .director import QuadraticConstraints


@dataclass(frozen=True)
class AngleDriver(ConstraintGroup):
    """k angle drivers: H (k, 2, w, w), g (k, 2, w), c (k, 2) of the quadratic forms (s, c) over
    x = qe[cols[k]] (the ground folded in); one Motion per row in ``motions``."""

    H: np.ndarray = field(kw_only=True)
    g: np.ndarray = field(kw_only=True)
    c: np.ndarray = field(kw_only=True)
    #: the driven (or locked) pair of each row, for the reactions in its joint frame
    pairs: tuple[str, ...] = field(kw_only=True, default=())

    def forms(self, qe, ve):
        """(s, c) (k, 2), their Jacobians (k, 2, w) and rates (k, 2), and v^T H v (k, 2) (batched
        matrix products: a few microseconds for any k)."""
        x, v = qe[self.cols], ve[self.cols]
        Hx = self.H @ x[:, None, :, None]                                        # (k, 2, w, 1)
        Hv = self.H @ v[:, None, :, None]
        val = (0.5 * (x[:, None, None, :] @ Hx))[..., 0, 0] + (self.g @ x[:, :, None])[..., 0] + self.c
        jac = Hx[..., 0] + self.g
        return val, jac, (jac @ v[:, :, None])[..., 0], (v[:, None, None, :] @ Hv)[..., 0, 0]

    def evaluate(self, t, qe, ve):
        val, jac, rate, vHv = self.forms(qe, ve)
        f = motion_values(self.motions, t)
        C, S, d1, d2 = np.cos(f[:, 0]), np.sin(f[:, 0]), f[:, 1], f[:, 2]
        s, c, sd, cd = val[:, 0], val[:, 1], rate[:, 0], rate[:, 1]
        Cp, Sp = -S * d1, C * d1
        Cpp, Spp = -C * d1 * d1 - S * d2, -S * d1 * d1 + C * d2
        phi = C * s - S * c
        phi_t = -d1 * (S * s + C * c)
        gamma = -(C * vHv[:, 0] - S * vHv[:, 1] + 2 * (Cp * sd - Sp * cd) + Cpp * s - Spp * c)
        return ConstraintValues(phi, C[:, None] * jac[:, 0] - S[:, None] * jac[:, 1], phi_t, gamma)


    def hessian_sum_at(self, lam, n, t) -> np.ndarray:
        """sum_k lam_k Phi_k,qq (n, n) at time t: Phi_k,qq = cos f H_s - sin f H_c (the energy-momentum
        scheme's iteration matrix)."""
        f = motion_values(self.motions, t)
        C, S = np.cos(f[:, 0])[:, None, None], np.sin(f[:, 0])[:, None, None]
        Hk = lam[:, None, None] * (C * self.H[:, 0] - S * self.H[:, 1])
        out = np.zeros((n + 1, n + 1))
        w = self.cols.shape[1]
        np.add.at(out, (np.broadcast_to(self.cols[:, :, None], (self.rows, w, w)),
                        np.broadcast_to(self.cols[:, None, :], (self.rows, w, w))), Hk)
        return out[:n, :n]


@dataclass(frozen=True)
class SlideDriver(QuadraticConstraints):
    """Slide rows u(q) - f(t) (QuadraticConstraints with motions) and the pair of each row."""

    pairs: tuple[str, ...] = field(kw_only=True, default=())

    def evaluate(self, t, qe, ve):
        phi, jac, gamma = self._evaluate(qe, ve)
        f = motion_values(self.motions, t)
        return ConstraintValues(phi - f[:, 0], jac, -f[:, 1], gamma + f[:, 2])


def motion_values(motions, t) -> np.ndarray:
    """(f, f', f'') (k, 3) of the (row, Motion) pairs in row order; polynomial motions (constant
    rate included) by Horner's rule in plain Python (a NumPy Polynomial call costs microseconds, the
    right-hand side calls this at every evaluation)."""
    out = np.empty((len(motions), 3))
    for k, (_, m) in enumerate(motions):
        spec = m.spec
        if spec and spec[0] == "polynomial":
            f = df = ddf = 0.0
            for c in spec[1][::-1]:         # Horner for p, p' and p'' together
                ddf = ddf * t + 2 * df
                df = df * t + f
                f = f * t + c
            out[k] = f, df, ddf
        else:
            out[k] = m(t)
    return out


__all__ = ["AngleDriver", "SlideDriver"]
