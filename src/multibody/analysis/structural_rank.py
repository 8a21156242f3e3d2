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
from ..model.director import LowerPairs, SpatialBodies, fold_ground, internal_rows, pair_rows

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


#: director pairs the tree certificate covers (paper 004 Sect. 4.5): spherical and revolute
DIRECTOR_PAIRS = ("S", "R")
#: largest (n . a_1)^2 + (n . a_2)^2 of a revolute pair's orientation rows (their constants) that the certificate
#: accepts: below 1 the rows stay independent (see director_tree_full_rank); 1/2 leaves room for the rounding of
#: the stored unit vectors (orthonormal to UNIT_TOL)
AXIS_OFFSET_MAX = 0.5
UNIT_TOL = 1e-12


def full_row_rank_on_manifold(model, ws: Workspace | None = None) -> bool:
    """True if A = Phi_q has rank m at every configuration of the constraint manifold (every q and t for the planar
    certificate, :func:`full_row_rank_everywhere`; every q with Phi(q) = 0 for :func:`director_tree_full_rank`):
    then the model has no singular configuration. False means "not proved"."""
    return director_tree_full_rank(model) or full_row_rank_everywhere(model, ws)


#: director_tree_full_rank's answers for the last models asked, by the identity of their constraint groups (kept
#: alive here, so the identity is not reused): a run asks once per segment, a benchmark runs one model many times
_KNOWN: dict = {}
_KNOWN_MAX = 16


def director_tree_full_rank(model) -> bool:
    """True if ``model`` is a forest of spatial director bodies joined by S and R pairs only (paper 004 Sects 3-4.5:
    every group the builder's internal rows or its S/R pair rows, each body the child of at most one pair, no
    cycle); then A = Phi_q has rank m at every q with Phi(q) = 0.

    Proof (dim null A = n - m). On Phi = 0 each body's directors D_b = [d1 d2 d3] are orthonormal (internal rows,
    eq. 24: d_i . d_j = delta_ij), so their rows' null space, D_b^T dD + dD^T D_b = 0, is dD = W D_b with W skew:
    a body's velocity is (u_b, omega_b) in R^6, entered injectively (dd_i = omega_b x d_i, D_b a basis). A pair's
    point rows (eq. 80) p_c - p_p = 0 differentiate to u_c = u_p + omega_p x D_p X1 - omega_c x D_c X2 (u_p =
    omega_p = 0 at the ground): the child's u_c is fixed by its own omega_c and its parent. A revolute pair's
    orientation rows (eq. 100, here n . a_k + c_k = 0 with n = D_p n^1 and a_k = D_c a^2_k orthonormal, unit n)
    differentiate to (omega_p - omega_c) . (n x a_k) = 0, k = 1, 2; n x a_1 and n x a_2 are dependent only if n lies
    in span(a_1, a_2), i.e. (n . a_1)^2 + (n . a_2)^2 = c_1^2 + c_2^2 = 1, which the certificate excludes
    (<= AXIS_OFFSET_MAX): omega_c is then omega_p plus a line. Taking bodies parent before child, the null
    space of A is parametrised injectively by (u, omega) of each root (6), omega_c of each S child (3) and one
    number per R child (1): dim null A = 6 N - 3 #S - 5 #R = 12 N - (6 N + 3 #S + 5 #R) = n - m. So rank A = m.

    The rows are checked to be exactly the formulas of the proof: recomputed from the pairs' stored geometry by
    model.director (pair_rows, fold_ground, internal_rows) and compared entry by entry. Set-up cost, no hot path.
    Closed loops (the six-body linkage), C, P and E pairs, drivers, user rows: not claimed (False)."""
    key = id(model.constraints)
    if key not in _KNOWN:
        if len(_KNOWN) >= _KNOWN_MAX:
            _KNOWN.pop(next(iter(_KNOWN)))
        _KNOWN[key] = (model.constraints, _director_tree(model))
    return _KNOWN[key][1]


def _director_tree(model) -> bool:
    """director_tree_full_rank without the cache."""
    groups = model.constraints
    if model.m == 0 or not groups or type(groups[0]) is not SpatialBodies:
        return False
    if not all(type(g) is LowerPairs and g.kind in DIRECTOR_PAIRS for g in groups[1:]):
        return False
    bodies = groups[0]
    nb = len(bodies.names)
    if model.n != 12 * nb or not np.array_equal(bodies.body_cols, np.arange(12 * nb).reshape(nb, 12)):
        return False
    H, g, c = internal_rows()
    if not (np.array_equal(bodies.H, np.tile(H, (nb, 1, 1))) and np.array_equal(bodies.g, np.tile(g, (nb, 1)))
            and np.array_equal(bodies.c, np.tile(c, nb))
            and np.array_equal(bodies.cols, np.repeat(bodies.body_cols, 6, axis=0))):
        return False
    parent = {}
    for pairs in groups[1:]:
        if not all(_pair_as_proved(pairs, k, nb) for k in range(len(pairs.joint_names))):
            return False
        for p, ch in zip(pairs.parent.tolist(), pairs.child.tolist()):
            if ch in parent or not 0 <= ch < nb or not -1 <= p < nb:
                return False
            parent[ch] = p
    return _acyclic(parent)


def _pair_as_proved(pairs, k: int, nb: int) -> bool:
    """Joint k of a LowerPairs group: its rows are model.director.pair_rows of its stored geometry (folded at the
    ground), on the columns of its two bodies, with orthonormal vectors and orientation constants within
    AXIS_OFFSET_MAX (see director_tree_full_rank)."""
    rows = 3 if pairs.kind == "S" else 5
    sel = slice(rows * k, rows * (k + 1))
    p, ch = int(pairs.parent[k]), int(pairs.child[k])
    H, g = pair_rows(pairs.kind, pairs.X1[k], pairs.X2[k], pairs.n[k], pairs.m1[k], pairs.m2[k], pairs.a2[k])
    if p < 0:
        H, g, _ = fold_ground(H, g, np.zeros(rows))
    pcols = np.full(12, 12 * nb) if p < 0 else np.arange(12 * p, 12 * p + 12)
    cols = np.concatenate([pcols, np.arange(12 * ch, 12 * ch + 12)])
    a = pairs.a2[k]
    frame = np.array([pairs.n[k] @ pairs.n[k], a[0] @ a[0], a[1] @ a[1], 1.0 + a[0] @ a[1]])
    return (pairs.H.shape[0] == rows * len(pairs.joint_names) and np.array_equal(pairs.H[sel], H)
            and np.array_equal(pairs.g[sel], g) and np.array_equal(pairs.cols[sel], np.tile(cols, (rows, 1)))
            and np.max(np.abs(frame - 1.0)) <= UNIT_TOL
            and float(np.sum(pairs.c[sel][3:] ** 2)) <= AXIS_OFFSET_MAX)


def _acyclic(parent: dict) -> bool:
    """No body is its own ancestor (parent -1: the ground)."""
    for start in parent:
        seen, b = set(), start
        while b in parent:
            if b in seen:
                return False
            seen.add(b)
            b = parent[b]
    return True
