"""The packed model of the compiled kernels (issue 7 item 1, issue 16): markers, primitive rows, constant mass
matrix and generalized force of a model the kernels support, in the arrays :mod:`.kernels` documents; and
:class:`CompiledWorkspace`, a :class:`~multibody.assembly.Workspace` whose constraint and force evaluation
runs in one compiled call (the same numbers as the Workspace's Python evaluation: tests/test_fast_nullspace.py).

Supported (:func:`model_supported`): constraint groups that are builder primitives (Coincident, Distance,
Angle, LineProjection, CoordinateDriver; prescribed motions evaluated in Python, drivers are few), a constant
mass matrix, forces that are ConstantForce (uniform gravity) or none, no nonholonomic rows.
"""
from __future__ import annotations

import numpy as np

from ..assembly import Workspace
from ..model.constraints import Angle, Coincident, CoordinateDriver, Distance, LineProjection
from ..model.forces import ConstantForce

_KINDS = {Coincident: 0, Distance: 1, Angle: 2, LineProjection: 3, CoordinateDriver: 4}


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def model_supported(model) -> str | None:
    """None if the compiled kernels can evaluate this model, else the reason they cannot."""
    if model.h:
        return "nonholonomic rows"
    if model.mass_matrix is None:
        return "configuration-dependent mass matrix"
    bad = [type(g).__name__ for g in model.constraints if type(g) not in _KINDS]
    if bad:
        return f"constraint groups {', '.join(bad)}"
    bad = [type(e).__name__ for e in model.forces if type(e) is not ConstantForce]
    if bad:
        return f"force elements {', '.join(bad)}"
    return None


class _Packer:
    """Collects markers and primitive rows of all groups in the Workspace's row order."""

    def __init__(self, n):
        self.n, self.mcols, self.mloc, self.mvec, self.prim, self.pval = n, [], [], [], [], []

    def markers(self, ms):
        start = len(self.mloc)
        self.mcols.extend(np.asarray(ms.cols, int))
        self.mloc.extend(np.asarray(ms.local, float))
        self.mvec.extend([int(ms.is_vector)] * len(ms.local))
        return np.arange(start, start + len(ms.local))

    def group(self, g, row):
        kind = _KINDS[type(g)]
        if kind == 0:
            k = len(g.pi)
            a, b = self.markers(g.pi), self.markers(g.pj)
            rows, c, val = row + 2 * np.arange(k), np.zeros(k, int), np.zeros(k)
        elif kind == 1:
            a, b = self.markers(g.pi), self.markers(g.pj)
            rows, c, val = row + np.arange(len(a)), np.zeros(len(a), int), np.asarray(g.length, float)
        elif kind == 3:
            c, a, b = self.markers(g.e), self.markers(g.pi), self.markers(g.pj)
            rows, val = row + np.arange(len(a)), np.zeros(len(a))
        else:   # Angle: cols (k, 2) = theta_a, theta_b; CoordinateDriver: cols (k, 1)
            cols = np.asarray(g.cols, int)
            a, b = cols[:, 0], cols[:, -1]
            rows, c, val = row + np.arange(len(a)), np.zeros(len(a), int), np.zeros(len(a))
        for i in range(len(a)):
            self.prim.append([kind, rows[i], a[i], b[i], c[i]])
            self.pval.append(val[i])


def _offsets(model) -> np.ndarray:
    """(P,) constant offsets c of the primitive rows, in the order of :class:`_Packer` (one entry per joint of a
    Coincident group, one per row otherwise); zero for Coincident and Distance."""
    out = []
    for g in model.constraints:
        k = g.rows // 2 if isinstance(g, Coincident) else g.rows
        out.append(np.broadcast_to(np.asarray(getattr(g, "offset", 0.0), float), (k,)))
    return np.concatenate(out) if out else np.zeros(0)


