"""Explicit descriptions a model may carry besides its constraint equations (paper 001 Sects 4-5).

- :class:`ClosingConditions`: q_D = g(q_I, t) (eq. 27), the dependent coordinates as explicit
  functions of a chosen set of independent ones, e.g. from inverse kinematics (Woernle's cut into two
  open chains, eqs 39-41). Integrated by ``--formulation closing`` (eqs 28-29).
- :class:`ReactionDistribution`: B(q, t) (p, n) of the physical reactions f (eq. 32, C^T lambda =
  B^T f), so that runs record f by scheme (37) (:mod:`multibody.analysis.physical_reactions`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class ClosingConditions:
    """``independent``: names of q_I (k); ``g(q_I (k,), t) -> q_D (n - k,)`` with q_D the other
    coordinates in the model's order (one assembly branch: e.g. the sign of eq. 40); ``periodic``:
    names of dependent angles that g returns modulo 2 pi (e.g. from atan2, eq. 41), continued over
    time by the formulation."""

    independent: tuple[str, ...]
    g: Callable
    periodic: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReactionDistribution:
    """``B(q, t) -> (p, n)`` with p the number of independent constraints; ``labels`` (p,) name the
    components of f (e.g. "O4.fx", "O4.fy"), ``unit`` their unit."""

    B: Callable
    labels: tuple[str, ...]
    unit: str = "N"
