"""Energy-momentum steps taken ahead in one compiled call (issue 16): :class:`StepBatch` runs the loop of
:mod:`.em_batch_kernels` for up to ``size`` fixed steps h from the current state and hands the states out one by
one, with each step's Newton iterations, condition number and multipliers (constrained) or root mu (reduced), so
that the stepper (:class:`multibody.integrate.em_stepper.EnergyMomentum`) reports exactly what the step-by-step
path reports. Where the loop stops early (a step the Python stepper handles differently: a possibly dependent
row, no convergence from the extrapolated start, a large turn) that step is taken by
``EnergyMomentumStepper.step`` itself, and the next batch starts behind it.

Applies (:func:`batch_applies`) to the compiled paths of both schemes with uniform gravity only (the compiled
steps' own condition) and no per-step Python choice: the constrained scheme (its choice of independent rows made in
the loop by the same LAPACK call, n <= 200, or certified to keep every row), the reduced one without closure rows and
without pair frames (model.director_tree.pair_frames, set per step in Python). Otherwise the stepper steps as before.
"""
from __future__ import annotations

import numpy as np

from ..model.director_tree import predictor
from .packed import numba_available

#: steps per compiled call (bounded: the stored states of a long run are not all held at once, issue 17)
BATCH_STEPS = 512
#: after a batch that could not take its first step, the stepper takes this many steps alone before trying again
PAUSE_STEPS = 16


def batch_applies(em) -> bool:
    """Whether the stepper ``em`` (EnergyMomentumStepper) can take its steps in batches."""
    if em.forces:
        return False
    if em.scheme == "constrained":     # every row kept, or rows chosen by row_pivots' LAPACK call (n <= 200)
        return em.fast is not None and em.model.m > 0 and (len(em.rows) == em.model.m or em.model.n <= 200)
    return em.compiled is not None and len(em.all_closure_rows) == 0 and not em._framed


class StepBatch:
    """``em``: the EnergyMomentumStepper; ``complex_step``: its reduced Newton's complex step
    (integrate.em_reduced.COMPLEX_STEP). ``take(q, v, remaining)`` -> y = [q, v] (a view of the batch's array,
    never written again) of the next step from the state (q, v) (the previous step's state, or any state after the
    stepper stepped alone), with ``em``'s per-step attributes set as its own step sets them; None when that step
    must be taken by ``em.step``."""

    def __init__(self, em, complex_step: float, size: int | None = None):
        self.em, self.h = em, float(complex_step)      # h: the reduced Jacobians' complex step
        self.size = int(BATCH_STEPS if size is None else size)
        self.k = self.count = 0
        self.pause = 0
        self.done = np.zeros(1, dtype=np.int64)

    def take(self, q, v, remaining: int):
        if self.k < self.count:
            return self._pop()
        if self.pause > 0:
            self.pause -= 1
            return None
        steps = max(1, min(self.size, remaining))
        self._fill(np.ascontiguousarray(q, dtype=np.float64), np.ascontiguousarray(v, dtype=np.float64), steps)
        if self.count == 0:
            self.pause = PAUSE_STEPS
            return None
        # a batch that stopped early leaves the step it stopped at to the stepper (rows chosen anew, another start),
        # then tries again: a batch from that state would stop at once and pause PAUSE_STEPS steps
        self.pause = 1 if self.count < steps else 0
        return self._pop()

    def _fill(self, q, v, steps: int) -> None:
        em, n = self.em, q.shape[0]
        self.Y = np.empty((steps, 2 * n))      # fresh per batch: the states handed out are views of it
        self.IT, self.COND = np.empty(steps), np.empty(steps)
        self.k, self.done[0] = 0, 0
        try:
            if em.scheme == "constrained":
                self._constrained(q, v, steps)
            else:
                self._reduced(q, v, steps)
        except np.linalg.LinAlgError:       # a singular Newton matrix: the steps before it stand
            pass
        self.count = int(self.done[0])

    def _constrained(self, q, v, steps):
        from .em_batch_kernels import constrained_run
        em, n = self.em, q.shape[0]
        self.DQ, self.LAM = np.empty((steps, n)), np.empty((steps, len(em.rows)))
        lam = np.array(em.lam, dtype=np.float64)
        last, before = (np.zeros(n), lam) if em.previous is None else em.previous
        constrained_run(q, v, em.M, em.dt_gradV, em.dt, np.asarray(em.rows, dtype=np.int64), lam,
                        np.ascontiguousarray(last, dtype=np.float64), np.ascontiguousarray(before, dtype=np.float64),
                        em.previous is not None, em.fast.tab, em.fast.m, float(em.tol.residual),
                        float(em.model.length_scale), int(em.tol.max_iterations), bool(em.want_cond), self.Y, self.DQ,
                        self.LAM, self.IT, self.COND, self.done)

    def _reduced(self, q, v, steps):
        from .em_batch_kernels import reduced_run
        em, tt = self.em, self.em.compiled
        self.DQ, self.MU = np.empty((steps, q.shape[0])), np.empty((steps, tt.d))
        first = em.mu is None          # the run's first step: from the predictor (ReducedNewton._reduced_step)
        last = (predictor(em.tree, q, em.dt * v) if first else np.asarray(em.mu, dtype=np.float64)).copy()
        prev = last if em.mu_prev is None else np.asarray(em.mu_prev, dtype=np.float64)
        reduced_run(q, v, tt.M, em.dt_gradV, tt.mm, em.dt, tt.tr, tt.closure(em.closure_rows),
                    *tt._choice(em.dep, em.free), em.closure_scale, last, prev, first, float(em.tol.residual),
                    float(em.model.length_scale), int(em.tol.max_iterations), self.h, bool(em.want_cond),
                    self.Y, self.DQ, self.MU, self.IT, self.COND, self.done)

    def _pop(self):
        """The next state; the stepper's attributes as its step leaves them (EnergyMomentumStepper
        ._constrained_step, ReducedNewton._reduced_step)."""
        em, k = self.em, self.k
        self.k += 1
        it, cond = int(self.IT[k]), float(self.COND[k])
        em.iterations = it
        if em.scheme == "constrained":
            if em.want_cond and it != 0:
                em.condition = cond
            em.previous, em.lam = (self.DQ[k].copy(), em.lam), self.LAM[k].copy()
        else:
            if em.want_cond and not np.isnan(cond):
                em.condition = cond
            em.mu_prev, em.mu = em.mu, self.MU[k].copy()
            em._mu, em.dq = em.mu, self.DQ[k].copy()
        return self.Y[k]


