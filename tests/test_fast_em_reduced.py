"""The compiled reduced energy-momentum step (multibody.fast.em_tree, issue 16) reproduces the NumPy reference of
the discrete null space method (paper 004 Sects 4.3-4.5, 5.4, eq. 190) and conserves what the scheme conserves.

The tree maps evaluate the same formulas in another order, so they agree to round-off (ROUND_OFF relative); the
stepped states solve the same equations to the same Newton tolerance (1e-13 relative) from the same guesses, so
they agree to that tolerance times the steps, and Newton takes the same iterations. The scheme conserves energy
and the momentum maps of symmetries exactly up to the Newton tolerance (paper 004 Sect. 1, eq. 10 with
quadratic constraints): what remains over N steps is N times that tolerance (and round-off).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody.assembly import Workspace  # noqa: E402
from multibody.fast.em_tree import TreeTable  # noqa: E402
from multibody.fast.spatial import QuadraticTable  # noqa: E402
from multibody.integrate.energy_momentum import EnergyMomentumStepper  # noqa: E402
from multibody.model.director_builder import SpatialModelBuilder  # noqa: E402
from multibody.model.director_tree import build_tree, null_space_matrix, pair_frames, reparametrize  # noqa: E402
from multibody.models.spatial_mechanisms import gimbal_lock  # noqa: E402
from multibody.models.spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage  # noqa: E402

ROUND_OFF = 1e-12
#: every pair kind (S gyro top, R linkage with a closure and gimbal lock, C, E with a root frame, P slider_arm)
MODELS = {"gyro-top": gyro_top, "six-body-linkage": six_body_linkage, "cylindrical-pair": cylindrical_pair,
          "planar-pair": planar_pair, "gimbal-lock": gimbal_lock}


def slider_arm():
    """A slider on a prismatic pair to the ground carrying an arm on a revolute pair, under gravity."""
    b = SpatialModelBuilder("slider-arm")
    b.add_body("slider", mass=2.0, inertia=[0.2, 0.3, 0.4], position=(0, 0, 0))
    b.add_body("arm", mass=1.0, inertia=[0.1, 0.5, 0.5], position=(0.5, 0, 0))
    b.prismatic("slide", None, "slider", point=(0, 0, 0), axis=(1, 1, 0))
    b.revolute("hinge", "slider", "arm", point=(0, 0, 0), axis=(0, 1, 0))
    b.gravity()
    model = b.build()
    return model.with_initial(v0=null_space_matrix(build_tree(model), model.q0) @ np.array([0.7, 3.0]))


MODELS["slider-arm"] = slider_arm


@pytest.fixture(params=sorted(MODELS), ids=sorted(MODELS))
def model(request):
    return MODELS[request.param]()


@pytest.mark.parametrize("unknowns", ["joint", "paper"])
def test_tree_maps_match_the_reference(model, unknowns):
    """F_{q_n}(mu) - q_n (with its complex-step part) and P(q) at q_n and at a moved configuration."""
    rng = np.random.default_rng(3)
    tree = replace(build_tree(model), unknowns=unknowns)
    tree = replace(tree, frames=pair_frames(tree, model.q0))
    table = TreeTable(tree, model.q0, QuadraticTable(model), model.mass_matrix)
    table.set_frames(tree.frames)
    from multibody.fast.em_tree_kernels import reparametrize as compiled
    h = 1e-30
    mu = 0.3 * rng.standard_normal(tree.d) + 1j * h * rng.standard_normal(tree.d)
    ref, out = reparametrize(tree, model.q0, mu), np.empty(model.n, dtype=complex)
    compiled(model.q0 + 0j, mu, table.tr, out)
    scale = max(1.0, np.max(np.abs(model.q0)))
    assert np.max(np.abs(out.real - ref.real)) <= ROUND_OFF * scale
    assert np.max(np.abs(out.imag - ref.imag)) <= ROUND_OFF * h * scale
    for q in (model.q0, model.q0 + reparametrize(tree, model.q0, mu.real)):
        P = null_space_matrix(tree, q)
        assert np.max(np.abs(table.null_space(q) - P)) <= ROUND_OFF * max(1.0, np.max(np.abs(P)))


@pytest.mark.parametrize("unknowns", ["joint", "paper"])
def test_compiled_reduced_steps_match_the_reference(model, unknowns):
    """Twenty steps: the same Newton iterations and the same states to the Newton tolerance times the steps."""
    dt = 1e-3 if model.name in ("gyro-top", "six-body-linkage") else 1e-2
    fast, ref = (EnergyMomentumStepper(model, scheme="reduced", dt=dt, unknowns=unknowns, fast=f)
                 for f in (True, False))
    assert fast.compiled is not None and ref.compiled is None
    (qa, va), (qb, vb) = (model.q0, model.v0), (model.q0, model.v0)
    for k in range(20):
        qa, va = fast.step(qa, va, k * dt)
        qb, vb = ref.step(qb, vb, k * dt)
        assert fast.iterations == ref.iterations
        # with closures the dependent unknowns are chosen by pivoted QR among near ties, which round-off may
        # break either way: other (equivalent) equations, the same solution, another condition number
        if np.array_equal(fast.dep, ref.dep) and np.array_equal(fast.closure_rows, ref.closure_rows):
            assert fast.condition == pytest.approx(ref.condition, rel=1e-6)
    assert np.max(np.abs(qa - qb)) <= 20 * 1e-13 * max(1.0, model.length_scale, np.max(np.abs(qb)))
    # v_{n+1} = 2 dq / dt - v_n: a residual within tol |2 M v_n| moves dq by ~ tol |v| dt, v by 2 tol |v|
    assert np.max(np.abs(va - vb)) <= 20 * 2e-13 * max(1.0, np.max(np.abs(vb)))


def _energy(model, ws, q, v):
    return 0.5 * v @ model.mass_matrix @ v + ws.potential(0.0, q)


@pytest.mark.parametrize("name", ["gyro-top", "cylindrical-pair", "six-body-linkage"])
def test_compiled_reduced_scheme_conserves_energy_and_momenta(name):
    """Paper 004: E_{n+1} = E_n (gravity is a discrete gradient) and the momentum maps of the symmetries: the
    top's angular momentum about the vertical through its fixed point, all momenta of the free cylindrical pair."""
    model = MODELS[name]()
    em = EnergyMomentumStepper(model, scheme="reduced", dt=1e-3)
    assert em.compiled is not None
    ws, bodies = Workspace(model), em.tree.bodies
    q, v = model.q0, model.v0
    E0, (p0, L0) = _energy(model, ws, q, v), bodies.momenta(q, v)
    steps = 200
    for k in range(steps):
        q, v = em.step(q, v, k * 1e-3)
    p, L = bodies.momenta(q, v)
    T0 = 0.5 * model.v0 @ model.mass_matrix @ model.v0
    assert abs(_energy(model, ws, q, v) - E0) <= steps * 1e-13 * max(T0, abs(E0))
    if name == "gyro-top":
        assert abs(L[2] - L0[2]) <= steps * 1e-13 * np.max(np.abs(L0))
    if name == "cylindrical-pair":
        assert np.max(np.abs(p - p0)) <= steps * 1e-13 * max(1.0, np.max(np.abs(p0)))
        assert np.max(np.abs(L - L0)) <= steps * 1e-13 * np.max(np.abs(L0))
    assert np.max(np.abs(ws.constraints(0.0, q, v)[0])) <= 1e-12 * max(1.0, model.length_scale)