class PackedModel:
    """The arrays of :mod:`.kernels` for a supported model: ``prim``, ``pval``, ``poff`` (constant offsets),
    ``mcols``, ``mloc``, ``mvec``; ``M`` (n, n), ``Minv``, ``diag`` (M diagonal), ``f`` (n,) the constant
    generalized force; ``motions``: (global row, Motion) of the driven rows."""

    def __init__(self, model):
        n = model.n
        pk, row = _Packer(n), 0
        for g in model.constraints:
            pk.group(g, row)
            row += g.rows
        self.prim = np.array(pk.prim, dtype=np.int64).reshape(-1, 5)
        self.pval = np.array(pk.pval, dtype=float)
        self.poff = np.ascontiguousarray(_offsets(model))
        self.mcols = np.array(pk.mcols, dtype=np.int64).reshape(-1, 3)
        self.mloc = np.array(pk.mloc, dtype=float).reshape(-1, 2)
        self.mvec = np.array(pk.mvec, dtype=np.int64)
        self.M = np.ascontiguousarray(model.mass_matrix, dtype=float)
        self.diag = bool(np.count_nonzero(self.M - np.diag(np.diag(self.M))) == 0)
        self.Minv = np.diag(1.0 / np.diag(self.M)) if self.diag else np.linalg.inv(self.M)
        self.f = np.zeros(n)
        for e in model.forces:
            self.f += np.asarray(e.g, float)[:n]
        self.motions = tuple((start + r, mo) for start, g in zip(np.cumsum([0] + [g.rows for g in model.constraints]),
                                                                 model.constraints) for r, mo in g.motions)

    def drive(self, t, shift, dshift, ddf) -> None:
        """shift, dshift, ddf (m,) <- f(t), f'(t), f''(t) of the prescribed motions (zero elsewhere)."""
        for row, motion in self.motions:
            shift[row], dshift[row], ddf[row] = motion(t)


class CompiledWorkspace(Workspace):
    """A Workspace whose ``constraints`` and ``forces`` are one compiled call (:func:`.kernels.assemble` and
    :func:`.step_kernels.constraint_phi`) for a model :func:`model_supported` accepts; fresh arrays, the same
    values as the Workspace's Python evaluation. Everything else (potential, sparse) is the Workspace's."""

    def __init__(self, model, pack: PackedModel | None = None):
        super().__init__(model)
        from .nullspace_kernels import evaluate       # numba loads only when the compiled path is used
        self.kernel, self.pack = evaluate, pack or PackedModel(model)
        m, n = self.m, model.n
        self.A, self.gamma, self.phi = np.zeros((m, n + 1)), np.zeros(m), np.zeros(m)
        self.shift, self.dshift, self.ddf = np.zeros(m), np.zeros(m), np.zeros(m)

    def constraints(self, t, q, v):
        """Phi (m,), A (m, n), Phi_t (m,), gamma (m,)."""
        p, n = self.pack, self.model.n
        self.qe[:n], self.ve[:n] = q, v
        p.drive(t, self.shift, self.dshift, self.ddf)
        self.kernel(self.qe, self.ve, p.prim, p.pval, p.poff, p.mcols, p.mloc, p.mvec, self.shift, self.ddf, self.A,
                    self.gamma, self.phi)
        return self.phi.copy(), self.A[:, :n].copy(), -self.dshift, self.gamma.copy()

    def forces(self, t, q, v) -> np.ndarray:
        return self.pack.f.copy()

    def solve_positions(self, q, t, tol):
        """q projected onto Phi(q, t) = 0 as kinematics.solve_positions does without held coordinates (the same
        pinned Gauss-Newton iterations, fast.project_kernels), or None where it did not converge (the caller then
        runs the reference, which raises the explanatory error; also where numba's SVD did not converge)."""
        from ..kinematics import PINNED_DRIFT
        from .project_kernels import project_positions
        p, L, x = self.pack, self.model.length_scale, np.array(q, dtype=float)
        if not self.m:
            return None
        p.drive(t, self.shift, self.dshift, self.ddf)
        try:
            ok = project_positions(x, p.prim, p.pval, p.poff, p.mcols, p.mloc, p.mvec, self.shift, tol.position * L,
                                   tol.pin * PINNED_DRIFT * L, tol.max_iterations, tol.polish, tol.pin, self.qe,
                                   self.ve, self.A, self.gamma, self.phi)
        except ValueError:      # numba's SVD did not converge (seen under OPENBLAS_CORETYPE=Prescott): the reference
            return None
        return x if ok else None


def compiled_workspace(model, fast: bool = True) -> CompiledWorkspace | None:
    """A :class:`CompiledWorkspace` when ``fast``, numba is installed, the model is supported and the kernels'
    cache is warm (or may be compiled now: :func:`.warm.use_compiled`); else None."""
    if not fast or not numba_available() or model_supported(model) is not None or model.n == 0:
        return None
    from .warm import use_compiled
    return CompiledWorkspace(model) if use_compiled() else None
