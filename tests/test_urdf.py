"""URDF import (issue 14): the tree becomes spatial director bodies and pairs whose dynamics are Pinocchio's,
and a model file adds loop-closing joints on top."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pin = pytest.importorskip("pinocchio")

from multibody.analysis.mobility import analyze  # noqa: E402
from multibody.cli import main  # noqa: E402
from multibody.errors import MultibodyError  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.io.model_file import load_model_file, model_from_data  # noqa: E402
from multibody.io.urdf import urdf_data  # noqa: E402

TWO_LINK = Path(__file__).parent / "data" / "two_link.urdf"


def _joint_accelerations(model, q_dir, axes):
    """Joint accelerations of a serial chain at rest from the director accelerations: with v = 0 the
    angular acceleration of body k is alpha_k = 1/2 sum_i d_i x d_i'' (from d_i'' = alpha x d_i) and
    alpha_k = alpha_(k-1) + qdd_k a_k (a_k the global joint axis), so qdd_k = a_k . (alpha_k - alpha_(k-1))."""
    acc = Lagrange(model).accelerations(0.0, q_dir, np.zeros(model.n))
    vdot = np.asarray(acc.vdot if hasattr(acc, "vdot") else acc[0])
    alphas = []
    for k in range(len(axes)):
        d = q_dir[12 * k + 3: 12 * k + 12].reshape(3, 3)
        dd = vdot[12 * k + 3: 12 * k + 12].reshape(3, 3)
        alphas.append(0.5 * sum(np.cross(d[i], dd[i]) for i in range(3)))
    prev = [np.zeros(3)] + alphas[:-1]
    return np.array([a @ (al - p) for a, al, p in zip(axes, alphas, prev)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_link_dynamics_equal_pinocchio(seed):
    """Released from rest at a random configuration, the imported director model accelerates its joints as
    Pinocchio's articulated-body algorithm does (Featherstone 2008, ch. 7): same masses, centres of mass,
    inertia tensors, joint placements and axes, gravity. Skew axes, off-diagonal inertias and a fixed
    flange merged into link 2 make every import step count."""
    model_p = pin.buildModelFromUrdf(str(TWO_LINK))
    q = np.random.default_rng(seed).uniform(-1.5, 1.5, 2)
    q_pin = np.array([q[0], np.cos(q[1]), np.sin(q[1])])        # the continuous elbow is (cos, sin)
    qdd_pin = pin.aba(model_p, model_p.createData(), q_pin, np.zeros(2), np.zeros(2))
    data = urdf_data(TWO_LINK, q_pin)
    model = model_from_data(data, "two_link", checked=False).model
    axes = [np.array(j["axis"]) for j in data["joints"]]
    qdd = _joint_accelerations(model, model.q0, axes)
    np.testing.assert_allclose(qdd, qdd_pin, rtol=1e-9, atol=1e-9 * np.abs(qdd_pin).max())


def test_import_counts_and_cli(tmp_path):
    """Fixed joints merge (3 URDF links -> 2 bodies); n = 2 x 12, m = 2 x 6 internal + 2 x 5 revolute."""
    out = tmp_path / "two_link.toml"
    res = CliRunner().invoke(main, ["import-urdf", str(TWO_LINK), "-o", str(out)])
    assert res.exit_code == 0, res.output
    model = load_model_file(out).model
    assert (model.n, model.m) == (24, 22)
    res = CliRunner().invoke(main, ["analyze", str(TWO_LINK), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["dof"] == 2


def test_loop_closure_on_a_urdf_tree(tmp_path):
    """A model file adds a spherical pair between the ground and link 2 on top of the URDF tree: 3 new rows
    on a 2-DOF chain can remove at most 2 DOF, so (hand count) dof 0 and one redundant row."""
    (tmp_path / "robot.urdf").write_text(TWO_LINK.read_text())
    path = tmp_path / "closed.toml"
    path.write_text('format = "multibody-model/1"\nname = "closed"\nkind = "spatial"\nurdf = "robot.urdf"\n\n'
                    '[[joints]]\nname = "closure"\ntype = "spherical"\nbodies = ["ground", "link2"]\n'
                    'point = [0.9, 0.3, 1.1]\n')
    res = analyze(load_model_file(path).model)
    assert (res.m, res.rank, res.dof, res.redundancy) == (25, 24, 0, 1)
    path.write_text(path.read_text().replace('"link2"', '"link9"'))
    with pytest.raises(MultibodyError, match=r"joints\[2\]\.bodies\[1\].*unknown body 'link9'"):
        load_model_file(path)


def test_example_robot_with_closure(tmp_path):
    """The UR5 of example-robot-data with its wrist link held on a ground axis by a revolute pair: 6 DOF
    minus 5 independent rows (hand count at a generic configuration) = 1 DOF, no redundancy; it runs."""
    from multibody.models.locking import have_robot_extra, robot_urdf

    if not have_robot_extra():
        pytest.skip("needs example-robot-data")
    path = tmp_path / "ur5_closed.toml"
    path.write_text(f'format = "multibody-model/1"\nname = "ur5-closed"\nkind = "spatial"\nurdf = "{robot_urdf()}"\n'
                    'urdf_joints = { shoulder_lift_joint = -1.0, elbow_joint = 1.2, wrist_1_joint = -0.8, '
                    'wrist_2_joint = 1.3 }\n[simulation]\nt_end = 0.02\n\n[[joints]]\nname = "closure"\ntype = "revolute"\n'
                    'bodies = ["ground", "wrist_3_link"]\npoint = [0.5, 0.2, 0.4]\naxis = [0, 0, 1]\n')
    res = CliRunner().invoke(main, ["analyze", str(path), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["dof"], out["redundancy"]) == (1, 0)
    res = CliRunner().invoke(main, ["run", str(path), "--json", "--out", str(tmp_path / "r.h5")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["constraint_violation_max"] < 1e-8


def test_bad_urdf(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'></robot>")
    res = CliRunner().invoke(main, ["analyze", str(bad)])
    assert res.exit_code == 2 and "URDF file" in res.output and "Traceback" not in res.output
