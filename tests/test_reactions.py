"""Joint reactions (multibody.reactions) and physical reactions with a distribution matrix B
(paper 001 Sect. 5). Expected values are hand calculations (derived in the docstrings), Newton's
laws, and the identities of paper 001 eqs 32-38 and Appendix B."""
import csv

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multibody import Workspace
from multibody.analysis.physical_reactions import joint_distribution, physical_reactions
from multibody.errors import MultibodyError
from multibody.formulations.lagrange import Lagrange
from multibody.kinematics import consistent_state
from multibody.models import MODELS
from multibody.models.linkages import slider_crank
from multibody.models.pendulums import pendulum
from multibody.models.projective import four_bar_distribution, four_bar_relative, physical_pendulum
from multibody.analysis.reactions import COMPONENTS, joint_reactions, reaction_map
from multibody.formulations.registry import FORMULATIONS
from multibody.simulation import RunOptions, simulate

G = 9.81
ROUND_OFF = 1e-12     # relative agreement of the three schemes (a few well-conditioned solves)
OPTS = RunOptions(rtol=1e-10, atol=1e-12)


def _get(res, k, label):
    return res.column("reactions", label)[k]


@pytest.mark.parametrize("formulation", sorted(FORMULATIONS))
def test_physical_pendulum_reactions_by_hand(formulation):
    """Physical pendulum (body G, mass m, inertia J about the centre of mass, which lies at distance
    rho from the pin at the origin, angle gamma from +x, gravity g along -y).

    Moment about the pin: (J + m rho^2) gamma'' = -m g rho cos(gamma). With e1 = (cos g, sin g),
    e2 = (-sin g, cos g): a_G = rho gamma'' e2 - rho gamma'^2 e1, and Newton for G,
    m a_G = F + (0, -m g), gives the pin force on G: F = m a_G + (0, m g). In G's frame (x along e1):
    F.e1 = -m rho w^2 + m g sin g, F.e2 = m rho gamma'' + m g cos g. Its moment about the centre of
    mass (lever -rho e1): Mz = -rho F.e2 (= J gamma'', the rotation equation about G). On the ground:
    -F, and the moment about the origin, where the pin is, vanishes."""
    m, J, rho = 2.0, 0.3, 0.6
    res = simulate(physical_pendulum(mass=m, inertia=J, rho=rho, angle=0.2), t_end=0.8,
                   formulation=formulation, options=OPTS)
    g, w = res.q[:, 2], res.v[:, 2]
    alpha = -m * G * rho * np.cos(g) / (J + m * rho ** 2)
    e1, e2 = np.stack([np.cos(g), np.sin(g)], 1), np.stack([-np.sin(g), np.cos(g)], 1)
    F = m * (rho * alpha[:, None] * e2 - rho * (w ** 2)[:, None] * e1) + np.array([0.0, m * G])
    col = lambda lab: res.column("reactions", lab)   # noqa: E731
    tol = dict(atol=1e-7 * m * G)
    np.testing.assert_allclose(col("O.on_G.Fx"), F[:, 0], **tol)
    np.testing.assert_allclose(col("O.on_G.Fy"), F[:, 1], **tol)
    np.testing.assert_allclose(col("O.on_G.Fx_body"), -m * rho * w ** 2 + m * G * np.sin(g), **tol)
    np.testing.assert_allclose(col("O.on_G.Fy_body"), m * rho * alpha + m * G * np.cos(g), **tol)
    np.testing.assert_allclose(col("O.on_G.Mz"), J * alpha, **tol)
    np.testing.assert_allclose(col("O.on_ground.Fx"), -F[:, 0], **tol)
    np.testing.assert_allclose(col("O.on_ground.Mz"), 0.0, **tol)


