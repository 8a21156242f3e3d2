"""Redundancy and solvability of reactions (paper 003 Sects 3.2-3.3, 4.2-4.4).

Expected verdicts are hand analyses of the left null space of C (derived in the docstrings and in
models/nonholonomic_models.py) and the paper's published ranks; reaction values are statics."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from multibody.assembly import Workspace
from multibody.experiments.reactions import NUMERIC_UNIQUE, choose_variants, run_experiment
from multibody.analysis.solvability import reaction_uniqueness, solvability, solvability_at
from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.kinematics import consistent_state
from multibody.model.system import matrix_system
from multibody.models import MODELS
from multibody.models.nonholonomic_models import door_two_hinges, mobile_robot
from multibody.analysis.reactions import reaction_map
from multibody.simulation import RunOptions, simulate

G = 9.81


def _analysis(model):
    q, _ = consistent_state(model)
    return q, solvability_at(model, q)


@pytest.mark.parametrize("name", list(MODELS))
def test_qr_and_rank_methods_agree_on_every_model(name):
    """Eq. 27 (QR) and the direct-sum rank comparison (eqs 17-20) give the same verdict per pair."""
    model = MODELS[name].factory()
    _, sol = _analysis(model)
    assert sol.redundancy == model.m + model.h - sol.rank
    for p in sol.pairs:
        assert p.unique == p.unique_by_rank, p.name
        assert not (p.multipliers_unique and not p.unique), p.name


def test_door_two_hinges_hand_analysis():
    """Door of mass m, width w, hinges at heights y1 < y2 on x = 0: rows hinge1.x/y, hinge2.x/y on
    3 coordinates, rank 3, p = 1. The y rows of both hinges are identical ([0, 1, -w/2] at theta = 0),
    so the left null vector is hinge1.y - hinge2.y: neither pair is unique, nor are its multipliers;
    statics: F1x = -F2x = m g w / (2 (y2 - y1)) unique, F1y + F2y = m g only."""
    w, mass, y1, y2 = 0.8, 30.0, 0.3, 1.7
    model = door_two_hinges(width=w, mass=mass, hinges=(y1, y2))
    q, sol = _analysis(model)
    assert (model.n, model.m, sol.rank, sol.redundancy) == (3, 4, 3, 1)
    for name in ("hinge1", "hinge2"):
        assert not sol.pair(name).unique and not sol.pair(name).multipliers_unique
    null = sol.null_left[:, 0] / sol.null_left[1, 0]
    np.testing.assert_allclose(null, [0, 1, 0, -1], atol=1e-12)
    rmap = reaction_map(model)
    Cq = Workspace(model).velocity_constraints(0.0, q, np.zeros(3))[1]
    flags = dict(zip(rmap.labels, reaction_uniqueness(model, q, Cq, sol, rmap)))
    for h in ("hinge1", "hinge2"):
        assert flags[f"{h}.on_door.Fx"] and flags[f"{h}.on_ground.Fx"]
        assert not flags[f"{h}.on_door.Fy"] and not flags[f"{h}.on_door.Mz"]
    Fx = mass * G * w / (2 * (y2 - y1))
    for elim, F1y in (((), mass * G / 2), (("hinge1.y",), 0.0), (("hinge2.y",), mass * G)):
        res = simulate(model, t_end=0.1, formulation_options={"eliminate": elim})
        assert res.column("reactions", "hinge1.on_door.Fx")[-1] == pytest.approx(Fx, rel=1e-9)
        assert res.column("reactions", "hinge2.on_door.Fx")[-1] == pytest.approx(-Fx, rel=1e-9)
        assert res.column("reactions", "hinge1.on_door.Fy")[-1] == pytest.approx(F1y, abs=1e-9 * mass * G)
        total = res.column("reactions", "hinge1.on_door.Fy") + res.column("reactions", "hinge2.on_door.Fy")
        np.testing.assert_allclose(total, mass * G, rtol=1e-9)
    assert res.summary["non_unique_reactions"] == ["hinge1", "hinge2"]
    flag = res.series["reactions_unique"]
    assert flag.data[-1, flag.labels.index("hinge1.on_door.Fx")] == 1.0
    assert flag.data[-1, flag.labels.index("hinge1.on_door.Fy")] == 0.0


def test_parallelogram_with_third_crank_hand_analysis():
    """Modified double four-bar (three parallel cranks, one coupler): p = 1 (paper 000). The only
    self-stress is axial force in the three two-force cranks balancing on the coupler (t1 + t3 + t5
    = 0, moments about the coupler centre t1 - t5 = 0: t = (1, -2, 1)), so every pin is non-unique,
    but components perpendicular to the cranks are unique: on a crank (body x along it) Fy_body and
    Mz (the axial force passes through its centre) unique, Fx_body not; on the horizontal coupler
    Fx unique, Fy not; the middle pin A3 sits at the coupler centre, so its Mz there is unique."""
    model = MODELS["double-four-bar-modified"].factory()
    q, sol = _analysis(model)
    assert sol.redundancy == 1
    assert sol.non_unique == ["O1", "A1", "O3", "A3", "O5", "A5"]
    rmap = reaction_map(model)
    Cq = Workspace(model).velocity_constraints(0.0, q, np.zeros(model.n))[1]
    flags = dict(zip(rmap.labels, reaction_uniqueness(model, q, Cq, sol, rmap)))
    for k, crank in ((1, "bar1"), (3, "bar3"), (5, "bar5")):
        for pin in (f"O{k}", f"A{k}"):
            assert flags[f"{pin}.on_{crank}.Fy_body"] and flags[f"{pin}.on_{crank}.Mz"]
            assert not flags[f"{pin}.on_{crank}.Fx_body"]
        assert flags[f"A{k}.on_bar2.Fx"] and not flags[f"A{k}.on_bar2.Fy"]
    assert flags["A3.on_bar2.Mz"] and not flags["A1.on_bar2.Mz"]
    # self-stress pattern: crank tensions proportional to (1, -2, 1)
    lab = model.velocity_labels
    N = sol.null_left[:, 0]
    t = np.array([N[lab.index(f"A{k}.y")] for k in (1, 3, 5)])
    np.testing.assert_allclose(t / t[0], [1, -2, 1], atol=1e-9)


def test_duplicated_row_in_one_pair_multipliers_not_unique_reaction_unique():
    """Point mass (x, y) with a pair 'pin' of two identical rows x = 0 and a pair 'rail' y = 0:
    p = 1, the null vector (1, -1, 0) lives inside 'pin': f_pin unique (X and Y span independent
    directions, a direct sum) but lambda_pin not (C_pin rank 1 < 2); 'rail' fully unique."""
    model = matrix_system("dup", ("x", "y"), mass=np.eye(2), q0=[0.0, 0.0],
                          constraints=[{"name": "pin", "phi": lambda q, t: np.array([q[0], q[0]])},
                                       {"name": "rail", "phi": lambda q, t: np.array([q[1]])}])
    sol = solvability(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), model.velocity_labels)
    assert sol.redundancy == 1
    assert sol.pair("pin").unique and not sol.pair("pin").multipliers_unique
    assert sol.pair("rail").unique and sol.pair("rail").multipliers_unique


def test_mobile_robot_ranks_and_verdicts():
    """Paper 003 eqs 35-36: n = 21, m = 17, h = 5, rank Phi_q = 17, rank Psi = 4, rank C = 20, p = 2;
    hand analysis (module docstring of nonholonomic_models): B, C, W1..W4 non-unique, the rest unique
    (the paper's verdict, Sect. 4.2), also at a steered configuration."""
    model = mobile_robot()
    q, sol = _analysis(model)
    C = Workspace(model).velocity_constraints(0.0, q, np.zeros(21))[1]
    assert (model.n, model.m, model.h) == (21, 17, 5)
    assert np.linalg.matrix_rank(C[:17]) == 17 and np.linalg.matrix_rank(C[17:]) == 4
    assert (sol.rank, sol.redundancy) == (20, 2)
    expected = {"B", "C", "W1", "W2", "W3", "W4"}
    assert set(sol.non_unique) == expected
    assert all(p.multipliers_unique == (p.name not in expected) for p in sol.pairs)
    res = simulate(model, t_end=1.5, options=RunOptions(rtol=1e-8, atol=1e-10))
    q1 = res.series["q"].data[-1]
    sol1 = solvability_at(model, q1, res.t[-1])
    assert sol1.redundancy == 2 and set(sol1.non_unique) == expected
    assert set(res.summary["non_unique_reactions"]) == expected and res.summary["redundancy_max"] == 2


def test_elimination_experiment_confirms_every_verdict():
    """Paper 003 Sect. 4.4: with different eliminated rows the motion is the same and exactly the
    pairs the analysis calls unique have equal reactions."""
    model = mobile_robot()
    variants = {"minimum-norm": (), "C.y+W4": ("C.y", "W4.normal"), "W1+W4": ("W1.normal", "W4.normal"),
                "W2+W4": ("W2.normal", "W4.normal")}          # the paper's three variants
    ex = run_experiment(model, variants, t_end=2.0, step=1e-2)
    assert ex.motion_spread < 1e-6
    verdicts = ex.verdicts()
    assert len(verdicts) == 14 and all(v["agree"] for v in verdicts)
    spreads = {v["name"]: v["spread"] for v in verdicts}
    assert min(spreads[p] for p in ("B", "C", "W1", "W2", "W3", "W4")) > 1e3 * NUMERIC_UNIQUE


def test_automatic_variants_keep_rank_and_bad_eliminations_are_rejected():
    model = door_two_hinges()
    variants = choose_variants(model)
    assert set(variants.values()) == {(), ("hinge1.y",), ("hinge2.y",)}
    with pytest.raises(MultibodyError, match="not redundant"):
        simulate(model, t_end=0.1, formulation_options={"eliminate": ("hinge1.x",)})
    with pytest.raises(MultibodyError, match="no such"):
        simulate(model, t_end=0.1, formulation_options={"eliminate": ("hinge3.y",)})
    with pytest.raises(MultibodyError, match="no redundant"):
        choose_variants(MODELS["four-bar"].factory())


def test_analyze_json_and_table():
    runner = CliRunner()
    out = runner.invoke(main, ["analyze", "mobile-robot", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["h"], data["redundancy"], data["rank"]) == (5, 2, 20)
    entry = {e["name"]: e for e in data["reactions"]}
    assert entry["W3"]["rows"] == ["W3.normal"] and entry["A"]["rows"] == ["A.x", "A.y"]
    assert not entry["B"]["unique"] and entry["H-driver"]["unique"] and entry["D"]["multipliers_unique"]
    text = runner.invoke(main, ["analyze", "door-two-hinges"]).output
    assert "hinge1" in text and "not unique" in text


def test_reactions_experiment_command(tmp_path):
    out = CliRunner().invoke(main, ["reactions-experiment", "door-two-hinges", "--t-end", "0.05",
                                    "--plot", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["redundancy"] == 1 and all(p["agree"] for p in data["pairs"])
    assert (tmp_path / "door-two-hinges-reactions.png").stat().st_size > 0