def momentum_kernel(bodies, compiled: bool):
    """``f(q, v)`` -> (p, L) (6,) of model.director.SpatialBodies ``bodies`` (its ``momenta`` concatenated): compiled
    (em_batch_kernels.momenta) where the run takes the compiled path (``compiled``: the kernels' cache is warm or
    may be filled now, fast.spatial_warm), else the reference."""
    if not (compiled and numba_available()):
        return lambda q, v: np.concatenate(bodies.momenta(q, v))
    from .em_batch_kernels import momenta
    cols = np.ascontiguousarray(bodies.body_cols, dtype=np.int64)
    mass, euler = (np.ascontiguousarray(a, dtype=np.float64) for a in (bodies.mass, bodies.euler))

    def f(q, v):
        out = np.empty(6)
        momenta(np.ascontiguousarray(q, dtype=np.float64), np.ascontiguousarray(v, dtype=np.float64), cols, mass,
                euler, out)
        return out
    return f


#: the kernels' numbering of the pair kinds with relative coordinates (em_batch_kernels.joint_coordinates)
_KIND = {"R": 1, "C": 2, "P": 3, "E": 4}


def joints_kernel(bodies, groups, compiled: bool):
    """``f(q)`` -> the relative joint coordinates of the LowerPairs ``groups`` (their relative_coordinates
    concatenated; S pairs have none): compiled (em_batch_kernels.joint_coordinates) where the run takes the compiled
    path, else the reference."""
    groups = [g for g in groups if g.kind in _KIND]
    if not (compiled and numba_available()):
        return lambda q: (np.concatenate([g.relative_coordinates(bodies, q) for g in groups]) if groups
                          else np.zeros(0))
    from .em_batch_kernels import joint_coordinates
    first = lambda b: np.array([-1 if i < 0 else int(bodies.body_cols[i, 0]) for i in b], dtype=np.int64)  # noqa: E731
    vec = lambda x: np.ascontiguousarray(x, dtype=np.float64)  # noqa: E731
    packed = [(first(g.parent), first(g.child), vec(g.X1), vec(g.X2), vec(g.n), vec(g.m1), vec(g.m2),
               vec(g.a2[:, 0]), vec(g.ref), _KIND[g.kind], len(g.coordinate_labels())) for g in groups]
    size = sum(p[-1] for p in packed)

    def f(q):
        out, start = np.empty(size), 0
        qc = np.ascontiguousarray(q, dtype=np.float64)
        for *args, kind, width in packed:
            joint_coordinates(qc, *args, kind, out[start:start + width])
            start += width
        return out
    return f
