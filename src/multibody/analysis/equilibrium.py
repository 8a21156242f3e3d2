"""Static equilibrium and its stability in the tangent basis (issue 21; paper 000 eqs 3, 8-13 for T,
paper 003 eqs 21-27 for the uniqueness of the reactions).

Equilibrium. At rest (v = 0) the equations of motion M q'' + A^T lambda = f (paper 000 eq. 3) with q'' = 0 and
Phi(q) = 0 are the stationarity conditions

    r(q, lambda) = A(q)^T lambda - f(t, q, 0) = 0,   Phi(q, t) = 0,

i.e. T^T f = 0 in the tangent basis T (A T = 0): the applied forces have no component along any admissible
motion, and lambda is whatever the constraints must supply. :func:`equilibrium` solves them by Newton on
(q, lambda) with the tangent stiffness K = dr/dq (central differences: the geometric stiffness
lambda d2Phi/dq2 included, and spring and force derivatives), damped towards the force direction where Newton
does not lower the imbalance (:func:`equilibrium`), the minimum-norm solution of the singular KKT matrix of
redundant rows (their lambda are not unique, the q are), a step limited to ``MAX_STEP`` length scales, the
projection back onto Phi = 0 and lambda from the least-squares static balance A^T lambda = f. The
multipliers reported are the minimum-norm ones; which joint reactions and driver efforts are unique is paper 003's test (analysis.solvability). Driver effort: -lambda of the driver's row, i.e. the
generalized force (torque for an angle, force for a slide) the driver applies in the positive direction of
its coordinate.

Linearisation and modes: analysis.linearize.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..assembly import Workspace
from ..errors import MultibodyError
from ..kinematics import solve_positions
from ..linalg.rank import RankTolerance, pivoted_qr
from ..model.system import Model
from .mobility import nearby_rank
from .reactions import joint_reactions
from .solvability import solvability

#: central-difference step of the tangent stiffness, relative to max(|q_j|, length scale)
STIFFNESS_STEP = 1e-6
#: largest Newton step, in length scales (angles: radians)
MAX_STEP = 0.2
#: convergence: |T^T f| <= FORCE_TOL * (largest |f|, |A^T lambda|) on Phi = 0 (kinematics.solve_positions)
FORCE_TOL = 1e-10
#: reduced-stiffness eigenvalues within this fraction of the largest |eigenvalue| count as zero (neutral)
NEUTRAL_TOL = 1e-8


@dataclass(frozen=True)
class Equilibrium:
    """Result of :func:`equilibrium`: the configuration, the minimum-norm multipliers and what follows."""

    model: Model
    t: float
    q: np.ndarray
    lam: np.ndarray
    iterations: int
    residual: float
    stiffness_eigenvalues: np.ndarray
    stability: str                      # "stable" | "unstable" | "neutral"
    reactions: dict = field(default_factory=dict)
    unique: dict = field(default_factory=dict)       # pair name -> its reaction is unique (paper 003)

    @property
    def stable(self) -> bool:
        return self.stability == "stable"

    @property
    def driver_efforts(self) -> dict:
        """Driver row label -> effort = -lambda (module doc: the force or torque the driver applies)."""
        labels = self.model.constraint_labels
        return {lab: float(-self.lam[i]) for i, lab in enumerate(labels) if "-driver." in lab}

    def to_dict(self) -> dict:
        names = self.model.coordinate_names
        return {"model": self.model.name, "t": self.t, "q": dict(zip(names, map(float, self.q))),
                "stable": self.stable, "stability": self.stability,
                "stiffness_eigenvalues": self.stiffness_eigenvalues.tolist(),
                "driver_efforts": self.driver_efforts, "driver_effort_sign": "-lambda: applied by the driver "
                "in the positive direction of its coordinate",
                "multipliers": dict(zip(self.model.constraint_labels, map(float, self.lam))),
                "reactions": self.reactions, "reaction_unique": self.unique,
                "residual": self.residual, "iterations": self.iterations}


def _central(g, x: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """dg/dx (k, n) by central differences with the step steps[j] for column j (set-up, not a hot path)."""
    cols = []
    for j, h in enumerate(steps):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((g(x + e) - g(x - e)) / (2 * h))
    return np.column_stack(cols) if cols else np.zeros((len(g(x)), 0))


def tangent_stiffness(ws: Workspace, t: float, q: np.ndarray, lam: np.ndarray,
                      v: np.ndarray | None = None, extra=None) -> np.ndarray:
    """K = d/dq [A(q)^T lambda - f(t, q, v) - extra(q)] (n, n) by central differences (module doc; ``extra``:
    further generalized forces, e.g. of actuators, analysis.linearize)."""
    v = np.zeros_like(q) if v is None else v
    extra = extra or (lambda x: 0.0)
    g = lambda x: ws.constraints(t, x, v)[1].T @ lam - ws.forces(t, x, v) - extra(x)     # noqa: E731
    return _central(g, q, STIFFNESS_STEP * np.maximum(np.abs(q), ws.model.length_scale))


def damping_matrix(ws: Workspace, t: float, q: np.ndarray) -> np.ndarray:
    """C_t = -df/dv (n, n) at v = 0 by central differences."""
    return _central(lambda v: -ws.forces(t, q, v), np.zeros_like(q), np.full(len(q), STIFFNESS_STEP))


def _state(model, ws, t, q, fscale=None):
    """(q on Phi = 0, lambda of the least-squares static balance A^T lambda = f, A, imbalance |T^T f| / fscale,
    fscale): ``fscale`` the force scale of the first state, max(|f|, |A^T lambda|) there (kept fixed, so that
    the imbalance can fall to zero also where f itself does, as in a chain without constraints)."""
    zero = np.zeros(model.n)
    q = solve_positions(model, q, t, ws=ws)
    A, f = ws.constraints(t, q, zero)[1], ws.forces(t, q, zero)
    lam = np.linalg.lstsq(A.T, f, rcond=None)[0] if ws.m else np.zeros(0)
    T = pivoted_qr(A).null_space if ws.m else np.eye(model.n)
    if fscale is None:
        fscale = max(np.max(np.abs(f), initial=0.0), np.max(np.abs(A.T @ lam), initial=0.0), np.finfo(float).tiny)
    return q, lam, A, float(np.max(np.abs(T.T @ f), initial=0.0) / fscale), fscale


def equilibrium(model: Model, *, q=None, t: float = 0.0, max_iterations: int = 60) -> Equilibrium:
    """Static equilibrium nearest to the guess q (default: the model's initial configuration), module doc.

    Each iteration solves [K + mu M, A^T; A, 0] (dq, dlambda) = -(A^T lambda - f, Phi) and takes the first mu of
    0, 1e-3, 1e-1, 10, 1e3, 1e5 (times ``max(|K|, |f| / L) / |M|``) whose step lowers the imbalance ``|T^T f|``:
    mu = 0 is Newton's step, a large mu a step along M^-1 T T^T f, the direction the forces push
    (Levenberg-Marquardt; Newton alone stalls where K is singular, e.g. a pendulum released horizontally,
    lambda = 0)."""
    ws = Workspace(model)
    n, L, zero = model.n, model.length_scale, np.zeros(model.n)
    q, lam, A, res, fscale = _state(model, ws, t, np.asarray(model.q0 if q is None else q, float))
    M = model.mass(q)
    for it in range(max_iterations + 1):
        if res <= FORCE_TOL:
            break
        if it == max_iterations:
            raise MultibodyError(f"Model '{model.name}': no static equilibrium found from the initial configuration "
                                 f"after {max_iterations} iterations (imbalance |T^T f| {res:.1e} of the forces); "
                                 "the applied forces may have no equilibrium (e.g. a free body under gravity, a "
                                 "spinning top) or the guess is far from one: give another initial configuration.")
        r = A.T @ lam - ws.forces(t, q, zero)
        K = tangent_stiffness(ws, t, q, lam)
        ratio = max(np.linalg.norm(K), np.linalg.norm(r + A.T @ lam) / L, np.finfo(float).tiny) / np.linalg.norm(M)
        for mu in (0.0, 1e-3, 1e-1, 1e1, 1e3, 1e5):
            J = np.block([[K + mu * ratio * M, A.T], [A, np.zeros((ws.m, ws.m))]])
            d = np.linalg.lstsq(J, -np.concatenate([r, ws.constraints(t, q, zero)[0]]), rcond=None)[0][:n]
            d *= min(1.0, MAX_STEP * L / max(np.max(np.abs(d)), np.finfo(float).tiny))
            trial = _state(model, ws, t, q + d, fscale)
            if trial[3] < res:
                break
        else:
            raise MultibodyError(f"Model '{model.name}': the static equilibrium iteration stalled at imbalance "
                                 f"{res:.1e} (no step lowers |T^T f|): give another initial configuration.")
        q, lam, A, res, _ = trial
    eig, stability = _stability(model, ws, t, q, lam)
    verdict = solvability(ws.velocity_constraints(t, q, zero)[1], model.velocity_labels, m=ws.m)
    return Equilibrium(model, t, q, lam, it, float(res), eig, stability,
                       joint_reactions(model, q, A, lam) if ws.m else {},
                       {p.name: p.unique for p in verdict.pairs})


def stiffness_scale(ws: Workspace, t: float, q: np.ndarray, lam: np.ndarray) -> float:
    """max(|f|, |A^T lambda|) / L: the size of a stiffness made by the forces at q, against which an eigenvalue
    of the reduced stiffness counts as zero (a freedom no force acts on, e.g. the spin of a rod between two
    ball joints, has no stiffness of its own to compare with)."""
    zero = np.zeros_like(q)
    f = ws.forces(t, q, zero)
    reaction = ws.constraints(t, q, zero)[1].T @ lam if ws.m else zero
    return max(np.max(np.abs(f), initial=0.0), np.max(np.abs(reaction), initial=0.0),
               np.finfo(float).tiny) / ws.model.length_scale


def _stability(model, ws, t, q, lam):
    """Eigenvalues of the reduced stiffness T^T K T (symmetric part) and the verdict (module doc)."""
    T = _tangent_basis(model, ws, t, q)
    if T.shape[1] == 0:
        return np.zeros(0), "stable"
    Kr = T.T @ tangent_stiffness(ws, t, q, lam) @ T
    eig = np.linalg.eigvalsh(0.5 * (Kr + Kr.T))
    big = max(np.max(np.abs(eig)), stiffness_scale(ws, t, q, lam))
    if np.any(eig < -NEUTRAL_TOL * big):
        return eig, "unstable"
    return eig, ("neutral" if np.any(eig <= NEUTRAL_TOL * big) else "stable")


def _tangent_basis(model, ws, t, q, tol: RankTolerance = RankTolerance()) -> np.ndarray:
    """T (n, dof) at q; refuses a singular configuration (the null space there is not the motion's)."""
    if ws.h:
        raise MultibodyError(f"Model '{model.name}': {ws.h} nonholonomic rows; the linearisation in the tangent "
                             "basis of the holonomic constraints does not describe their motion.")
    if not ws.m:
        return np.eye(model.n)
    pqr = pivoted_qr(ws.constraints(t, q, np.zeros(model.n))[1], tol)
    T = pqr.null_space
    if T.shape[1] and nearby_rank(model, q, T, t, ws=ws, tol=tol) > pqr.rank:
        raise MultibodyError(f"Model '{model.name}': the configuration is singular (rank {pqr.rank}, "
                             f"{nearby_rank(model, q, T, t, ws=ws, tol=tol)} nearby): the tangent space changes "
                             "dimension here, so a linearisation would describe motions the mechanism does not "
                             "have (paper 000 Sect. 2.5).")
    return T
