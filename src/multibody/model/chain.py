"""Planar serial chains in relative (joint) coordinates -> M(q), Coriolis/centrifugal and gravity terms.

Link k (k = 0..N-1) has absolute angle phi_k = q_0 + ... + q_k (+ ``base_angle``), measured from the
global x-axis; its direction e_k = (cos phi_k, sin phi_k), its normal p_k = (-sin phi_k, cos phi_k).
Centre of mass: r_k = sum_{j<k} L_j e_j + c_k e_k. With W[k, j] = L_j (j < k), c_k (j = k), 0 (j > k),
S the lower-triangular matrix of ones (phi = S q + base) and W_m = W^T diag(m) W:

    M(q)  = S^T [ W_m o cos(phi_i - phi_j) + diag(I) ] S
    h(q, v) = S^T [ (W_m o sin(phi_j - phi_i)) phi'^2 + Q_g ],   Q_g,i = sum_k m_k W[k, i] p_i . g

(o the elementwise product; Lagrange's equations of the chain, e.g. paper 002 Sect. 6 for the 3R
pendulum). Everything is a handful of N x N array operations: no Python loop over links.
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .forces import ForceElement
from .system import Model, check_model, matrix_system
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class ChainGeometry:
    """Link data of a planar serial chain: lengths L, masses m, centre-of-mass distances c along the
    link, inertias I about the centre of mass, base angle and gravity vector."""

    lengths: np.ndarray
    masses: np.ndarray
    com: np.ndarray
    inertias: np.ndarray
    base_angle: float
    gravity: np.ndarray

    @cached_property
    def weights(self) -> np.ndarray:
        """W (N, N): W[k, j] = L_j for j < k, c_k for j = k (constant: computed once)."""
        N = len(self.lengths)
        return np.tril(np.broadcast_to(self.lengths, (N, N)), -1) + np.diag(self.com)

    @cached_property
    def mass_weights(self) -> np.ndarray:
        """W_m = W^T diag(m) W (N, N) and the gravity weights m^T W (N,), constant."""
        W = self.weights
        return W.T @ (self.masses[:, None] * W), self.masses @ W

    def angles(self, q: np.ndarray) -> np.ndarray:
        return np.cumsum(q) + self.base_angle

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        phi = self.angles(q)
        Wm = self.mass_weights[0]
        Mphi = Wm * np.cos(phi[:, None] - phi[None, :]) + np.diag(self.inertias)
        # S^T X S = reversed cumulative sums over rows and columns
        return np.cumsum(np.cumsum(Mphi[::-1, ::-1], 0), 1)[::-1, ::-1]

    def forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        phi, w = self.angles(q), np.cumsum(v)
        Wm, mW = self.mass_weights
        normals = np.stack([-np.sin(phi), np.cos(phi)], axis=1)
        grav = mW * (normals @ self.gravity)
        hphi = (Wm * np.sin(phi[None, :] - phi[:, None])) @ (w * w) + grav
        return np.cumsum(hphi[::-1])[::-1]   # S^T hphi

    def joints(self, q: np.ndarray) -> np.ndarray:
        """Positions (N + 1, 2) of the base and of the end of every link."""
        phi = self.angles(q)
        steps = self.lengths[:, None] * np.stack([np.cos(phi), np.sin(phi)], axis=1)
        return np.vstack([np.zeros(2), np.cumsum(steps, axis=0)])

    def potential(self, q: np.ndarray) -> float:
        W, phi = self.weights, self.angles(q)
        com = W @ np.stack([np.cos(phi), np.sin(phi)], axis=1)
        return float(-np.sum(self.masses * (com @ self.gravity)))


@dataclass(frozen=True)
class _ChainPotential(ForceElement):
    geometry: ChainGeometry
    n: int

    def generalized(self, t, qe, ve):
        return np.zeros(len(qe))

    def potential(self, t, qe):
        return self.geometry.potential(qe[: self.n])


def _floats(x, what: str, name: str) -> np.ndarray:
    try:
        return np.asarray(x, float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"Chain '{name}': {what} must be numbers, got {str(x)[:60]!r}.") from None


def serial_chain(name, *, lengths, masses, inertias, com=None, base_angle=0.0, gravity=(0.0, -9.81),
                 q0, v0=None, joint_forces=None, constraints=(), source="") -> Model:
    """A planar serial chain hinged to the ground at the origin, in relative joint angles q (Lagrange's
    equations of the chain in closed form: M(q) and h(q, v) of the module doc)."""
    L = _floats(lengths, "lengths", name)
    N = L.size
    arrays = {"masses": masses, "inertias": inertias, "com": L / 2 if com is None else com}
    arrays = {k: _floats(v, k, name) for k, v in arrays.items()}
    for key, arr in {"lengths": L, **arrays}.items():
        if arr.size != N or not np.all(np.isfinite(arr)):
            raise ModelError(f"Chain '{name}': {key} must be {N} finite numbers, got {arr.tolist()}.")
    for key in ("masses", "inertias"):
        if np.any(arrays[key] <= 0):
            raise ModelError(f"Chain '{name}': {key} must be positive, got {arrays[key].tolist()}.")
    geo = ChainGeometry(L, arrays["masses"], arrays["com"], arrays["inertias"], float(base_angle),
                        np.asarray(gravity, float).reshape(2))
    extra = joint_forces

    def h(q, v, t):
        out = geo.forces(q, v)
        return out if extra is None else out + np.asarray(extra(q, v, t), float)

    model = matrix_system(name, [f"q{k + 1}" for k in range(N)], mass=geo.mass_matrix, forces=h,
                          constraints=constraints, q0=q0, v0=v0, source=source)
    import dataclasses
    from types import MappingProxyType
    model = dataclasses.replace(model, forces=model.forces + (_ChainPotential(geo, N),),
                                points=MappingProxyType({"joints": geo.joints}),
                                length_scale=float(np.sum(L)))
    return check_model(model)
