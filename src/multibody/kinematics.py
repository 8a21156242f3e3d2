"""Position and velocity problems: consistent initial conditions and projection onto the manifold.

Positions: Newton on Phi(q, t) = 0 with the held coordinates fixed; each step is the minimum-norm
solution dq_free = -A_free^+ Phi (Gauss-Newton; works with redundant rows and at singular
configurations, where A is rank deficient). Velocities: the minimum-norm correction of the guess on
the free coordinates so that A v + Phi_t = 0 (paper 000 eq. 5).

Tolerances are relative to the model's characteristic length (``model.length_scale``) and velocity
scale, never bare numbers in the middle of a solve.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .assembly import Workspace
from .errors import AssemblyError
from .linalg.rank import RankTolerance, pinned_solve
from .model.system import Model


#: Gauss-Newton steps after the residual test is met (issue 7 item 2). Near a singular configuration at
#: distance sigma |Phi| bounds the distance to the manifold only as |Phi| / sigma, and the index-1
#: equations carry a residual c along (Phi'' = 0, and Phi' = 0 after the velocity projection): the level
#: set Phi = c is a hyperbola that turns onto the other assembly branch about sqrt(|c| / L) from the
#: crossing (double four-bar: c = 1e-13 m -> 3e-7 rad). Left at the position tolerance, c made dop853 at
#: rtol 1e-11 follow that turn (step collapse, silent branch switch); one more step leaves |c| at
#: round-off (~eps L), measured 1e-16 m.
POLISH_STEPS = 1

#: positions along directions the constraints do not pin (singular value <= pin s_max, see
#: linalg.rank.pinned_solve) are the integrator's prediction; the projection accepts their residual up to
#: pin s_max PINNED_DRIFT L (a prediction 1e-6 L off the manifold; the error control keeps it at the
#: tolerance). With the default pin (sqrt(eps)) this bound is below the position test: a contradictory
#: redundant row is still an assembly error.
PINNED_DRIFT = 1e-6


@dataclass(frozen=True)
class KinematicTolerance:
    """position: Newton stops when |Phi| <= position * length_scale;
    consistency: given velocities are accepted when |A v + Phi_t| <= consistency * max(|A| |v|, |Phi_t|)
    after the correction of the free ones (v before and after the correction); max_iterations: Newton
    iterations before giving up; polish: Gauss-Newton steps applied after the position test is met
    (see POLISH_STEPS)."""

    position: float = 1e-12
    # above the rank tolerance of the minimum-norm solve (sqrt(eps) ~ 1.5e-8), which near a singular
    # configuration leaves residuals of that relative size; user errors are of order one
    consistency: float = 1e-6
    max_iterations: int = 50
    polish: int = POLISH_STEPS
    #: singular values <= pin * s_max are not inverted by the dense solves (linalg.rank.pinned_solve);
    #: the default is the rank tolerance of the minimum-norm solve (assembly: every direction that a
    #: constraint determines); the projection of a run uses a larger one (formulations.lagrange.PIN)
    pin: float = RankTolerance().rtol


def _free(n: int, hold) -> np.ndarray:
    mask = np.ones(n, bool)
    mask[list(hold)] = False
    return np.flatnonzero(mask)


def _worst(model: Model, residual: np.ndarray, count: int = 5) -> str:
    labels = model.velocity_labels      # holonomic rows first: also right for Phi alone
    size = np.abs(residual)
    size = np.where(np.isfinite(size), size, np.inf)     # NaN rows first, never dropped (issue 17)
    order = np.argsort(-size, kind="stable")[:count]
    return ", ".join(f"{labels[i]} ({residual[i]:.3g})" for i in order if size[i] > 0)


def solve_positions(model: Model, q: np.ndarray, t: float = 0.0, *, hold=(), ws: Workspace | None = None,
                    tol: KinematicTolerance = KinematicTolerance(), sparse: bool | None = None) -> np.ndarray:
    """q with Phi(q, t) = 0, starting from the guess q and keeping the coordinates ``hold`` fixed.
    ``sparse`` (None: automatic, see :func:`multibody.assembly.use_sparse`): Gauss-Newton steps
    dq = -A^T (A A^T)^-1 Phi with a sparse A of full row rank (multibody.linalg.sparse)."""
    ws = ws or Workspace(model)
    if sparse is None and _sparse(model, None):     # automatic: dense if A turns out rank deficient
        return _auto(solve_positions, model, q, t, hold=hold, ws=ws, tol=tol)
    sparse = _sparse(model, sparse)
    compiled = getattr(ws, "solve_positions", None)     # fast.packed.CompiledWorkspace: the same iterations
    out = compiled(q, t, tol) if compiled is not None and not hold and not sparse else None
    if out is not None:
        return out
    q = np.array(q, dtype=float)
    if ws.m == 0:
        return q
    free = _free(model.n, hold)
    zero = np.zeros(model.n)
    limit = tol.position * model.length_scale
    for _ in range(tol.max_iterations):
        Phi, A, _, _ = (ws.sparse_constraints if sparse else ws.constraints)(t, q, zero)
        if not np.all(np.isfinite(Phi)):
            break
        if sparse:
            dq, converged = None, np.max(np.abs(Phi)) <= limit
        else:
            dq, pinned, s_max = pinned_solve(A[:, free], Phi, tol.pin)
            converged = (np.max(np.abs(pinned)) <= limit and np.max(np.abs(Phi - pinned))
                         <= max(limit, tol.pin * s_max * PINNED_DRIFT * model.length_scale))
        if converged:
            return _polish(ws, t, q, free, tol, sparse, Phi, A)
        q[free] -= _min_norm(A[:, free], Phi, sparse) if sparse else dq
    Phi = ws.constraints(t, q, zero)[0]
    names = ", ".join(model.coordinate_names[i] for i in hold) or "none"
    raise AssemblyError(
        f"Model '{model.name}' cannot be assembled at t = {t:g}: after {tol.max_iterations} Newton "
        f"iterations the constraints still fail; largest residuals: {_worst(model, Phi)}. Held "
        f"coordinates: {names}. Check the joint points and lengths, or give a closer initial guess.")


def _polish(ws, t, q, free, tol, sparse, Phi, A) -> np.ndarray:
    """q after ``tol.polish`` Gauss-Newton steps dq_free = -A_free^+ Phi (see POLISH_STEPS); Phi, A at q given."""
    zero = np.zeros_like(q)
    for k in range(tol.polish):
        if k:
            Phi, A, _, _ = (ws.sparse_constraints if sparse else ws.constraints)(t, q, zero)
        if not np.any(Phi):
            break
        q[free] -= _min_norm(A[:, free], Phi, sparse, tol.pin)
    return q


def solve_velocities(model: Model, q: np.ndarray, v: np.ndarray, t: float = 0.0, *, given=(),
                     ws: Workspace | None = None, tol: KinematicTolerance = KinematicTolerance(),
                     sparse: bool | None = None) -> np.ndarray:
    """v with C v + b = 0 (holonomic and nonholonomic rows, paper 003 eq. 4; A v + Phi_t = 0 without
    nonholonomic rows): the minimum-norm change of the guess on the coordinates not ``given``."""
    ws = ws or Workspace(model)
    v = np.array(v, dtype=float)
    if ws.m + ws.h == 0:
        return v
    if sparse is None and _sparse(model, None):     # automatic: dense if A turns out rank deficient
        return _auto(solve_velocities, model, q, v, t, given=given, ws=ws, tol=tol)
    sparse = _sparse(model, sparse)
    _, A, Phi_t, _ = (ws.sparse_constraints if sparse else ws.velocity_constraints)(t, q, v)
    free = _free(model.n, given)
    guess_scale = np.max(abs(A) @ np.abs(v))     # round-off of the correction is relative to the guess
    v[free] += _min_norm(A[:, free], -(A @ v + Phi_t), sparse, tol.pin)
    residual = A @ v + Phi_t
    scale = max(guess_scale, np.max(abs(A) @ np.abs(v)), np.max(np.abs(Phi_t)), np.finfo(float).tiny)
    if np.max(np.abs(residual)) > tol.consistency * scale:
        names = ", ".join(model.coordinate_names[i] for i in given) or "none"
        raise AssemblyError(
            f"Model '{model.name}': the given initial velocities ({names}) are inconsistent with the "
            f"constraints at t = {t:g}; violated rows: {_worst(model, residual)}. Give fewer velocities "
            "(the rest follow from A v + Phi_t = 0) or consistent ones.")
    return v


def _sparse(model: Model, sparse) -> bool:
    from .assembly import use_sparse
    return use_sparse(model, sparse)


def _auto(solve, *args, **kw):
    """solve(..., sparse=True), and the dense solve if the sparse one finds A rank deficient."""
    from .errors import SimulationError
    try:
        return solve(*args, **kw, sparse=True)
    except SimulationError:
        return solve(*args, **kw, sparse=False)


def _min_norm(A, r, sparse: bool, pin: float = RankTolerance().rtol) -> np.ndarray:
    """A^+ r: dense SVD without the directions not pinned (pinned_solve) or, sparse, A^T (A A^T)^-1 r
    (multibody.linalg.sparse)."""
    if not sparse:
        return pinned_solve(A, r, pin)[0]
    from .linalg.sparse import min_norm_correction
    return min_norm_correction(A, r, "kinematic solve")


def consistent_state(model: Model, t: float = 0.0, *, q=None, v=None, ws: Workspace | None = None):
    """(q, v) consistent with the constraints, from the model's initial data (or the given guesses);
    large eligible models use the sparse solves (see :func:`multibody.assembly.use_sparse`)."""
    ws = ws or Workspace(model)
    q = model.q0 if q is None else q
    v = model.v0 if v is None else v
    q = solve_positions(model, q, t, hold=model.hold, ws=ws)
    v = solve_velocities(model, q, v, t, given=model.velocity_given, ws=ws)
    return q, v
