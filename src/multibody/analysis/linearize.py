"""Linearisation, state-space models and modes in the tangent coordinates of paper 000 (issue 21).

Coordinates. With T an orthonormal basis of the null space of A(q*) (paper 000 eq. 8) the configurations near
q* are q(z) = q* + T z + (a correction normal to T back onto Phi = 0), and the velocities v = T z' + (the
normal correction onto A v + Phi_t = 0): (z, z') are coordinates of the state manifold near (q*, v*), with
z = T^T (q - q*) and z' = T^T v exactly to first order.

About a static equilibrium (v* = 0) the linearised equations are M_r z'' + C_r z' + K_r z = B_r u with
M_r = T^T M T, C_r = T^T C_t T (C_t = -df/dv), K_r = T^T K T, K = d/dq (A^T lambda - f) at the equilibrium's
lambda (the geometric stiffness of the reactions, lambda d2Phi/dq2, is part of K; analysis.equilibrium), a
symmetric-definite problem for conservative systems. About a moving state (v* != 0: Coriolis, gyroscopic and
centripetal terms, rheonomic drivers frozen at t*) the state matrix is the central-difference Jacobian of
(z, z') -> (T^T v, T^T q'') through the chart above, q'' from the constrained equations of motion
[M A^T; A 0] (q'', lambda) = (f, gamma) (paper 000 eq. 3 with eq. 4; minimum-norm lambda for redundant rows),
and M_r z'' + C_r z' + K_r z = 0 with K_r = -M_r dz''/dz, C_r = -M_r dz''/dz'. At a singular configuration the
null space is larger than the tangent space of the motion (paper 000 Sect. 2.5): the linearisation is refused.

Inputs (B_r): a driver named as an input (its name, e.g. ``O-driver``, or its row label) is removed from the
constraints and becomes an actuator whose effort u (the force or torque it applies in the positive direction of
its coordinate, analysis.equilibrium) enters as the generalized force A_i^T u; the linearisation point keeps
its effort u* = -lambda_i. A coordinate name as an input is a generalized force on that coordinate. Outputs:
``q:name`` (or ``name``) the deviation of a coordinate, ``v:name`` its rate; C = d(output)/d(z, z').

Modes: K_r x = w^2 M_r x, the undamped natural frequencies in Hz ascending (0 for a neutral freedom, NaN for
w^2 < 0: about an unstable equilibrium that motion grows, it does not oscillate), modal damping ratios
x^T C_r x / (2 w) (mass-normalised x), shapes u = T x in the redundant coordinates (largest entry 1); with a
non-symmetric K_r (follower forces, a moving state) the eigenvalues s of the state matrix instead
(|s| / 2 pi, -Re s / |s|).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla

from ..assembly import Workspace
from ..errors import MultibodyError
from ..kinematics import solve_positions, solve_velocities
from ..model.system import Model
from .equilibrium import (NEUTRAL_TOL, Equilibrium, _tangent_basis, damping_matrix, equilibrium,
                          stiffness_scale, tangent_stiffness)

#: central-difference step in the chart (z in length scales, z' in length scales per second)
CHART_STEP = 1e-6


@dataclass(frozen=True)
class Linearization:
    """M z'' + C z' + K z = B u in tangent coordinates q = q* + T z (module doc); outputs y = Cy (z, z') + Dy u."""

    T: np.ndarray
    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    coordinate_names: tuple
    B: np.ndarray = None                 # (d, inputs)
    input_labels: tuple = ()
    Cy: np.ndarray = None                # (outputs, 2 d)
    output_labels: tuple = ()
    q: np.ndarray = None
    v: np.ndarray = None
    t: float = 0.0

    def state_space(self):
        """(A, B, C, D) of x = (z, z'): inputs ``input_labels`` (without inputs: the generalized forces on z),
        outputs ``output_labels`` (without: (z, z')), for scipy.signal.StateSpace."""
        d = self.M.shape[0]
        Minv = np.linalg.inv(self.M)
        A = np.block([[np.zeros((d, d)), np.eye(d)], [-Minv @ self.K, -Minv @ self.C]])
        Bu = np.eye(d) if self.B is None else self.B
        B = np.vstack([np.zeros((d, Bu.shape[1])), Minv @ Bu])
        C = np.eye(2 * d) if self.Cy is None else self.Cy
        return A, B, C, np.zeros((C.shape[0], B.shape[1]))

    def to_control(self):
        """The state-space model as a python-control ``StateSpace`` with named inputs, outputs and states
        (optional dependency: pip install "multibody[control]"); python-control reserves '.' in signal names, so
        ``crank.theta`` becomes ``crank_theta``."""
        try:
            import control
        except ImportError as exc:
            raise MultibodyError("Linearization.to_control needs python-control: pip install "
                                 "'multibody[control]' (or use state_space() with scipy.signal).") from exc
        d = self.M.shape[0]
        inputs = list(self.input_labels) or [f"f_z{k}" for k in range(d)]
        outputs = list(self.output_labels) or [f"z{k}" for k in range(d)] + [f"z{k}'" for k in range(d)]
        inputs, outputs = ([x.replace(".", "_") for x in names] for names in (inputs, outputs))   # '.' is
        return control.ss(*self.state_space(), inputs=inputs, outputs=outputs,                  # reserved there
                          states=[f"z{k}" for k in range(d)] + [f"z{k}'" for k in range(d)])


def _inputs(model: Model, inputs) -> tuple[Model, list, list]:
    """(model without the driver rows named as inputs, their row indices in the full model, coordinate
    indices of the generalized-force inputs)."""
    labels, names = model.constraint_labels, model.coordinate_names
    rows, coords = [], []
    for item in inputs:
        hit = [i for i, lab in enumerate(labels) if "-driver" in lab and (lab == item or lab.split(".")[0] == item)]
        if hit:
            rows += hit
        elif item in names:
            coords.append(names.index(item))
        else:
            drivers = sorted({lab.split(".")[0] for lab in labels if "-driver" in lab})
            raise MultibodyError(f"Model '{model.name}': unknown input '{item}' (drivers: "
                                 f"{', '.join(drivers) or 'none'}; or a coordinate name for a generalized force).")
    reduced = model.without_rows([labels[i] for i in rows]) if rows else model
    return reduced, rows, coords


def _outputs(model: Model, outputs) -> list[tuple[int, int]]:
    """[(0 for a position / 1 for a rate, coordinate index)] of the output labels."""
    names, out = model.coordinate_names, []
    for item in outputs:
        kind, _, name = item.partition(":") if ":" in item else ("q", "", item)
        if kind not in ("q", "v") or name not in names:
            raise MultibodyError(f"Model '{model.name}': unknown output '{item}' (q:NAME or v:NAME, NAME one of "
                                 f"{', '.join(names)}).")
        out.append((0 if kind == "q" else 1, names.index(name)))
    return out


def _state(model: Model, state) -> tuple[float, np.ndarray, np.ndarray, np.ndarray | None]:
    """(t, q, v, lambda or None) of an Equilibrium, an (q, v[, t]) tuple or None (the equilibrium)."""
    if state is None:
        state = equilibrium(model)
    if isinstance(state, Equilibrium):
        return state.t, state.q, np.zeros(model.n), state.lam
    q, v, *rest = state
    q, v = np.asarray(q, float).reshape(-1), np.asarray(v, float).reshape(-1)
    if q.size != model.n or v.size != model.n:
        raise MultibodyError(f"Model '{model.name}': the state needs q and v of {model.n} values each, got "
                             f"{q.size} and {v.size}.")
    return float(rest[0]) if rest else 0.0, q, v, None


def _accelerations(ws: Workspace, t, q, v, extra) -> tuple[np.ndarray, np.ndarray]:
    """(q'', lambda) from [M A^T; A 0] (q'', lambda) = (f + extra(q), gamma), minimum-norm lambda."""
    M = ws.model.mass(q)
    f = ws.forces(t, q, v) + extra(q)
    if not ws.m:
        return np.linalg.solve(M, f), np.zeros(0)
    _, A, _, gamma = ws.constraints(t, q, v)
    J = np.block([[M, A.T], [A, np.zeros((ws.m, ws.m))]])
    sol = np.linalg.lstsq(J, np.concatenate([f, gamma]), rcond=None)[0]
    return sol[: ws.model.n], sol[ws.model.n:]


def linearize(model: Model, state=None, *, inputs=(), outputs=None) -> Linearization:
    """The linearisation about ``state`` (module doc): an :class:`Equilibrium` (default: :func:`equilibrium`
    from the model's guess) or a consistent state (q, v[, t]); ``inputs`` driver names / row labels and
    coordinate names, ``outputs`` ``q:NAME`` / ``v:NAME`` labels (default: every coordinate and rate)."""
    t, q, v, lam = _state(model, state)
    full = Workspace(model)
    if lam is None:
        q = solve_positions(model, q, t, ws=full)
        v = solve_velocities(model, q, v, t, ws=full)
        lam = _accelerations(full, t, q, v, lambda x: 0.0)[1] if full.m else np.zeros(0)
    reduced, rows, coords = _inputs(model, inputs)
    u0, lam_r = -lam[rows], np.delete(lam, rows)
    extra = (lambda x: full.constraints(t, x, np.zeros(model.n))[1][rows].T @ u0) if rows else (lambda x: 0.0)
    ws = Workspace(reduced)
    T = _tangent_basis(reduced, ws, t, q)
    M = T.T @ model.mass(q) @ T
    Bq = np.column_stack([full.constraints(t, q, v)[1][rows].T, np.eye(model.n)[:, coords]]) \
        if rows or coords else np.zeros((model.n, 0))
    out = _outputs(model, outputs if outputs is not None else
                   [f"{k}:{c}" for k in "qv" for c in model.coordinate_names])
    labels = (tuple(model.constraint_labels[i] for i in rows) + tuple(model.coordinate_names[i] for i in coords),
              tuple(f"{'qv'[k]}:{model.coordinate_names[j]}" for k, j in out))
    if isinstance(state, Equilibrium) or state is None:
        K = T.T @ tangent_stiffness(ws, t, q, lam_r, extra=extra) @ T
        C = T.T @ damping_matrix(ws, t, q) @ T
        d = T.shape[1]
        Cy = np.array([np.r_[T[j], np.zeros(d)] if k == 0 else np.r_[np.zeros(d), T[j]] for k, j in out])
        return Linearization(T, M, C, K, model.coordinate_names, T.T @ Bq, labels[0], Cy.reshape(len(out), 2 * d),
                             labels[1], q, v, t)
    return _moving(reduced, ws, t, q, v, T, M, extra, Bq, out, labels)


def _moving(model, ws, t, q, v, T, M, extra, Bq, out, labels) -> Linearization:
    """The chart linearisation about a moving state (module doc): central differences of (z, z') ->
    (T^T v, T^T q'') and of the outputs (q - q*, v)."""
    d, L = T.shape[1], model.length_scale
    N = sla.qr(T, mode="full")[0][:, d:]                # orthonormal complement of T: the normal directions
    steps = np.r_[np.full(d, CHART_STEP * L), np.full(d, CHART_STEP * max(L, np.max(np.abs(v), initial=0.0)))]

    def chart(x):
        qq, vv = _lift(model, ws, t, q, v, T, N, x[:d], x[d:])
        a = _accelerations(ws, t, qq, vv, extra)[0]
        return np.concatenate([T.T @ a, [qq[j] if k == 0 else vv[j] for k, j in out]])

    cols = []
    for i, h in enumerate(steps):
        e = np.zeros(2 * d)
        e[i] = h
        cols.append((chart(e) - chart(-e)) / (2 * h))
    J = np.column_stack(cols) if cols else np.zeros((d + len(out), 0))
    base = _accelerations(ws, t, q, v, extra)[0]
    Bu = np.column_stack([T.T @ (_accelerations(ws, t, q, v, lambda x, b=b: extra(x) + b)[0] - base)
                          for b in Bq.T]) if Bq.shape[1] else np.zeros((d, 0))
    return Linearization(T, M, -M @ J[:d, d:], -M @ J[:d, :d], model.coordinate_names, M @ Bu, labels[0],
                         J[d:], labels[1], q, v, t)


def _lift(model, ws, t, q, v, T, N, z, zd, iterations: int = 30):
    """The state of the chart (z, z'): q = q* + T z + N y with Phi(q) = 0 (Gauss-Newton on y) and v = v* + T z'
    + N w with A v + Phi_t = 0, so that T^T (q - q*) = z and T^T (v - v*) = z' exactly."""
    base = q + T @ z
    y = np.zeros(N.shape[1])
    limit = 64 * np.finfo(float).eps * max(model.length_scale, np.max(np.abs(q)))
    for _ in range(iterations):
        Phi, A, Phi_t, _ = ws.constraints(t, base + N @ y, v)
        if np.max(np.abs(Phi), initial=0.0) <= limit:
            break
        y -= np.linalg.lstsq(A @ N, Phi, rcond=None)[0]
    else:
        raise MultibodyError(f"Model '{model.name}': the tangent chart does not reach Phi = 0 at |z| = "
                             f"{np.linalg.norm(z):.1e} (a configuration too close to a singular one?).")
    qq = base + N @ y
    _, A, Phi_t, _ = ws.constraints(t, qq, v)
    vt = v + T @ zd
    return qq, vt - N @ np.linalg.lstsq(A @ N, A @ vt + Phi_t, rcond=None)[0]


@dataclass(frozen=True)
class Modes:
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    shapes: np.ndarray                  # (n, k): mode shapes in the redundant coordinates, largest entry 1
    coordinate_names: tuple

    def to_dict(self) -> dict:
        finite = lambda x: [None if np.isnan(v) else float(v) for v in x]      # noqa: E731 (JSON has no NaN)
        return {"frequencies_hz": finite(self.frequencies_hz), "damping_ratios": finite(self.damping_ratios),
                "shapes": [dict(zip(self.coordinate_names, map(float, s))) for s in self.shapes.T]}


def modes(model: Model, state=None) -> Modes:
    """Natural frequencies, damping ratios and shapes about ``state`` (as for :func:`linearize`; module doc)."""
    lin = linearize(model, state)
    d = lin.M.shape[0]
    if d == 0:
        return Modes(np.zeros(0), np.zeros(0), np.zeros((model.n, 0)), lin.coordinate_names)
    Ks, Ms = 0.5 * (lin.K + lin.K.T), 0.5 * (lin.M + lin.M.T)
    if np.allclose(lin.K, Ks, rtol=0, atol=1e-9 * max(np.max(np.abs(Ks)), 1e-300)):
        f, zeta, X = _undamped(model, lin, Ks, Ms)
    else:                                   # non-symmetric stiffness (follower forces, a moving state)
        s, V = np.linalg.eig(np.block([[np.zeros((d, d)), np.eye(d)],
                                       [-np.linalg.solve(lin.M, lin.K), -np.linalg.solve(lin.M, lin.C)]]))
        keep = np.argsort(np.abs(s))
        pick = [i for i in keep if s[i].imag >= 0][:d]
        s, X = s[pick], np.real(V[:d, pick])
        f = np.abs(s) / (2 * np.pi)
        zeta = np.where(np.abs(s) > 0, -s.real / np.maximum(np.abs(s), np.finfo(float).tiny), 0.0)
    order = np.argsort(np.nan_to_num(f, nan=-1.0))
    U = lin.T @ X[:, order]
    U = U / np.where(np.max(np.abs(U), axis=0) > 0, U[np.argmax(np.abs(U), axis=0), range(U.shape[1])], 1.0)
    return Modes(f[order], zeta[order], U, lin.coordinate_names)


def _undamped(model, lin, Ks, Ms):
    """(frequencies Hz, modal damping ratios, mass-normalised shapes X) of K x = w^2 M x: w^2 within NEUTRAL_TOL
    of the force stiffness scale (equilibrium.stiffness_scale over the largest modal mass) is a neutral freedom
    (0 Hz), w^2 < 0 unstable (NaN); zeta_k = x_k^T C x_k / (2 w_k) (exact for proportional damping, first order
    for light non-proportional damping; 0 where w_k = 0)."""
    w2, X = sla.eigh(Ks, Ms)
    ws = Workspace(model)
    lam = _accelerations(ws, lin.t, lin.q, lin.v, lambda x: 0.0)[1] if ws.m else np.zeros(0)
    scale = max(np.max(np.abs(w2)), stiffness_scale(ws, lin.t, lin.q, lam) / np.max(np.abs(np.diag(Ms))))
    w2[np.abs(w2) <= NEUTRAL_TOL * scale] = 0.0
    w = np.sqrt(np.abs(w2))
    f = np.where(w2 >= 0, w, np.nan) / (2 * np.pi)
    modal_c = np.einsum("ik,ij,jk->k", X, lin.C, X)
    zeta = np.where(w2 > 0, modal_c / (2 * np.where(w > 0, w, 1.0)), 0.0)
    return f, zeta, X
