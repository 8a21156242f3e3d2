"""Examples of paper 001 (Blajer, Schiehlen, Schirm): physical pendulum (Sect. 3) and the four-bar
linkage in relative coordinates cut at O4 (Sect. 6).

The paper's *mathematical* pendulum (Sect. 3: q = [x, y], Phi = x^2 + y^2 - rho^2, M = m I) is the
existing ``pendulum`` model (paper 000 eq. 29): same coordinates, with the vertical one named z, and
the polar angle ``angle`` measured from +x as the paper's gamma.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..model.builder import ModelBuilder
from ..model.chain import serial_chain
from ..model.closing import ClosingConditions, ReactionDistribution

G = 9.81


def physical_pendulum(*, mass: float = 1.0, inertia: float = 0.1, rho: float = 0.5, angle: float = 0.0):
    """Physical pendulum of paper 001 Sect. 3 (Fig. 1, eqs 24-26): body G, q = [x, y, gamma].

    Body "G" (mass ``mass``, moment of inertia ``inertia`` about its centre of mass) hinged to the
    ground at the origin; its centre of mass at distance ``rho`` from the hinge, so that the hinge
    constraint is x - rho cos(gamma) = 0, y - rho sin(gamma) = 0 (the builder writes the negative,
    which changes no criterion). Coordinates G.x, G.y, G.theta (= gamma, measured from +x); gravity
    9.81 along -y; released from rest at gamma = ``angle`` (default horizontal). M = diag(m, m, J).
    """
    mb = ModelBuilder("physical-pendulum", gravity=(0.0, -G), source="paper 001 Sect. 3, eqs 24-26")
    c, s = np.cos(angle), np.sin(angle)
    mb.add_body("G", mass=mass, inertia=inertia, position=(rho * c, rho * s), angle=angle,
                outline=[(-rho, 0.0), (0.0, 0.0)])
    mb.revolute("O", "ground", "G", on_a=(0.0, 0.0), on_b=(-rho, 0.0))
    # closing conditions (eq. 27) x = rho cos(gamma), y = rho sin(gamma) with q_I = gamma; the pin
    # force f = (fx, fy) on G acts at the hinge point p = (x - rho cos gamma, y - rho sin gamma), so
    # B = dp/dq (virtual work, eq. 32)
    closing = ClosingConditions(("G.theta",), lambda qi, t: rho * np.array([np.cos(qi[0]), np.sin(qi[0])]))
    distribution = ReactionDistribution(lambda q, t: np.array([[1.0, 0.0, rho * np.sin(q[2])],
                                                               [0.0, 1.0, -rho * np.cos(q[2])]]),
                                        ("O.fx", "O.fy"))
    return dataclasses.replace(mb.build(), closing=closing, distribution=distribution)


#: four-bar data (m, kg): ground l0 = |O1 O4|, crank l1, coupler l2, rocker l3; link masses
FOUR_BAR_RELATIVE = dict(l0=1.0, l1=0.5, l2=0.8, l3=1.2, masses=(1.0, 5.0, 0.2))


def four_bar_angles(alpha1, *, l0=None, l1=None, l2=None, l3=None, branch: int = 1):
    """(alpha1, alpha2, alpha3) of the closed four-bar for crank angles alpha1 (k,).

    Geometry: O1 at the origin, O4 = (0, l0); link k has absolute angle alpha1 + ... + alphak from
    +x. alpha3 from paper 001 eq. 40, cos(alpha3) = (l0^2 + l1^2 - l2^2 - l3^2 - 2 l0 l1
    sin(alpha1)) / (2 l2 l3), with sign(alpha3) = ``branch``; alpha2 from eq. 41 (its two lines are
    sin and cos of alpha2, so alpha2 = atan2 of them). Lengths default to FOUR_BAR_RELATIVE."""
    d = FOUR_BAR_RELATIVE
    l0, l1, l2, l3 = (d[k] if x is None else x for k, x in zip(("l0", "l1", "l2", "l3"), (l0, l1, l2, l3)))
    a1 = np.asarray(alpha1, float)
    den = l0 ** 2 + l1 ** 2 - 2 * l0 * l1 * np.sin(a1)
    a3 = branch * np.arccos((den - l2 ** 2 - l3 ** 2) / (2 * l2 * l3))                          # eq. 40
    s2 = (l0 * l2 * np.cos(a1) + l0 * l3 * np.cos(a1 + a3) + l1 * l3 * np.sin(a3)) / den          # eq. 41
    c2 = (l0 * l2 * np.sin(a1) + l0 * l3 * np.sin(a1 + a3) - l1 * l3 * np.cos(a3) - l1 * l2) / den
    return np.stack(np.broadcast_arrays(a1, np.arctan2(s2, c2), a3), axis=-1)


def _closure(L, target):
    """Phi = p_end(q) - O4 (2 rows); A = dp_end/dq; gamma = sum_k L_k w_k^2 e_k (w = cumsum(v))."""
    def ends(q):
        phi = np.cumsum(q)
        return phi, np.stack([np.cos(phi), np.sin(phi)])          # (N,), (2, N)

    def jac(q, t):
        phi, e = ends(q)
        tang = np.stack([-e[1], e[0]]) * L                        # L_k perp(e_k), (2, N)
        return np.cumsum(tang[:, ::-1], axis=1)[:, ::-1]          # column i: sum_{k >= i}

    def gamma(q, v, t):
        _, e = ends(q)
        return (e * (L * np.cumsum(v) ** 2)).sum(axis=1)

    return dict(name="O4", phi=lambda q, t: (ends(q)[1] * L).sum(axis=1) - target,
                jacobian=jac, phi_t=lambda q, t: np.zeros(2), gamma=gamma)


def four_bar_relative(*, alpha1: float = 0.0, omega1: float = 6.0, gravity: float = G, branch: int = 1,
                      masses=None):
    """Four-bar linkage of paper 001 Sect. 6 (Figs 2, 3) in relative coordinates alpha1..alpha3.

    A planar chain O1-O2-O3-O4 (crank l1, coupler l2, rocker l3; uniform bars, masses 1, 5, 0.2 kg:
    a heavy coupler, so that inertia matters) hinged at O1 = origin and cut at O4 = (0, l0), closed by
    Phi = p_end - O4 = 0 (n = 3, m = 2, one degree of freedom). Own data (the paper gives none):
    l0 = 1, l1 = 0.5, l2 = 0.8, l3 = 1.2 m, a Grashof crank-rocker (l1 + l3 = 1.7 <= l0 + l2 = 1.8)
    whose coupler and rocker are never collinear (transmission angle 17.6..95.1 degrees, from
    |O2 O4| in [l0 - l1, l0 + l1]), so alpha1 never meets a singularity, as in the paper, and
    whose rocker never aligns with O1 O4 (alpha2 admissible everywhere). alpha3 is a singular choice
    where O2 lies on the line O1 O4: alpha1 = pi/2 and 3 pi/2, as in the paper's eq. 42. With this
    placement eq. 40 holds verbatim; the distribution matrix of eq. 44 is ours with x and y
    exchanged (:func:`four_bar_distribution`). Starts at ``alpha1`` turning at ``omega1`` rad/s,
    enough for full turns under gravity ``gravity`` along -y; ``masses`` overrides the link masses."""
    d = FOUR_BAR_RELATIVE
    L = np.array([d["l1"], d["l2"], d["l3"]])
    m = np.array(d["masses"] if masses is None else masses, dtype=float)
    q0 = four_bar_angles(alpha1, l0=d["l0"], l1=L[0], l2=L[1], l3=L[2], branch=branch)
    rate = np.array([1.0, *four_bar_rates(q0, L, d["l0"])]) * omega1
    model = serial_chain("four-bar-relative", lengths=L, masses=m, inertias=m * L ** 2 / 12,
                         gravity=(0.0, -gravity), q0=q0, v0=rate,
                         constraints=[_closure(L, np.array([0.0, d["l0"]]))],
                         source="paper 001 Sect. 6, eqs 39-45 (own link data)")
    closing = ClosingConditions(("alpha1",), lambda qi, t: four_bar_angles(
        qi[0], l0=d["l0"], l1=L[0], l2=L[1], l3=L[2], branch=branch)[1:], periodic=("alpha2",))  # eqs 40-41
    return dataclasses.replace(model, coordinate_names=("alpha1", "alpha2", "alpha3"), velocity_given=(0,),
                               closing=closing, distribution=ReactionDistribution(
                                   four_bar_distribution, ("O4.fx", "O4.fy")))             # eq. 44


def four_bar_rates(q, L, l0):
    """(dalpha2/dalpha1, dalpha3/dalpha1) of paper 001 eq. 42 at q = (alpha1, alpha2, alpha3)."""
    a1, a2, a3 = q
    l1, l2, l3 = L
    r3 = l0 * l1 * np.cos(a1) / (l2 * l3 * np.sin(a3))
    return np.array([-l0 * np.cos(a1 + a2) / (l3 * np.sin(a3)) - r3, r3])


def four_bar_distribution(q, t: float = 0.0):
    """B (2, 3) of the reaction at O4: B = dp_end/dq, so that B^T f is the generalized force of the
    force f = (f_x, f_y) the ground exerts on the chain end (virtual work, paper 001 eq. 32).

    Rows (ours): f_x: (-l0, -l0 + l1 sin a1, -l0 + l1 sin a1 + l2 sin(a1 + a2)),
                 f_y: (0, -l1 cos a1, -l1 cos a1 - l2 cos(a1 + a2)),
    i.e. the columns of paper 001 eq. 44 with f_x and f_y exchanged (the paper's axes are ours
    exchanged)."""
    d = FOUR_BAR_RELATIVE
    l0, l1, l2 = d["l0"], d["l1"], d["l2"]
    a1, a2 = q[0], q[1]
    s1, c1, s12, c12 = np.sin(a1), np.cos(a1), np.sin(a1 + a2), np.cos(a1 + a2)
    return np.array([[-l0, -l0 + l1 * s1, -l0 + l1 * s1 + l2 * s12],
                     [0.0, -l1 * c1, -l1 * c1 - l2 * c12]])
