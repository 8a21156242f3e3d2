"""Momentum-consistent transition conditions when constraints switch (paper 002, Sects 4-5).

At a switching event at configuration q0 the m1 persistent constraints J1 (rows active before and
after) are joined by m2 activated constraints J2; rows active only before (released) are not in
J+ = [J1; J2], which makes these forms the general condition (22) for any switch (activation, release,
replacement). The velocity jumps from v- to v+ = v- + dv with an impulsive constraint force Lambda
and an impulsive applied force U (eq. 21; U = 0 for smooth controls):

- ``lagrangian``, eqs (22)/(24)::

      [ M   J1^T  J2^T ] [ dv  ]   [ U             ]
      [ J1  0     0    ] [ L1  ] = [ -J1 v- - c1   ]
      [ J2  0     0    ] [ L2  ]   [ -J2 v- - c2   ]

- ``projected`` (redundant coordinates), eq (32), with N = N_{J1,M} = I - J1_M^+ J1 and
  J1_M^+ = M^-1 J1^T (J1 M^-1 J1^T)^-1 (eq 7)::

      [ M       N^T J2^T ] [ dv ]   [ N^T U         ]
      [ J2 N    0        ] [ L2 ] = [ -J2 v- - c2   ]

- ``minimal`` (Voronets, minimal coordinates s of the persistent constraints), eq (37), with
  F1 = [-Jp^-1 Js; I] the orthogonal complement of J1 (eq 10) and dv = F1 ds::

      [ F1^T M F1   F1^T J2^T ] [ ds ]   [ F1^T U           ]
      [ J2 F1       0         ] [ L2 ] = [ -J2 F1 s'- - c2  ]

- ``naive`` (for comparison only, paper Fig. 2; NOT momentum consistent): the unweighted
  (Euclidean) projection of v- + M^-1 U onto J+ v + c = 0, which for joint locks sets the locked rates
  to zero and leaves the other rates unchanged. It has no impulsive constraint force.

c = Phi_t (zero for scleronomic constraints; joint locks are scleronomic). The three consistent forms
give the same v+ and the same L2 (the momentum balance of (24) premultiplied by N^T or F1^T is (32)
or (35)); L1, which (32) and (37) do not need, is recovered from J1^T L1 = U - M dv - J2^T L2.
Consequences checked by the tests: the momenta P = F+^T M v of the coordinates still free after the
event are continuous (F+^T J+^T = 0), and the kinetic energy drops by exactly 1/2 dv^T M dv
(v+^T M dv = -(J+ v+)^T Lambda = 0).

Redundant rows (not covered by the paper, which assumes non-redundant constraints) are dropped
before the solves by a pivoted QR with :class:`~multibody.linalg.rank.RankTolerance`; their impulses are
reported as zero.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SimulationError
from ..linalg.projectors import independent_coordinates, nullspace_projector, orthogonal_complement
from ..linalg.rank import RankTolerance, min_norm_solve, pivoted_qr

TRANSITIONS = ("lagrangian", "projected", "minimal", "naive")


@dataclass(frozen=True)
class Transition:
    """Result of a transition: v_plus, dv (n,); impulse (m1 + m2,) Lambda = (L1, L2) or None for
    ``naive``; method; energy_loss = 1/2 dv^T M dv (the kinetic energy the consistent jump removes)."""

    v_plus: np.ndarray
    dv: np.ndarray
    impulse: np.ndarray | None
    method: str
    energy_loss: float


def _independent_rows(J: np.ndarray, tol: RankTolerance) -> np.ndarray:
    if J.shape[0] == 0:
        return np.zeros(0, int)
    return pivoted_qr(J, tol).independent_rows


# ----------------------------------------------------------------------------- the four forms
def _lagrangian(M, J1, J2, v, c1, c2, U):
    """Eq. (24): the KKT system with the persistent and activated constraints, (dv, L1, L2)."""
    n, m1 = len(v), J1.shape[0]
    J = np.vstack([J1, J2])
    K = np.block([[M, J.T], [J, np.zeros((J.shape[0], J.shape[0]))]])
    x = np.linalg.solve(K, np.concatenate([U, -(J1 @ v + c1), -(J2 @ v + c2)]))
    return x[:n], x[n:n + m1], x[n + m1:]


def _projected(M, J1, J2, v, c1, c2, U):
    """Eq. (32): redundant coordinates with the projector N_{J1,M}; L1 recovered afterwards."""
    n, m2 = len(v), J2.shape[0]
    N = nullspace_projector(M, J1)
    B = N.T @ J2.T
    K = np.block([[M, B], [J2 @ N, np.zeros((m2, m2))]])
    x = np.linalg.solve(K, np.concatenate([N.T @ U, -(J2 @ v + c2)]))
    return x[:n], None, x[n:]


def _minimal(M, J1, J2, v, c1, c2, U):
    """Eq. (37): constrained Voronets equations in the minimal coordinates s of J1; dv = F1 ds."""
    m2 = J2.shape[0]
    _, s = independent_coordinates(J1)
    F1 = orthogonal_complement(J1, s)
    G = J2 @ F1
    k = F1.shape[1]
    K = np.block([[F1.T @ M @ F1, G.T], [G, np.zeros((m2, m2))]])
    # -J2 F1 s'- of (37) is -J2 v- when J1 v- = 0; J2 v- also holds for rheonomic J1 (c1 != 0)
    x = np.linalg.solve(K, np.concatenate([F1.T @ U, -(J2 @ v + c2)]))
    return F1 @ x[:k], None, x[k:]


_FORMS = {"lagrangian": _lagrangian, "projected": _projected, "minimal": _minimal}


def transition(method: str, M: np.ndarray, J1: np.ndarray, J2: np.ndarray, v: np.ndarray, *,
               c1: np.ndarray | None = None, c2: np.ndarray | None = None, U: np.ndarray | None = None,
               tol: RankTolerance = RankTolerance()) -> Transition:
    """The velocity jump at the activation of J2 (m2, n) in addition to J1 (m1, n) (paper 002
    eqs 24, 32, 37; ``naive`` for comparison), see the module docstring.

    M (n, n), v (n,) = v-, c1 (m1,), c2 (m2,) = Phi_t (default 0), U (n,) impulsive applied force
    (default 0). Returns a :class:`Transition` with the impulse of every row of [J1; J2]."""
    if method not in TRANSITIONS:
        raise ValueError(f"unknown transition '{method}'; choose one of {', '.join(TRANSITIONS)}")
    n, m1, m2 = len(v), J1.shape[0], J2.shape[0]
    c1 = np.zeros(m1) if c1 is None else np.asarray(c1, float)
    c2 = np.zeros(m2) if c2 is None else np.asarray(c2, float)
    U = np.zeros(n) if U is None else np.asarray(U, float)
    if method == "naive":   # the free jump M^-1 U, then the Euclidean projection onto J+ v + c = 0
        J, c = np.vstack([J1, J2]), np.concatenate([c1, c2])
        v_free = v + np.linalg.solve(M, U) if np.any(U) else v
        dv = v_free - v - min_norm_solve(J, J @ v_free + c)
        return Transition(v + dv, dv, None, method, 0.5 * float(dv @ M @ dv))
    r1, r2 = _independent_rows(J1, tol), _independent_rows(J2, tol)
    if len(_independent_rows(np.vstack([J1[r1], J2[r2]]), tol)) < len(r1) + len(r2):
        raise SimulationError("the activated constraints are dependent on the persistent ones "
                              "(paper 002 assumption 3): the impulse is not unique.")
    try:
        dv, L1, L2 = _FORMS[method](M, J1[r1], J2[r2], v, c1[r1], c2[r2], U)
    except np.linalg.LinAlgError as exc:
        raise SimulationError(f"the {method} transition system is singular ({exc}).") from None
    if L1 is None:   # J1^T L1 = U - M dv - J2^T L2 (consistent: the right side lies in range J1^T)
        L1 = min_norm_solve(J1[r1].T, U - M @ dv - J2[r2].T @ L2)
    impulse = np.zeros(m1 + m2)
    impulse[r1], impulse[m1 + r2] = L1, L2
    return Transition(v + dv, dv, impulse, method, 0.5 * float(dv @ M @ dv))
