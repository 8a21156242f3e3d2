"""Spatial rigid bodies in director coordinates and lower pairs (paper 004 Sects 3-4, data of Sect. 5)."""
import numpy as np
import pytest
import scipy.linalg as sla

from multibody.assembly import Workspace
from multibody.errors import ModelError
from multibody.linalg.rank import pivoted_qr
from multibody.model.director import LowerPairs, SpatialBodies
from multibody.model.director_builder import SpatialModelBuilder
from multibody.model.director_tree import build_tree, null_space_matrix, reparametrize
from multibody.models import linkage6
from multibody.models.spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage, top_data
from multibody.linalg.rotations import axis_rotation, expm_so3, inertia_to_euler, skew

MODELS = [gyro_top, cylindrical_pair, planar_pair, six_body_linkage]


@pytest.fixture(scope="module")
def models():
    return {f.__name__: f() for f in MODELS}


def test_rodrigues_is_the_exponential_map(rng):
    """eq. (43) equals the matrix exponential, on both sides of the series switch."""
    for scale in (1e-9, 1e-4, 0.3, 2.5):
        th = scale * rng.normal(size=3)
        assert np.allclose(expm_so3(th), sla.expm(skew(th)), rtol=0, atol=1e-13)  # expm: Pade, ~1e-14
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    assert np.allclose(axis_rotation(0.7, n), sla.expm(0.7 * skew(n)), atol=1e-15)
    a, b = rng.normal(size=(2, 3))
    assert np.allclose(skew(a) @ b, np.cross(a, b))


def test_euler_tensor_inverts_eq_20(rng):
    """E = 1/2 tr(J) I - J (eq. 158) is the inverse of J = tr(E) I - E (eq. 20)."""
    X = rng.normal(size=(3, 3))
    E = X @ X.T
    J = np.trace(E) * np.eye(3) - E
    assert np.allclose(inertia_to_euler(J), E)


def test_kinetic_energy_of_the_twist(rng):
    """With v = P_int t (eq. 29), 1/2 v^T M v = 1/2 M |v_phi|^2 + 1/2 w^T J w (eqs 30-33)."""
    b = SpatialModelBuilder("one")
    R = expm_so3(rng.normal(size=3))
    J = np.array([2.0, 3.0, 4.0])
    b.add_body("b", mass=1.5, inertia=J, position=(1, 2, 3), directors=R)
    model = b.build()
    P = null_space_matrix(build_tree(model), model.q0)
    t = rng.normal(size=6)
    v = P @ t
    Jg = R @ np.diag(J) @ R.T
    assert 0.5 * v @ model.mass_matrix @ v == pytest.approx(0.5 * 1.5 * t[:3] @ t[:3] + 0.5 * t[3:] @ Jg @ t[3:],
                                                            rel=1e-13)


@pytest.mark.parametrize("factory", MODELS)
def test_jacobian_and_gamma_are_exact(factory, models, rng):
    """Phi_q equals the complex-step derivative of Phi; gamma = -v^T H v equals the exact second
    difference of the quadratic s -> Phi(q + s v)."""
    model = models[factory.__name__]
    ws = Workspace(model)
    q = model.q0 + 0.1 * rng.normal(size=model.n)
    v = rng.normal(size=model.n)
    _, A, _, gamma = ws.constraints(0.0, q, v)
    h = 1e-30
    J = np.column_stack([np.concatenate([g.values(np.append(q + 1j * h * e, 0))[0].imag / h
                                         for g in model.constraints]) for e in np.eye(model.n)])
    assert np.allclose(A, J, rtol=0, atol=1e-13)
    phi = lambda x: ws.constraints(0.0, x, v)[0]  # noqa: E731
    assert np.allclose(-gamma, phi(q + v) - 2 * phi(q) + phi(q - v), rtol=0, atol=1e-11)


@pytest.mark.parametrize("factory", MODELS)
def test_null_space_matrices(factory, models, rng):
    """Continuous G P = 0 on the manifold (eq. 62) and the discrete design conditions: F(mu) keeps
    the tree constraints (Sect. 4.4) and G(q_mid) P(q_n, q_n+1) = 0 (eqs 14, 74) for any increment."""
    model = models[factory.__name__]
    tree, ws = build_tree(model), Workspace(model)
    zero = np.zeros(model.n)
    Phi, A, _, _ = ws.constraints(0.0, model.q0, zero)
    tree_rows = np.setdiff1d(np.arange(model.m), tree.closure_rows(model))
    P = null_space_matrix(tree, model.q0)
    assert np.max(np.abs(A[tree_rows] @ P)) < 1e-13
    assert np.linalg.matrix_rank(P) == tree.d
    q1 = model.q0 + reparametrize(tree, model.q0, 0.4 * rng.normal(size=tree.d))
    assert np.max(np.abs(ws.constraints(0.0, q1, zero)[0][tree_rows])) < 1e-13
    qm = 0.5 * (model.q0 + q1)
    Gm = ws.constraints(0.0, qm, zero)[1][tree_rows]
    assert np.max(np.abs(Gm @ null_space_matrix(tree, qm))) < 1e-13


