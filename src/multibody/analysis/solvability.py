"""Redundancy and solvability of joint reactions (paper 003 Sects 3.2-3.3, eqs 7, 15-27).

C = [Phi_q; Psi] ((m + h), n) with rank r has degree of redundancy p = m + h - r (eq. 7). The
generalized reaction of the whole system f = C^T lambda is unique, lambda is not: every
lambda + N d with N ((m + h), p) a basis of the left null space of C gives the same f. A kinematic
pair X (the rows whose label starts with "X.", i.e. a joint, driver or nonholonomic constraint) has
the reaction f_X = C_X^T lambda_X (eq. 16).

Tests, with ``tol`` = :class:`SolvabilityTolerance` (all relative to the 2-norm of C, since Q is
orthogonal and B_X scales like C):

- ``unique`` (eq. 27): pivoted QR C E = Q R (eq. 21; Q ((m+h), (m+h))); Q^col = the last p columns of
  Q (they span the left null space: the last p rows of R vanish); B_X = C_X^T Q_X^col (n, p);
  f_X is unique iff max |B_X| <= qr * |C|.
- ``unique_by_rank`` (eqs 17-20, direct sum Z = X (+) Y): unique iff
  rank(C_X) + rank(C_Y) = rank(C), ranks by SVD with threshold rank * |C|. Cross-check of the above.
- ``multipliers_unique``: lambda_X itself is unique iff Q_X^col = 0 (no left-null vector of C
  touches the rows of X); equivalently f_X unique AND C_X of full row rank (Sect. 3.2: "lambda_X
  can be uniquely determined only if C_X is a full rank matrix"). We test max |Q_X^col| <= qr.
- per reaction component (:func:`reaction_uniqueness`): a component c(f_X) of the joint reaction
  output (reactions.py, linear in lambda) is unique iff it vanishes for every left-null vector N d,
  i.e. |c(C, N_k)| <= qr * |C| * max(1, length_scale) for every column N_k (moments carry a length).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..assembly import Workspace
from ..model.system import Model


@dataclass(frozen=True)
class SolvabilityTolerance:
    """qr: B_X and Q_X^col entries below qr * |C|_2 count as zero (round-off of a QR is ~eps |C|; the
    default leaves 6 orders of margin); rank: singular values below rank * sigma_max are zero."""

    qr: float = 1e-9
    rank: float = 1e-9


@dataclass(frozen=True)
class PairVerdict:
    """One kinematic pair: ``rows`` its row indices in C; ``B_norm`` max |B_X| / |C|_2."""

    name: str
    rows: tuple[int, ...]
    unique: bool
    unique_by_rank: bool
    multipliers_unique: bool
    B_norm: float

    def to_dict(self, labels) -> dict:
        return {"name": self.name, "rows": [labels[i] for i in self.rows], "unique": self.unique,
                "multipliers_unique": self.multipliers_unique, "unique_by_rank": self.unique_by_rank}


@dataclass(frozen=True)
class Solvability:
    """Result of :func:`solvability`: rank r, p, N = Q^col ((m + h), p), pairs in row order."""

    m: int
    h: int
    rank: int
    redundancy: int
    null_left: np.ndarray
    pairs: tuple[PairVerdict, ...]
    labels: tuple[str, ...]

    def pair(self, name: str) -> PairVerdict:
        return next(p for p in self.pairs if p.name == name)

    @property
    def non_unique(self) -> list[str]:
        return [p.name for p in self.pairs if not p.unique]


def pair_rows(labels) -> dict[str, list[int]]:
    """Kinematic pair name (label prefix before the last '.') -> its row indices, in row order."""
    out: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        out.setdefault(label.rpartition(".")[0] or label, []).append(i)
    return out


def _rank(A: np.ndarray, scale: float, tol: float) -> int:
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.count_nonzero(s > tol * scale))


def solvability(C: np.ndarray, labels, *, m: int | None = None,
                tol: SolvabilityTolerance = SolvabilityTolerance(), check_rank: bool = True) -> Solvability:
    """Redundancy and reaction solvability of the constraint matrix C ((m + h), n) with row labels
    (paper 003 eqs 7, 21-27 and 15-20); ``m`` the number of holonomic rows (default: all).
    ``check_rank=False`` skips the rank cross-check (``unique_by_rank`` then copies ``unique``)."""
    C = np.asarray(C, dtype=float)
    rows = C.shape[0]
    scale = float(np.linalg.norm(C, 2)) if C.size else 1.0
    scale = scale if scale > 0 else 1.0
    if rows:
        Q, R, _ = sla.qr(C, pivoting=True, mode="full")          # C E = Q R  (eq. 21)
        diag = np.abs(np.diag(R))
        r = int(np.count_nonzero(diag > tol.rank * scale))
        N = Q[:, r:]                                               # Q^col: left null space of C
    else:
        r, N = 0, np.zeros((0, 0))
    pairs = []
    for name, idx in pair_rows(labels).items():
        CX, QX = C[idx], N[idx]
        B = CX.T @ QX                                              # eq. 27
        b_norm = float(np.max(np.abs(B), initial=0.0)) / scale
        unique = b_norm <= tol.qr
        if check_rank and r < rows:
            others = np.setdiff1d(np.arange(rows), idx)
            unique_rank = _rank(CX, scale, tol.rank) + _rank(C[others], scale, tol.rank) == r
        else:
            unique_rank = unique if check_rank is False else True     # p = 0: everything unique
        pairs.append(PairVerdict(name, tuple(idx), unique, bool(unique_rank),
                                 float(np.max(np.abs(QX), initial=0.0)) <= tol.qr, b_norm))
    return Solvability(rows if m is None else m, 0 if m is None else rows - m, r, rows - r, N,
                       tuple(pairs), tuple(labels))


def _full_row_rank(C: np.ndarray, tol: SolvabilityTolerance) -> bool:
    """True if :func:`solvability` would find rank r = rows (redundancy 0): the same pivoted QR
    (R only) and threshold. Then N = Q^col is empty and every pair and reaction is unique (eqs 21-27)."""
    C = np.asarray(C, dtype=float)
    if C.shape[0] == 0 or C.shape[0] > C.shape[1]:
        return C.shape[0] == 0
    frobenius = float(np.sqrt(np.vdot(C, C)))
    if not frobenius > 0:
        return False                              # solvability: scale 1, every |R_ii| = 0
    smallest = float(np.abs(_geqp3(C).diagonal()).min())
    if smallest > tol.rank * frobenius:           # |C|_F / sqrt(rows) <= |C|_2 <= |C|_F: most states
        return True                               # are decided without the SVD of |C|_2
    if smallest <= tol.rank * frobenius / np.sqrt(C.shape[0]):
        return False
    return smallest > tol.rank * float(np.linalg.svd(C, compute_uv=False)[0])    # |C|_2 = np.linalg.norm(C, 2)


def _unit_block(C: np.ndarray) -> tuple:
    """(columns, C[:, columns], bound): the columns of C whose entries are all 0 or +-1 (the translation columns of a
    chain's pin joints, constant by their formula) and bound = sigma_m(C[:, columns]) / sqrt(n), C (m, n).

    Why it bounds the pivoted QR of any C' (m, n) with the same block: sigma_m(C') = min over unit u of |C'^T u| >=
    |block^T u| >= sigma_m(block) (a subvector). At step i of QR with column pivoting, |R_ii| is the largest norm of
    the columns projected onto the complement of the first i - 1 columns of Q; for a unit u in that complement it is
    >= max_j |u^T c_j| >= |C'^T u| / sqrt(n) >= sigma_m(C') / sqrt(n) (Golub & Van Loan, Matrix Computations, 4th
    ed., Sect. 5.4.2). LAPACK's dgeqp3 computes this for C' + E with |E| ~ n eps |C'|, and picks its pivots from
    norms downdated to ~sqrt(eps) (LAPACK Working Note 176): both far inside the factor 2 that
    :meth:`ReactionFlags._bounded` keeps, since the threshold rank |C'|_F (rank = 1e-9) is ~1e5 times n eps
    |C'|. An empty block or fewer such columns than rows: bound 0 (never used)."""
    C = np.asarray(C, dtype=float)
    m, n = C.shape
    cols = np.flatnonzero(np.all((C == 0.0) | (np.abs(C) == 1.0), axis=0) & np.any(C != 0.0, axis=0))
    block = C[:, cols].copy()
    if m == 0 or len(cols) < m:
        return cols, block, 0.0
    return cols, block, float(np.linalg.svd(block, compute_uv=False)[m - 1]) / np.sqrt(n)


