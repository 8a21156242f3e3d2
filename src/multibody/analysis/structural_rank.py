"""Full row rank of the holonomic Jacobian at every configuration, certified from its structure (issue 16).

A singular configuration is a point of the constraint manifold where A = Phi_q loses rank (paper 000 Sect.
2.5). For an open chain or tree of revolute and weld joints no such point exists: order the joints from the
leaves to the root; each joint's two Coincident rows carry the child body's (x, y) columns with the constant
entries +-1 (a marker point moves with its body's translation), and no joint nearer the root touches those
columns. Taking these columns as pivots, A restricted to them is, after permutation, triangular with the
diagonal +-1, so det = +-1 and rank A = m for every q and t.

:func:`full_row_rank_everywhere` finds such a pivot sequence for any model by column-singleton elimination
(the first step of a sparse LU's ordering, Duff, Erisman & Reid, Direct Methods for Sparse Matrices, Sect. 8.3):
repeatedly take a column with exactly one nonzero among the remaining rows, whose value is a constant +-1 by
the group's formula (Coincident translation entries, Angle, CoordinateDriver), and remove that row. If every
row is removed, the pivots form a triangular square block with constant unit diagonal: the certificate. If
not, nothing is claimed (a closed loop, a prismatic or distance joint whose entries vary, a redundant row, a
user-defined group, which is not even evaluated) and the crossing monitor samples the run as before.

The nonzero pattern is the union over three configurations and times drawn at random (a fixed seed): an entry
that is a nonzero analytic function of (q, t) vanishes at a random point with probability zero; a pattern that
misses an entry would only be sparser, so the random points are needed for the pattern, never for the pivot
values, which the group formulas make exactly +-1.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..assembly import Workspace
from ..model.constraints import Angle, Coincident, CoordinateDriver, Distance, LineProjection

#: groups whose +-1 entries are constant by their formula (model.constraints): translation columns of
#: Coincident, both columns of Angle, the one column of CoordinateDriver
UNIT_PIVOT_GROUPS = (Coincident, Angle, CoordinateDriver)
#: the groups whose formulas the pattern may be sampled from (model.constraints' primitives); a model with any other
#: group (a user's Generic rows, director constraints) is not examined: its code is not evaluated at random points
KNOWN_GROUPS = UNIT_PIVOT_GROUPS + (Distance, LineProjection)
#: random configurations that give the nonzero pattern
PATTERN_SAMPLES = 3


def _entries(model, ws: Workspace, rng) -> tuple[sp.csc_matrix, set]:
    """(pattern, unit pivots): the (m, n) boolean CSC matrix of the structural nonzeros of A, and the entries
    (as i * n + j) that are +-1 at every sample in a UNIT_PIVOT_GROUPS group."""
    n, rows, cols, unit, nonzero = model.n, [], [], [], []
    samples = [(float(rng.uniform(-1.0, 1.0)), rng.uniform(-np.pi, np.pi, n + 1), rng.standard_normal(n + 1))
               for _ in range(PATTERN_SAMPLES)]
    for g, r, c in zip(model.constraints, ws.rows, ws.cols):
        jacs = np.stack([np.broadcast_to(g.evaluate(t, q, v).jac, c.shape) for t, q, v in samples])
        keep = c < n                                        # the ground column is not a coordinate
        rows.append(r[keep])
        cols.append(c[keep])
        nonzero.append((jacs != 0.0).any(axis=0)[keep])
        unit.append(((np.abs(jacs) == 1.0).all(axis=0) & isinstance(g, UNIT_PIVOT_GROUPS))[keep])
    r, c = np.concatenate(rows), np.concatenate(cols)
    nz, un = np.concatenate(nonzero), np.concatenate(unit)
    pattern = sp.csc_matrix((np.ones(int(nz.sum()), bool), (r[nz], c[nz])), shape=(ws.m, n))
    return pattern, set((r[un & nz] * n + c[un & nz]).tolist())


def full_row_rank_everywhere(model, ws: Workspace | None = None) -> bool:
    """True if A = Phi_q (holonomic rows) has rank m at every configuration and time, proved by the unit-pivot
    column-singleton elimination of the module docstring; False means "not proved", not "singular". Once per
    model (a run's start and every event that changes the constraints), O(nnz) with a Python loop over the
    pivots: setup, not the hot path."""
    ws = Workspace(model) if ws is None else ws
    if ws.m == 0:
        return True
    if not all(type(g) in KNOWN_GROUPS for g in model.constraints):
        return False
    pattern, unit = _entries(model, ws, np.random.default_rng(0))
    by_row = pattern.tocsr()
    count = np.diff(pattern.indptr).astype(np.int64)     # remaining rows with a nonzero, per column
    alive = np.ones(ws.m, bool)
    stack = list(np.flatnonzero(count == 1))
    removed = 0
    while stack:
        j = stack.pop()
        if count[j] != 1:
            continue
        rows_j = pattern.indices[pattern.indptr[j]:pattern.indptr[j + 1]]
        i = int(rows_j[alive[rows_j]][0])
        if i * model.n + j not in unit:
            continue
        alive[i] = False
        removed += 1
        touched = by_row.indices[by_row.indptr[i]:by_row.indptr[i + 1]]
        count[touched] -= 1
        stack.extend(touched[count[touched] == 1].tolist())
    return removed == ws.m
