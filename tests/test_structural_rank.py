"""The structural full-row-rank certificate (analysis.structural_rank): trees of revolute joints are certified,
closed loops, distance rows and redundant rows are not; a certified model's run reports a complete, empty list of
singular crossings without sampling."""
import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.analysis.structural_rank import full_row_rank_everywhere
from multibody.assembly import Workspace
from multibody.model.builder import ModelBuilder
from multibody.models.four_bars import double_four_bar, n_four_bar
from multibody.models.pendulums import pendulum


def chain(n: int, close: bool = False, twice: bool = False):
    """n bars of length 1 hanging from the ground at the origin; ``close`` pins the free end to the ground (a
    closed loop), ``twice`` repeats the first joint (two redundant rows)."""
    b = ModelBuilder(f"chain-{n}")
    for k in range(n):
        b.add_body(f"b{k}", mass=1.0, inertia=1.0 / 12, position=(k + 0.5, 0.0), angle=0.0)
    b.revolute("j0", "ground", "b0", at=(0.0, 0.0))
    if twice:
        b.revolute("j0bis", "ground", "b0", at=(0.0, 0.0))
    for k in range(1, n):
        b.revolute(f"j{k}", f"b{k - 1}", f"b{k}", at=(float(k), 0.0))
    if close:
        b.revolute("close", f"b{n - 1}", "ground", at=(float(n), 0.0))
    return b.build()


@pytest.mark.parametrize("n", [1, 3, 40])
def test_an_open_chain_is_certified_and_its_jacobian_has_full_row_rank(n):
    """The proof's claim checked where the proof does not look: at random configurations, off the constraint
    manifold too, A (2n x 3n) has rank 2n (its pivot block is triangular with unit diagonal: det = +-1)."""
    model = chain(n)
    assert full_row_rank_everywhere(model)
    ws, rng = Workspace(model), np.random.default_rng(5)
    for _ in range(5):
        A = ws.constraints(0.0, rng.uniform(-4, 4, model.n), np.zeros(model.n))[1]
        assert np.linalg.matrix_rank(A) == model.m


@pytest.mark.parametrize("model", [chain(3, close=True), chain(3, twice=True), double_four_bar(),
                                   n_four_bar(cells=10), pendulum()],
                         ids=["closed-loop", "redundant", "double-four-bar", "n-four-bar", "distance-row"])
def test_loops_redundant_rows_and_varying_entries_are_not_certified(model):
    """A closed loop has singular configurations (paper 000: the parallelogram chains), a repeated joint is rank
    deficient everywhere; the pendulum's distance row has full rank on its manifold but its entries vary, and the
    certificate claims nothing it has not proved."""
    assert not full_row_rank_everywhere(model)


def test_a_certified_chain_reports_a_complete_empty_crossing_list():
    """No singular configuration exists, so none is reported and the list is complete (monitored)."""
    model = chain(4)
    res = simulate(model, t_end=0.5, options=RunOptions(rtol=1e-6, atol=1e-8))
    assert res.summary["singular_crossings"] == []
    assert res.summary["singular_crossings_monitored"] is True


def test_user_rows_are_not_evaluated_at_random_points():
    """A model file's own constraint function is user code: the certificate does not call it (it could fail or
    loop off the manifold) and claims nothing."""
    from multibody.model.system import matrix_system

    calls = []

    def phi(q, t):
        calls.append(q)
        return np.array([q[0]])

    model = matrix_system("user", ["x", "y"], mass=[[1.0, 0.0], [0.0, 1.0]], q0=[0.0, 1.0],
                          constraints=[{"name": "wall", "phi": phi, "jacobian": lambda q, t: np.array([[1.0, 0.0]])}])
    built = len(calls)
    assert not full_row_rank_everywhere(model)
    assert len(calls) == built