def test_slider_crank_reactions_by_hand():
    """Slider-crank held at rest (crank driven at rate 0, phi = pi/3): crank 1 kg (length r = 0.2),
    rod 2 kg (l = 0.6), slider 0.5 kg; accelerations vanish, so statics.

    Slider: the prismatic joint is frictionless along x, so the rod's force on the slider at B has
    no x component. Rod (weight at its midpoint G_r): moments about A with F_B = (0, B_y):
    (x_B - x_A) B_y - (x_G - x_A) m_r g = 0, so B_y = m_r g / 2 on the rod, and then A pushes the rod
    up with m_r g / 2 as well. Crank: O.on_crank = (0, m_c g + m_r g / 2); moments about O:
    tau - x_A m_r g / 2 - (x_A / 2) m_c g = 0, so the driving torque is tau = g x_A (m_c + m_r) / 2.
    Slider vertical: P.on_slider = (0, m_s g + m_r g / 2), and no moment (both forces act at its
    centre). Ground: the pin O at the origin takes no moment about the origin; the prismatic takes
    the moment -x_s (m_s g + m_r g / 2). Body frame of the rod (angle beta): R(beta)^T F."""
    r, l, phi, mc, mr, ms = 0.2, 0.6, np.pi / 3, 1.0, 2.0, 0.5
    model = slider_crank(crank=r, rod=l, omega=0.0, phi0=phi)
    res = simulate(model, t_end=0.01, options=OPTS)
    xA, yA = r * np.cos(phi), r * np.sin(phi)
    xs = xA + np.sqrt(l ** 2 - yA ** 2)
    beta = np.arctan2(-yA, xs - xA)
    expected = {
        "B.on_slider.Fx": 0.0, "B.on_slider.Fy": -mr * G / 2, "B.on_rod.Fx": 0.0, "B.on_rod.Fy": mr * G / 2,
        "A.on_rod.Fx": 0.0, "A.on_rod.Fy": mr * G / 2, "A.on_crank.Fy": -mr * G / 2,
        "O.on_crank.Fx": 0.0, "O.on_crank.Fy": mc * G + mr * G / 2, "O.on_ground.Mz": 0.0,
        "O-driver.on_crank.Mz": G * xA * (mc + mr) / 2, "O-driver.on_crank.Fx": 0.0,
        "O-driver.on_ground.Mz": -G * xA * (mc + mr) / 2,
        "P.on_slider.Fx": 0.0, "P.on_slider.Fy": ms * G + mr * G / 2, "P.on_slider.Mz": 0.0,
        "P.on_ground.Mz": -xs * (ms * G + mr * G / 2),
        "A.on_rod.Fx_body": np.sin(beta) * mr * G / 2, "A.on_rod.Fy_body": np.cos(beta) * mr * G / 2,
    }
    for label, value in expected.items():
        np.testing.assert_allclose(res.column("reactions", label), value, atol=1e-9, err_msg=label)


