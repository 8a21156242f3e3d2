"""Applied forces: each returns generalized forces f (n,) and, when conservative, a potential.

Generalized force of a point force F at a marker p: f = J_p^T F (virtual work, paper 001 eq. 1).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, MultibodyError
from .markers import MarkerSet


def user_value(fun, what: str, size: int, t, q, v) -> np.ndarray:
    """``fun(t, q, v)`` of a user's force as ``size`` finite floats; anything else (an exception in the
    user's code, a wrong count, text, NaN) is one ModelError naming the force and the time (issue 17)."""
    try:
        out = fun(t, q, v)
    except MultibodyError:
        raise
    except Exception as exc:  # the user's code: report, never a traceback
        raise ModelError(f"the {what} raised {type(exc).__name__}: {exc} (at t = {t:.6g} s).") from None
    try:
        arr = np.asarray(out, dtype=float).reshape(size)
    except (TypeError, ValueError):
        raise ModelError(f"the {what} must return {size} number(s), got {str(out)[:80]!r} "
                         f"(at t = {t:.6g} s).") from None
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"the {what} returned a non-finite value {arr.tolist()} (at t = {t:.6g} s).")
    return arr


def _scatter(cols: np.ndarray, vals: np.ndarray, size: int) -> np.ndarray:
    """Sum vals (k, w) into a vector of length size at columns cols (k, w); columns may repeat."""
    return np.bincount(cols.ravel(), weights=vals.ravel(), minlength=size)


@dataclass(frozen=True)
class ForceElement:
    """Base: ``generalized(t, qe, ve) -> (n + 1,)`` (last entry is the dropped ground column) and
    ``potential(t, qe) -> float`` (0 for non-conservative elements)."""

    def generalized(self, t, qe, ve):  # pragma: no cover - abstract
        raise NotImplementedError

    def potential(self, t, qe) -> float:
        return 0.0


@dataclass(frozen=True)
class ConstantForce(ForceElement):
    """A constant generalized force vector g (n + 1,) with potential V = -g . q (uniform gravity)."""

    g: np.ndarray

    def generalized(self, t, qe, ve):
        return self.g

    def potential(self, t, qe):
        return -float(self.g @ qe)


@dataclass(frozen=True)
class SpringDampers(ForceElement):
    """Linear spring-dampers between marker points p_i, p_j (vectorised over k elements).

    Tension F = k (l - l0) + c l', l = |p_i - p_j|; f = -J_i^T F u + J_j^T F u with u = (p_i - p_j)/l;
    V = 1/2 k (l - l0)^2.
    """

    pi: MarkerSet
    pj: MarkerSet
    stiffness: np.ndarray
    damping: np.ndarray
    free_length: np.ndarray

    def _geometry(self, qe, ve):
        a, b = self.pi.evaluate(qe, ve), self.pj.evaluate(qe, ve)
        d = a.pos - b.pos
        length = np.sqrt(np.einsum("ki,ki->k", d, d))
        return a, b, d / length[:, None], length

    def generalized(self, t, qe, ve):
        a, b, u, length = self._geometry(qe, ve)
        rate = np.einsum("ki,ki->k", u, a.vel - b.vel)
        tension = self.stiffness * (length - self.free_length) + self.damping * rate
        fu = -tension[:, None] * u                                   # force on p_i
        vals = np.concatenate([np.einsum("ki,kic->kc", fu, a.jac),
                               -np.einsum("ki,kic->kc", fu, b.jac)], axis=1)
        cols = np.concatenate([self.pi.cols, self.pj.cols], axis=1)
        return _scatter(cols, vals, len(qe))

    def potential(self, t, qe):
        _, _, _, length = self._geometry(qe, np.zeros_like(qe))
        return float(0.5 * np.sum(self.stiffness * (length - self.free_length) ** 2))


@dataclass(frozen=True)
class PointForce(ForceElement):
    """A user force F(t, q, v) -> (2,) in the global frame acting at one marker point."""

    point: MarkerSet
    fun: object
    n: int = field(kw_only=True)
    what: str = field(default="user force", kw_only=True)

    def generalized(self, t, qe, ve):
        F = user_value(self.fun, self.what, 2, t, qe[: self.n], ve[: self.n])
        jac = self.point.evaluate(qe, ve).jac[0]
        return _scatter(self.point.cols, (F @ jac)[None, :], len(qe))


@dataclass(frozen=True)
class GeneralizedForce(ForceElement):
    """A user generalized force f(t, q, v) -> (n,), e.g. a torque on a body or a joint actuator."""

    fun: object
    n: int = field(kw_only=True)
    what: str = field(default="user generalized force", kw_only=True)

    def generalized(self, t, qe, ve):
        out = np.zeros(len(qe))
        out[: self.n] = user_value(self.fun, self.what, self.n, t, qe[: self.n], ve[: self.n])
        return out
