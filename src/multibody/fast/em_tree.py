"""The reduced energy-momentum step compiled (issue 16: spatial models; paper 004 Sects 4.3-4.5, 5.4, eq. 190):
the kinematic tree of :mod:`multibody.model.director_tree` packed into arrays (:class:`TreeTable`) for the kernels
of :mod:`.em_tree_kernels` and :mod:`.em_reduced_kernels`, and the calls the stepper makes: the whole Newton
iteration of one start (:meth:`TreeTable.newton`) and the null-space matrix P(q) (:meth:`TreeTable.null_space`).

Supported where the constrained step's compiled path is (:func:`multibody.fast.spatial.quadratic_table`: time-
independent quadratic constraints, numba, a warm cache or the ``"wait"`` policy) and the forces are uniform
gravity only; otherwise the stepper keeps the NumPy reference (``ReducedNewton``), which computes the same
numbers and stays their readable definition.
"""
from __future__ import annotations

import numpy as np

from ..model.director_tree import Tree, pair_frames
from .spatial import QuadraticTable

#: pair kinds in the kernels' numbering (em_tree_kernels: S, R, C, P, E = 0..4)
KINDS = {"S": 0, "R": 1, "C": 2, "P": 3, "E": 4}


def _ints(x):
    return np.ascontiguousarray(np.asarray(x, dtype=np.int64).reshape(-1))


class TreeTable:
    """The tree of a reduced energy-momentum stepper as the kernels' tuple ``tr`` (em_tree_kernels' docstring)
    and the constraint table of the closure rows (``closure``, renumbered from the model's ``table``)."""

    def __init__(self, tree: Tree, q0: np.ndarray, table: QuadraticTable, M: np.ndarray):
        nb = len(tree.bodies.names)
        k, i = np.nonzero(M)                        # the mass matrix's entries (diagonal for director bodies)
        self.mm = (_ints(k), _ints(i), np.ascontiguousarray(M[k, i], dtype=np.float64))
        self.M = np.ascontiguousarray(M, dtype=np.float64)
        self.n, self.d, self.table = table.n, tree.d, table
        js = tree.joints
        ground = lambda b: nb if b < 0 else b      # noqa: E731  (the ground is body index nb in the kernels)
        vec = np.array([[j.X1, j.X2, j.n, j.m1, j.m2] for j in js], dtype=np.complex128).reshape(len(js), 5, 3)
        frames = pair_frames(tree, q0)               # which roots turn in a pair frame is fixed by the tree
        roots = [b for b, _ in tree.roots]
        self.framed = [b for b in roots if b in frames]
        frame_of = [roots.index(j.parent) if j.parent in frames and frames[j.parent][1] == j.name else -1
                    for j in js]
        self.root_Q = np.zeros((len(roots), 3, 3), dtype=np.complex128)
        self.tr = (np.ascontiguousarray(tree.bodies.body_cols, dtype=np.int64), _ints([KINDS[j.kind] for j in js]),
                   _ints([ground(j.parent) for j in js]), _ints([j.child for j in js]), _ints([j.start for j in js]),
                   np.ascontiguousarray(vec), _ints(frame_of), _ints(roots), _ints([s for _, s in tree.roots]),
                   self.root_Q, _ints([b in frames for b in roots]), np.int64(tree.unknowns == "joint"))
        self.roots = roots
        self._closure, self._dep = (None, None, None), (None, None)

    def set_frames(self, frames: dict) -> None:
        """This step's pair frames (director_tree.pair_frames at q_n) into the packed tree."""
        for b in self.framed:
            self.root_Q[self.roots.index(b)] = frames[b][0]

    def _choice(self, dep, free):
        """dep, free as int64 (cached while the stepper keeps the same arrays)."""
        if self._dep[0] is not dep or self._dep[1] is not free:
            self._dep = (dep, free, _ints(dep), _ints(free))
        return self._dep[2:]

    def closure(self, rows: np.ndarray) -> tuple:
        """The entry table (spatial_kernels' layout) of the constraint rows ``rows``, renumbered 0..k-1 in that
        order (cached per row set)."""
        if self._closure[0] is rows:
            return self._closure[1]
        key = tuple(int(r) for r in rows)
        if self._closure[2] != key:
            hk, hi, hj, hv, gk, gi, gv, c = self.table.tab
            index = np.full(len(c), -1, dtype=np.int64)
            index[np.asarray(rows, dtype=np.int64)] = np.arange(len(rows))
            h, g = index[hk] >= 0, index[gk] >= 0
            sub = (_ints(index[hk[h]]), _ints(hi[h]), _ints(hj[h]), np.ascontiguousarray(hv[h]),
                   _ints(index[gk[g]]), _ints(gi[g]), np.ascontiguousarray(gv[g]), np.ascontiguousarray(c[list(key)]))
            self._closure = (rows, sub, key)
        self._closure = (rows,) + self._closure[1:]
        return self._closure[1]

    def null_space(self, q: np.ndarray) -> np.ndarray:
        """P(q) (n, d) = director_tree.null_space_matrix(tree, q) (real q), compiled."""
        from .em_reduced_kernels import null_space_at
        return null_space_at(np.ascontiguousarray(q, dtype=np.complex128), self.tr, self.d)

    def newton(self, qn, vn, force, dt, closure_rows, dep, free, cscale, mu, *, tol, length, max_it, step,
               want_cond):
        """One Newton iteration of the reduced step from mu (em_reduced_kernels.reduced_newton; force = dt grad V):
        (dq or None when it does not converge or meets a singular matrix, the root mu, iterations, condition
        number or NaN, the smallest |det| of the mid-point frames)."""
        from .em_reduced_kernels import reduced_newton
        dq, out = np.empty(self.n), np.empty(3)
        mu = mu.astype(np.complex128)
        try:
            reduced_newton(qn.astype(np.complex128), np.ascontiguousarray(vn, dtype=np.float64), self.M, force,
                           self.mm, dt, self.tr, self.closure(closure_rows),
                           *self._choice(dep, free), cscale, mu, tol, length, max_it, step, want_cond, dq, out)
        except np.linalg.LinAlgError:
            return None, mu.real, -1, np.nan, 1.0
        it = int(out[0])
        return (dq if it >= 0 else None), mu.real.copy(), it, float(out[1]), float(out[2])