@pytest.mark.parametrize("name", ["slider-crank", "four-bar", "double-four-bar", "physical-pendulum"])
def test_newton_laws_for_every_joint(name):
    """Action and reaction: a joint between two bodies pushes them with opposite forces, and its
    moments about the origin cancel (Phi invariant under a common rigid motion). Newton-Euler per
    body: the joint reactions plus the applied forces give m a_G and J theta''."""
    model = MODELS[name].factory()
    res = simulate(model, t_end=0.3, options=OPTS)
    rmap = reaction_map(model)
    ws = Workspace(model)
    for k in (0, len(res.t) // 2, -1):
        q, v, a = res.q[k], res.v[k], res["a"][k]
        table = res["reactions"][k].reshape(-1, len(COMPONENTS))
        pos = np.append(q, 0.0)[rmap.cols[:, :2]]
        moment_origin = table[:, 2] + pos[:, 0] * table[:, 1] - pos[:, 1] * table[:, 0]
        pairs = np.flatnonzero(~rmap.ground[::2] & ~rmap.ground[1::2]) * 2
        np.testing.assert_allclose(table[pairs, :2], -table[pairs + 1, :2], atol=1e-9)
        np.testing.assert_allclose(moment_origin[pairs], -moment_origin[pairs + 1], atol=1e-9)
        f, M = ws.forces(res.t[k], q, v), model.mass(q)
        for b in model.bodies:
            cols = [c for c in b.cols if c >= 0]
            mine = np.all(rmap.cols == np.array([c if c >= 0 else model.n for c in b.cols]), axis=1)
            total = table[mine][:, [0, 1, 2][: len(cols)]].sum(axis=0)
            np.testing.assert_allclose(total + f[cols], (M @ a)[cols], atol=1e-8 * max(1.0, np.abs(f).max()))


def test_reactions_in_csv_and_hdf5(tmp_path):
    res = simulate(slider_crank(), t_end=0.05)
    with open(res.to_csv(tmp_path / "r.csv")) as fh:
        header = next(csv.reader(fh))
    assert "reactions:O-driver.on_crank.Mz" in header and "reactions:B.on_slider.Fx_body" in header
    back = type(res).load(res.save(tmp_path / "r.h5"))
    np.testing.assert_array_equal(back["reactions"], res["reactions"])
    q, A = res.q[-1], Workspace(slider_crank()).constraints(res.t[-1], res.q[-1], res.v[-1])[1]
    direct = joint_reactions(slider_crank(), q, A, res["multipliers"][-1])
    assert direct["O-driver.on_crank.Mz"] == pytest.approx(res.column("reactions", "O-driver.on_crank.Mz")[-1])


def test_models_without_joints_have_no_reaction_series():
    assert reaction_map(pendulum()) is None
    assert "reactions" not in simulate(pendulum(), t_end=0.05).series


@settings(max_examples=25, deadline=None)
@given(gamma=st.floats(-np.pi, np.pi), speed=st.floats(-5, 5))
def test_pendulum_rod_tension_with_user_B(gamma, speed):
    """Mathematical pendulum, Phi = x^2 + z^2 - rho^2: lam is not the rod force (paper 001 Sect. 5).
    The rod pulls the bob towards the pivot with tension T: force -T (x, z) / rho, so B = -(x, z) / rho
    (virtual work). Radially, m (-v^2 / rho) = -T - m g z / rho, so T = m v^2 / rho - m g z / rho.
    The three schemes give T, and B^T T = C^T lam_paper = -A^T lam (eq. 32)."""
    m, rho = 1.3, 0.9
    model = pendulum(mass=m, length=rho, angle=gamma)
    q = rho * np.array([np.cos(gamma), np.sin(gamma)])
    v = speed * np.array([-np.sin(gamma), np.cos(gamma)])
    model = model.with_initial(q0=q, v0=v)
    B = lambda q, t: -q[None, :] / rho   # noqa: E731
    r = physical_reactions(model, 0.0, q, v, B)
    T = m * speed ** 2 / rho - m * G * q[1] / rho
    for f in (r.f35, r.f37, r.f38):
        np.testing.assert_allclose(f, [T], atol=1e-12 * max(1.0, abs(T), m * G))
    acc = Lagrange(model).accelerations(0.0, q, v)
    A = Workspace(model).constraints(0.0, q, v)[1]
    np.testing.assert_allclose(B(q, 0).T @ r.f37, -A.T @ acc.multipliers, atol=1e-10 * max(1.0, abs(T)))


@settings(max_examples=25, deadline=None)
@given(alpha1=st.floats(0, 2 * np.pi), omega=st.floats(-8, 8))
def test_four_bar_three_schemes_agree(alpha1, omega):
    """Four-bar in relative coordinates, reaction at O4 with B of eq. 44: schemes (35), (37), (38)
    agree to round-off, the lower part of (37) vanishes (Appendix B), and eq. 32 holds:
    B^T f = C^T lam_paper = C_hat^T lam_hat with C_hat = [-J_DI  I] (eq. 31)."""
    model = four_bar_relative(alpha1=alpha1, omega1=omega)
    q, v = consistent_state(model)
    r = physical_reactions(model, 0.0, q, v, four_bar_distribution)
    scale = max(1.0, np.abs(r.f37).max())
    assert r.spread < ROUND_OFF * 10
    np.testing.assert_allclose(r.tangent, 0.0, atol=ROUND_OFF * scale * 10)
    B = four_bar_distribution(q)
    acc = Lagrange(model).accelerations(0.0, q, v)
    A = Workspace(model).constraints(0.0, q, v)[1]
    np.testing.assert_allclose(B.T @ r.f37, -A.T @ acc.multipliers, atol=1e-9 * scale)
    from multibody.analysis.partition import tangent_matrix
    D, J_DI = tangent_matrix(A, r.partition)
    C_hat = np.zeros((2, 3))
    C_hat[:, list(r.partition.independent)] = -J_DI
    C_hat[:, list(r.partition.dependent)] = np.eye(2)
    np.testing.assert_allclose(C_hat.T @ r.closing, B.T @ r.f37, atol=1e-9 * scale)


@pytest.mark.parametrize("name", ["slider-crank", "four-bar", "double-four-bar", "physical-pendulum"])
def test_joint_supplied_B_schemes_agree_with_multipliers(name):
    """Builder joints supply B = S C (module docstring): the three schemes agree to round-off and
    give the multipliers with the sign of each primitive: f = -S lam."""
    model = MODELS[name].factory()
    q, v = consistent_state(model)
    B = joint_distribution(model, 0.0, q)
    r = physical_reactions(model, 0.0, q, v, B)
    scale = max(1.0, np.abs(r.f37).max())
    assert r.spread < ROUND_OFF * 10
    acc = Lagrange(model).accelerations(0.0, q, v)
    rows = list(r.partition.rows)
    if len(rows) == model.m:
        S = np.sign(np.einsum("ij,ij->i", B, Workspace(model).constraints(0.0, q, v)[1]))
        np.testing.assert_allclose(r.f37, -S * acc.multipliers, atol=1e-9 * scale)


def test_bad_distribution_is_refused():
    model = four_bar_relative()
    q, v = consistent_state(model)
    with pytest.raises(MultibodyError, match="constrained subspace"):
        physical_reactions(model, 0.0, q, v, np.array([[1.0, 0, 0], [0, 1.0, 0]]))
    with pytest.raises(MultibodyError, match=r"\(2, 3\)"):
        physical_reactions(model, 0.0, q, v, np.ones((1, 3)))
    with pytest.raises(MultibodyError, match="supply B"):
        joint_distribution(pendulum(), 0.0, pendulum().q0)