def test_counts_of_the_paper(models):
    """Unknowns of the constrained / reduced schemes (Sects 5.1-5.4): 21 / 3, 40 / 8, 39 / 9, and the
    linkage: n = 60, m = 60 of rank 59 (one redundant closure row), 1 DOF."""
    for name, n, m, d in (("gyro_top", 12, 9, 3), ("cylindrical_pair", 24, 16, 8), ("planar_pair", 24, 15, 9)):
        model = models[name]
        assert (model.n, model.m, build_tree(model).d) == (n, m, d)
    model = models["six_body_linkage"]
    A = Workspace(model).constraints(0.0, model.q0, np.zeros(60))[1]
    qr = pivoted_qr(A)
    assert (model.n, model.m, qr.rank) == (60, 60, 59)
    assert [model.constraint_labels[i].split(".")[0] for i in qr.redundant_rows] == ["joint6"]
    assert build_tree(model).d - 4 == 1


def test_top_reduced_mass_matrix(models):
    """P^T M P = sum J_I d_I d_I + M L^2 (d1 d1 + d2 d2) (eqs 166-168) and v0 = P(q0) omega (eq. 170)."""
    model, c = models["gyro_top"], top_data()
    P = null_space_matrix(build_tree(model), model.q0)
    D = model.q0[3:].reshape(3, 3).T
    Mt = D @ np.diag(c["J"] + c["mass"] * c["L"] ** 2 * np.array([1, 1, 0])) @ D.T
    assert np.allclose(P.T @ model.mass_matrix @ P, Mt, rtol=1e-13)
    omega = c["omega_p"] * np.eye(3)[2] + c["omega_s"] * D[:, 2]
    assert np.allclose(model.v0, P @ omega)
    bodies = model.constraints[0]
    assert np.allclose(bodies.momenta(model.q0, model.v0)[1], Mt @ omega)     # eq. (173)


def test_linkage_body_data_of_the_paper():
    """Body 0: mass rho a^2 L^3 / 6, centre of mass (aL/4, L/2, -aL/4) and the printed inertia tensor;
    bodies 1, 3, 5 mirror images of body 0 (Sect. 5.4.2)."""
    a, L, rho = np.tan(0.16 * np.pi), 0.1, 1000.0
    verts, mass, com, J = linkage6.bodies()[0]
    Jp = rho * L ** 5 * a ** 2 / 40 * np.array([[1 / 3 + a * a / 4, a / 6, -a * a / 12], [a / 6, a * a / 2, a / 6],
                                                [-a * a / 12, a / 6, 1 / 3 + a * a / 4]])
    assert mass == pytest.approx(rho * a * a * L ** 3 / 6, rel=1e-14)
    assert np.allclose(com, [a * L / 4, L / 2, -a * L / 4], rtol=1e-14)
    assert np.allclose(J, Jp, rtol=1e-13, atol=0)
    handedness = [np.sign(np.linalg.det(v[1:] - v[0])) for v, *_ in linkage6.bodies()]
    assert handedness == [handedness[0], -handedness[0]] * 3


def test_linkage_initial_velocities_follow_eq_191(models):
    """The closure null space at theta = 0 is (1, dtheta2/dtheta1, 1, dtheta2/dtheta1, 1) with
    dtheta2/dtheta1 = 1 (theta2 = arcsin(sin theta1 / (1 - sin theta1)), eq. 191), theta1' = 30."""
    model = models["six_body_linkage"]
    bodies = model.constraints[0]
    pairs = next(g for g in model.constraints if isinstance(g, LowerPairs))
    h = 1e-7   # the joint angles after a tiny step along v0 give the joint rates
    rates = (pairs.relative_coordinates(bodies, model.q0 + h * model.v0)
             - pairs.relative_coordinates(bodies, model.q0 - h * model.v0)) / (2 * h)
    assert np.allclose(rates[:5], 30.0, rtol=1e-6)


def test_builder_errors():
    b = SpatialModelBuilder("bad")
    with pytest.raises(ModelError, match="triangle"):
        b.add_body("b", mass=1, inertia=[1, 1, 5], position=(0, 0, 0))
    b.add_body("b", mass=1, inertia=[1, 1, 1], position=(0, 0, 0))
    with pytest.raises(ModelError, match="unknown body"):
        b.spherical("s", "nobody", "b", point=(0, 0, 0))
    with pytest.raises(ModelError, match="body2"):
        b.spherical("s", "b", None, point=(0, 0, 0))
    with pytest.raises(ModelError, match="kind"):
        b.joint("X", "j", None, "b", point=(0, 0, 0))


def test_spatial_groups_describe_the_bodies(models):
    bodies = models["cylindrical_pair"].constraints[0]
    assert isinstance(bodies, SpatialBodies)
    assert np.allclose(bodies.inertia, [[304, 304, 8], [18.75, 18.75, 19.5]])


def test_snapshots_at_the_papers_instants():
    """Paper 004's snapshot figures show given instants (Fig. 12: t = 0.1, 0.3, 0.7; Fig. 16: 0.02 ... 0.08;
    Fig. 24: 0.02 ... 0.26): a run of those models draws them (those inside the run); others are evenly spaced."""
    from multibody import Result
    from multibody.plot.spatial import snapshot_times
    run = lambda name, t_end: Result(np.linspace(0.0, t_end, 11), {}, {"model": name})    # noqa: E731
    assert snapshot_times(run("planar-pair", 0.1)) == [0.02, 0.04, 0.05, 0.06, 0.07, 0.08]
    assert snapshot_times(run("cylindrical-pair", 0.5)) == [0.1, 0.3]
    assert snapshot_times(run("six-body-linkage", 0.3)) == [0.02, 0.04, 0.08, 0.09, 0.13, 0.26]
    assert snapshot_times(run("gyro-top", 1.0)) is None
