"""Prescribed motions f(t) for drivers (rheonomic constraints), with analytic derivatives."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Motion:
    """A prescribed joint coordinate f(t) with its first and second derivatives.

    Build one with :meth:`polynomial`, :meth:`constant_rate`, :meth:`harmonic` or :meth:`functions`.
    Calling it returns (f, f', f'') at time t.
    """

    f: Callable[[float], float]
    df: Callable[[float], float]
    ddf: Callable[[float], float]
    description: str = "user motion"
    #: the parameters of a library motion, e.g. ("polynomial", (c0, c1, ...)) or ("harmonic", a, omega,
    #: phase, offset); empty for user functions (which a model file cannot express)
    spec: tuple = ()

    def __call__(self, t: float) -> tuple[float, float, float]:
        return float(self.f(t)), float(self.df(t)), float(self.ddf(t))

    @classmethod
    def polynomial(cls, coefficients) -> "Motion":
        """f(t) = c0 + c1 t + c2 t^2 + ... (coefficients in increasing powers)."""
        c = np.asarray(coefficients, dtype=float)
        p = np.polynomial.Polynomial(c)
        dp, ddp = p.deriv(1), p.deriv(2)
        return cls(p, dp, ddp, f"polynomial {c.tolist()}", ("polynomial", tuple(c.tolist())))

    @classmethod
    def constant_rate(cls, start: float, rate: float) -> "Motion":
        """f(t) = start + rate t."""
        return cls.polynomial([start, rate])

    @classmethod
    def harmonic(cls, amplitude: float, omega: float, *, phase: float = 0.0, offset: float = 0.0) -> "Motion":
        """f(t) = offset + amplitude sin(omega t + phase)."""
        a, w, ph = float(amplitude), float(omega), float(phase)
        return cls(lambda t: offset + a * np.sin(w * t + ph),
                   lambda t: a * w * np.cos(w * t + ph),
                   lambda t: -a * w * w * np.sin(w * t + ph),
                   f"harmonic a={a} omega={w}", ("harmonic", a, w, ph, float(offset)))

    @classmethod
    def functions(cls, f, df, ddf) -> "Motion":
        """A motion from three user callables: f(t), f'(t), f''(t)."""
        for name, g in (("f", f), ("df", df), ("ddf", ddf)):
            if not callable(g):
                from ..errors import ModelError
                raise ModelError(f"Motion.functions: {name} must be callable, got {type(g).__name__}.")
        return cls(f, df, ddf)
