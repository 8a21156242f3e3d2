"""Mobility analysis at a configuration: rank, DOF, redundancy, singularity, admissible motions
(paper 000 Sect. 2.5, eqs 23-28; paper 003 eqs 21-27 for the pivoted-QR row selection).

With the pivoted QR  A^T P = Q R  (linalg.pivoted_qr) of the m holonomic rows (h nonholonomic rows: 0
here): rank r = #{|R_ii| > rtol |R_11|} (linalg.RankTolerance, scale-aware, rtol = sqrt(eps)),
dof = n - r, redundancy = m + h - r, admissible motions T = Q[:, r:] (eqs 25, 28), redundant rows
= the rows P put after the first r (their labels name the joint and component).

``singular``: the rank is lower than at nearby configurations on the constraint manifold. Probed by
moving along the tangent of each solution branch through q (analysis.branches: the admissible motions
that satisfy the second-order condition) by +-``probe`` * model.length_scale, projecting back onto
Phi = 0 (minimum-norm Gauss-Newton) and taking the largest rank found there (``nearby_rank``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assembly import Workspace
from ..errors import MultibodyError
from ..kinematics import solve_positions
from .branches import branch_tangents
from ..linalg.rank import RankTolerance, pivoted_qr
from ..model.system import Model


#: a probe along a branch tangent is moved by the projection O(probe^2 L); more than this fraction of the
#: probe means it left the branch (an O(probe) correction)
PROBE_CURVATURE = 0.1


@dataclass(frozen=True)
class Mobility:
    """Typed result of :func:`analyze`; ``admissible_motions`` (n, dof)."""

    model: str
    configuration: str
    n: int
    m: int
    h: int
    rank: int
    dof: int
    redundancy: int
    singular: bool
    nearby_rank: int
    R_diag: np.ndarray
    admissible_motions: np.ndarray
    redundant_rows: tuple[str, ...]
    coordinate_names: tuple[str, ...]
    rank_rtol: float

    def to_dict(self) -> dict:
        return {"model": self.model, "configuration": self.configuration, "n": self.n, "m": self.m,
                "h": self.h, "rank": self.rank, "dof": self.dof, "redundancy": self.redundancy,
                "singular": self.singular, "nearby_rank": self.nearby_rank,
                "R_diag": self.R_diag.tolist(), "admissible_motions": self.admissible_motions.tolist(),
                "redundant_rows": list(self.redundant_rows),
                "coordinate_names": list(self.coordinate_names), "rank_rtol": self.rank_rtol}


def rank_at(model: Model, q: np.ndarray, t: float = 0.0, *, ws: Workspace | None = None,
            tol: RankTolerance = RankTolerance()):
    """The pivoted QR (linalg.PivotedQR) of C(q, t)^T, C = [Phi_q; Psi] (= A without nonholonomic rows)."""
    ws = ws or Workspace(model)
    return pivoted_qr(ws.velocity_constraints(t, q, np.zeros(model.n))[1], tol)


def nearby_rank(model: Model, q: np.ndarray, T: np.ndarray, t: float = 0.0, *, probe: float = 1e-3,
                ws: Workspace | None = None, tol: RankTolerance = RankTolerance()) -> int:
    """Largest rank at the configurations q +- probe * L * u projected onto Phi = 0, u the tangents of the
    solution branches through q (analysis.branches: combinations of the admissible motions T that satisfy
    the second-order condition; an arbitrary admissible motion can lead off every branch). A probe whose
    projection moves it by more than PROBE_CURVATURE * probe * L is not on the branch and is skipped."""
    ws = ws or Workspace(model)
    rows = ws.m + ws.h
    if model.n - T.shape[1] >= rows:        # full row rank at q: no configuration has a larger rank
        return rows
    best = 0
    for col in branch_tangents(model, q, T, t, ws=ws, tol=tol).T:
        if best == rows:
            break
        for sign in (1.0, -1.0):
            step = sign * probe * model.length_scale * col
            try:
                qj = solve_positions(model, q + step, t, ws=ws)
            except MultibodyError:
                continue
            if np.linalg.norm(qj - q - step) <= PROBE_CURVATURE * np.linalg.norm(step):
                best = max(best, rank_at(model, qj, t, ws=ws, tol=tol).rank)
    return best


def analyze(model: Model, configuration: str | None = None, *, q=None, t: float = 0.0,
            tol: RankTolerance = RankTolerance(), probe: float = 1e-3) -> Mobility:
    """Mobility of ``model`` at the named configuration (default: initial) or at q (n,)."""
    ws = Workspace(model)
    q = np.asarray(model.configuration(configuration) if q is None else q, dtype=float)
    Phi = ws.constraints(t, q, np.zeros(model.n))[0]
    if Phi.size and np.max(np.abs(Phi)) > 1e-6 * model.length_scale:
        q = solve_positions(model, q, t, hold=model.hold, ws=ws)
    pqr = rank_at(model, q, t, ws=ws, tol=tol)
    T = pqr.null_space
    near = nearby_rank(model, q, T, t, probe=probe, ws=ws, tol=tol) if T.shape[1] else pqr.rank
    labels = model.velocity_labels      # rows of C = [Phi_q; Psi] (paper 003 eq. 5)
    return Mobility(model.name, configuration or "initial", model.n, ws.m, ws.h, pqr.rank, model.n - pqr.rank,
                    ws.m + ws.h - pqr.rank, near > pqr.rank, max(near, pqr.rank), pqr.R_diag, T,
                    tuple(labels[i] for i in pqr.redundant_rows), model.coordinate_names, tol.rtol)