_GEQP3_LWORK: dict = {}


def _geqp3(C: np.ndarray) -> np.ndarray:
    """The packed result of LAPACK dgeqp3 on C as scipy.linalg.qr(C, pivoting=True) computes it (same
    routine, same optimal workspace), without its checks, Q and triu: R is its upper triangle."""
    from scipy.linalg.lapack import dgeqp3
    lwork = _GEQP3_LWORK.get(C.shape)
    if lwork is None:
        lwork = _GEQP3_LWORK[C.shape] = int(dgeqp3(C, lwork=-1)[-2][0])
    out = dgeqp3(C, lwork=lwork)
    if out[-1] != 0:
        raise ValueError(f"illegal value in {-out[-1]}th argument of internal geqp3")
    return out[0]


def solvability_at(model: Model, q: np.ndarray, t: float = 0.0, *, ws: Workspace | None = None,
                   tol: SolvabilityTolerance = SolvabilityTolerance()) -> Solvability:
    """:func:`solvability` of C(q, t) of a model (velocities do not enter C)."""
    ws = ws or Workspace(model)
    C = ws.velocity_constraints(t, np.asarray(q, float), np.zeros(model.n))[1]
    return solvability(C, model.velocity_labels, m=ws.m, tol=tol)


def reactions_report(model: Model, configuration: str | None = None, t: float = 0.0) -> list[dict]:
    """``analyze`` output: one dict per kinematic pair (name, rows, unique, multipliers_unique,
    unique_by_rank) at the named configuration, assembled onto Phi = 0 first."""
    from ..kinematics import solve_positions

    q = solve_positions(model, model.configuration(configuration), t, hold=model.hold)
    sol = solvability_at(model, q, t)
    return [p.to_dict(model.velocity_labels) for p in sol.pairs]


