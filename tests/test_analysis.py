"""Mobility analysis: the ranks and DOF published in paper 000 Sect. 3, tangent-basis identities."""
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multibody.analysis import analyze
from multibody.assembly import Workspace
from multibody.cli import main
from multibody.kinematics import solve_positions
from multibody.linalg.rank import pivoted_qr
from multibody.models import MODELS
from multibody.linalg.tangent import omega_matrix, polar_reorthogonalize

# (n, m, rank at the initial configuration, rank at the `singular` one): paper 000 Sects. 3.1-3.5
PAPER = {
    "pendulum-redundant": (2, 2, 1, None),
    "double-four-bar": (15, 14, 14, 12),
    "double-four-bar-modified": (12, 12, 11, 10),
    "triple-four-bar-modified": (15, 16, 14, 13),
    "four-bar-2x2-modified": (24, 24, 22, 21),
}


@pytest.mark.parametrize("name", PAPER)
def test_paper_ranks(name):
    n, m, rank, rank_s = PAPER[name]
    model = MODELS[name].factory()
    r = analyze(model)
    assert (r.n, r.m, r.h, r.rank, r.dof, r.redundancy, r.singular) == (n, m, 0, rank, n - rank, m - rank, False)
    assert r.admissible_motions.shape == (n, n - rank)
    assert len(r.redundant_rows) == m - rank
    if rank_s is not None:
        s = analyze(model, "singular")
        assert (s.rank, s.dof, s.redundancy, s.singular) == (rank_s, n - rank_s, m - rank_s, True)
        assert s.nearby_rank == rank          # the generic rank on the branch through it


def test_branch_tangent_at_the_double_four_bar_singularity_is_the_conventional_motion():
    """Paper 000 Sect. 3.2: of the three admissible motions at the singular configuration, the motion of
    the mechanism continues along the conventional one (cranks rotating together, couplers translating
    vertically); the second-order condition w^T Phi_qq[u, u] = 0 (analysis.branches) selects it, and the
    other directions found are real branches as well (the couplers' bifurcation), none is spurious."""
    from multibody.analysis.branches import branch_tangents
    model = MODELS["double-four-bar"].factory()
    r = analyze(model, "singular")
    q = np.asarray(model.configuration("singular"), float)
    B = branch_tangents(model, q, r.admissible_motions)
    u = np.concatenate([[0.0, 0.5, 1.0] if k % 2 else [0.0, 1.0, 0.0] for k in range(1, 6)])
    u /= np.linalg.norm(u)
    assert np.max(np.abs(B.T @ u)) == pytest.approx(1.0, abs=1e-8)
    ws = Workspace(model)
    for col in B.T:      # each tangent: the projection of q + s u moves it by O(s^2), not O(s)
        s = 1e-3 * model.length_scale
        qj = solve_positions(model, q + s * col, 0.0, ws=ws)
        assert np.linalg.norm(qj - q - s * col) < 0.1 * s


def test_redundant_rows_name_the_duplicated_constraint():
    r = analyze(MODELS["pendulum-redundant"].factory())
    assert len(r.redundant_rows) == 1 and r.redundant_rows[0] in ("rod.0", "rod-copy.0")


def test_first_admissible_motion_at_the_double_four_bar_singularity():
    """Paper 000 Sect. 3.2: at the singular configuration the conventional motion (no horizontal
    displacement; cranks 1, 3, 5 with vertical speed L/2 theta' and rotation theta'; couplers 2, 4
    twice the vertical speed, no rotation) is one of the three admissible motions."""
    r = analyze(MODELS["double-four-bar"].factory(), "singular")
    u = np.concatenate([[0.0, 0.5, 1.0] if k % 2 else [0.0, 1.0, 0.0] for k in range(1, 6)])
    N = r.admissible_motions
    assert N.shape[1] == 3
    np.testing.assert_allclose(N @ (N.T @ u), u, atol=1e-12)


def test_analyze_cli_json():
    out = CliRunner().invoke(main, ["analyze", "triple-four-bar-modified", "--configuration", "singular", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert {k: d[k] for k in ("n", "m", "h", "rank", "dof", "redundancy", "singular")} == dict(
        n=15, m=16, h=0, rank=13, dof=2, redundancy=3, singular=True)
    assert len(d["redundant_rows"]) == 3 and len(d["R_diag"]) == 15
    assert np.array(d["admissible_motions"]).shape == (15, 2)


def test_analyze_cli_unknown_configuration():
    out = CliRunner().invoke(main, ["analyze", "double-four-bar", "--configuration", "nope"])
    assert out.exit_code == 2 and "no configuration 'nope'" in out.output


def _random_configuration(model, ws, seeds):
    """A configuration on Phi = 0: q0 moved along its admissible motions, projected back."""
    q = model.q0.copy()
    for s in seeds:
        T = pivoted_qr(ws.constraints(0.0, q, np.zeros(model.n))[1]).null_space
        q = solve_positions(model, q + 0.5 * T @ np.resize(s, T.shape[1]), 0.0, ws=ws)
    return q


@pytest.mark.parametrize("name", list(PAPER) + ["pendulum", "four-bar", "slider-crank"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seeds=st.lists(st.lists(st.floats(-1, 1), min_size=3, max_size=3), min_size=1, max_size=3),
       pert=st.floats(-0.2, 0.2))
def test_tangent_basis_identities(name, seeds, pert):
    """A T = 0 and T^T T = I for the QR basis (eqs 8, 25, 28), for the re-orthogonalised one (App. A)
    and Omega skew (eq. 15) at random configurations."""
    model = MODELS[name].factory()
    ws = Workspace(model)
    q = _random_configuration(model, ws, seeds)
    A = ws.constraints(0.0, q, np.zeros(model.n))[1]
    pqr = pivoted_qr(A)
    T = pqr.null_space
    scale = np.linalg.norm(A)
    f = T.shape[1]
    assert np.linalg.norm(A @ T) <= 1e-10 * scale   # q on Phi = 0 to 1e-12 L (see test_nullspace)
    np.testing.assert_allclose(T.T @ T, np.eye(f), atol=1e-13)
    if f == 0:
        return
    rng = np.random.default_rng(abs(hash((name, pert))) % 2 ** 32)
    T2 = polar_reorthogonalize(T + pert * rng.standard_normal(T.shape), pqr.Q[:, :pqr.rank])
    assert np.linalg.norm(A @ T2) <= 1e-12 * scale
    np.testing.assert_allclose(T2.T @ T2, np.eye(f), atol=1e-12)
    Om = omega_matrix(pqr, rng.standard_normal(A.shape))
    np.testing.assert_allclose(Om, -Om.T, atol=0)
    np.testing.assert_array_equal(Om[pqr.rank:, pqr.rank:], 0.0)