def reaction_uniqueness(model: Model, q: np.ndarray, C: np.ndarray, sol: Solvability, rmap,
                        tol: SolvabilityTolerance = SolvabilityTolerance()) -> np.ndarray:
    """(len(rmap.labels),) bool: whether each joint-reaction component (reactions.ReactionMap) is
    unique, i.e. unchanged by lambda -> lambda + N d for every d (see the module docstring)."""
    N = sol.null_left
    if N.shape[1] == 0:
        return np.ones(len(rmap.labels), bool)
    scale = float(np.linalg.norm(C, 2)) * max(1.0, model.length_scale)
    return null_variation(rmap, q, C, N) <= tol.qr * max(scale, np.finfo(float).tiny)


def null_variation(rmap, q: np.ndarray, C: np.ndarray, N: np.ndarray) -> np.ndarray:
    """(len(rmap.labels),) max over the columns d of N of |reactions(q, C, d)|: how far each reaction component
    moves under lambda -> lambda + N d (paper 003 eq. 27 applied to the reactions, which are linear in lambda).
    All columns in one call of the map's ``finish`` (planar :class:`~multibody.analysis.reactions.ReactionMap` or
    spatial map), the same numbers as one ``values`` call per column."""
    p = N.shape[1]
    Qe = np.stack([rmap.generalized(C, N[:, k]) for k in range(p)])
    return np.abs(rmap.finish(np.broadcast_to(q, (p, len(q))), Qe).reshape(p, -1)).max(axis=0)


class ReactionFlags:
    """Per-step uniqueness flags for a run (used by simulation.recorder.Recorder): series ``reactions_unique``
    (1.0/0.0 per joint-reaction column) and ``multipliers_unique`` (per row of C: 1.0 if the row's
    pair has unique multipliers), plus summary entries; reactions are never reported as if unique
    when the analysis says they are not (paper 003 Sect. 5)."""

    def __init__(self, model: Model, rmap, tol: SolvabilityTolerance = SolvabilityTolerance()):
        self.model, self.rmap, self.tol = model, rmap, tol
        self.redundancy, self.non_unique = 0, set()
        self.block = None       # (columns, C[:, columns], bound) of the first state (_unit_block)

    def record(self, q: np.ndarray, C: np.ndarray) -> dict:
        """{series: (values, labels)} at configuration q with C ((m + h), n)."""
        if self._bounded(C) or _full_row_rank(C, self.tol):     # the common case, decided as solvability() does
            return self._all_unique()
        labels = self.model.velocity_labels
        sol = solvability(C, labels, m=self.model.m, tol=self.tol, check_rank=False)
        self.redundancy = max(self.redundancy, sol.redundancy)
        self.non_unique.update(sol.non_unique)
        mult = np.zeros(len(labels))
        for p in sol.pairs:
            mult[list(p.rows)] = float(p.multipliers_unique)
        out = {"multipliers_unique": (mult, labels)}
        if self.rmap is not None:
            flags = reaction_uniqueness(self.model, q, C, sol, self.rmap, self.tol)
            out["reactions_unique"] = (flags.astype(float), self.rmap.labels)
        return out

    def _bounded(self, C: np.ndarray) -> bool:
        """:meth:`bounded` of one C ((m + h), n)."""
        return bool(self.bounded(C[None])[0])

    def bounded(self, C: np.ndarray) -> np.ndarray:
        """(k,) bool for a stack C (k, (m + h), n): True where :func:`_full_row_rank` is True without its QR (issue 16:
        per stored state): C has the columns of the first state's :func:`_unit_block` with the same entries, so
        sigma_m(C) >= sigma_m(block), and the bound proves min |R_ii| above the threshold rank |C|_F."""
        if self.block is None:
            self.block = _unit_block(C[0])
        cols, block, bound = self.block
        if C.shape[1] != block.shape[0]:
            return np.zeros(len(C), bool)
        frob = np.sqrt(np.einsum("kij,kij->k", C, C))
        return (C[:, :, cols] == block).all(axis=(1, 2)) & (bound > 2.0 * self.tol.rank * frob)

    def _all_unique(self) -> dict:
        """The flags of a C of full row rank (no left null space): everything unique; built once,
        read-only (the Recorder stores rows, it never writes them)."""
        if getattr(self, "_ones", None) is None:
            labels = self.model.velocity_labels
            self._ones = {"multipliers_unique": (np.ones(len(labels)), labels)}
            if self.rmap is not None:
                self._ones["reactions_unique"] = (np.ones(len(self.rmap.labels)), self.rmap.labels)
            for values, _ in self._ones.values():
                values.flags.writeable = False
        return self._ones

    def summary(self) -> dict:
        return {"redundancy_max": self.redundancy, "non_unique_reactions": sorted(self.non_unique)}
