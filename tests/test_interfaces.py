"""Public interface details of issue 13 item 10-11: exports, version, the spatial builder's ground,
`models` with end times and JSON, choices of --integrator/--formulation."""
import json

import numpy as np
from click.testing import CliRunner

import multibody
from multibody.cli import main
from multibody.models import MODELS


def test_exports_and_version():
    for name in ("SpatialModelBuilder", "lock_at", "simulate", "Result"):
        assert hasattr(multibody, name) and name in multibody.__all__
    assert multibody.__version__ and multibody.__version__[0].isdigit()
    from pathlib import Path
    assert (Path(multibody.__file__).parent / "py.typed").exists()


def test_spatial_builder_ground_by_name():
    """'ground' and None name the same fixed frame: the same constraint rows (paper 004 Sect. 4.5)."""
    models = []
    for ground in (None, "ground"):
        b = multibody.SpatialModelBuilder("pend")
        b.add_body("bob", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(1.0, 0.0, 0.0))
        b.spherical("S", ground, "bob", point=(0.0, 0.0, 0.0))
        models.append(b.build())
    assert models[0].constraint_labels == models[1].constraint_labels
    np.testing.assert_array_equal(models[0].q0, models[1].q0)
    v = np.zeros(models[0].n)
    A0, A1 = (multibody.Workspace(m).constraints(0.0, m.q0, v)[1] for m in models)
    np.testing.assert_array_equal(A0, A1)


def test_models_json_and_end_times():
    rows = json.loads(CliRunner().invoke(main, ["models", "--json"]).stdout)
    assert {r["name"]: r["t_end"] for r in rows} == {k: e.t_end for k, e in MODELS.items()}
    text = CliRunner().invoke(main, ["models"]).output
    # the full first paragraph, not the first line: the slider-crank's reference continues on line 2
    assert "Mechanical Systems, 1988" in text and "t_end 10 s" in text


def test_choices_listed_in_help():
    out = CliRunner().invoke(main, ["run", "--help"]).output
    assert "[rk4|dopri5|dop853|generalized-alpha|energy-momentum]" in out
    assert "lagrange|nullspace" in out and "constrained|reduced" in out


def test_energy_drift_labelled_for_nonconservative_models():
    """A driven model's energy changes by the drivers' work (slider-crank at constant crank rate), a
    damped one loses energy: their change is not an error; the pendulum's gravity, given as a force with
    its potential V = m g z, is conservative (f = -grad V)."""
    from multibody import RunOptions, matrix_system, simulate
    from multibody.models.linkages import slider_crank
    from multibody.models.pendulums import pendulum

    driven = simulate(slider_crank(), t_end=0.2).summary
    assert driven["energy_conserved"] is False and "driven" in driven["energy_note"]
    assert simulate(pendulum(), t_end=0.2).summary["energy_conserved"] is True
    damped = matrix_system("damped", ["x"], mass=np.eye(1), forces=lambda q, v, t: -q - 0.5 * v,
                           potential=lambda q: 0.5 * q[0] ** 2, q0=[1.0])
    s = simulate(damped, t_end=0.2, options=RunOptions()).summary
    assert s["energy_conserved"] is False and "forced" in s["energy_note"]


def test_energy_balance_of_a_damped_oscillator():
    """x'' + c x' + x = 0 from x = 1 at rest (zeta = c/2): x = e^(-zeta t) (cos wd t + zeta/wd sin wd t),
    v = -e^(-zeta t) sin(wd t) / wd, wd = sqrt(1 - zeta^2); the work of the damper is E(t) - E(0) with
    E = (v^2 + x^2)/2, and the run's balance E - E0 - W is at the integration error."""
    from multibody import RunOptions, matrix_system, simulate

    c, t_end = 0.4, 3.0
    model = matrix_system("damped", ["x"], mass=np.eye(1), forces=lambda q, v, t: -q - c * v,
                          potential=lambda q: 0.5 * q[0] ** 2, q0=[1.0])
    r = simulate(model, t_end=t_end, options=RunOptions(rtol=1e-10, atol=1e-12))
    zeta = c / 2
    wd = np.sqrt(1 - zeta ** 2)
    t = r.t[-1]
    x = np.exp(-zeta * t) * (np.cos(wd * t) + zeta / wd * np.sin(wd * t))
    v = -np.exp(-zeta * t) * np.sin(wd * t) / wd
    assert abs(r["work"][-1, 0] - (0.5 * (x ** 2 + v ** 2) - 0.5)) < 1e-8
    assert r.summary["energy_balance_rel"] < 1e-8 and r.summary["energy_drift_rel"] > 0.3


def test_energy_balance_of_the_driven_slider_crank_converges():
    """The balance is an error measure: it falls with the tolerance (the drivers' work is not conserved)."""
    from multibody import RunOptions, simulate
    from multibody.models.linkages import slider_crank

    loose = simulate(slider_crank(), t_end=1.0, options=RunOptions(rtol=1e-5, atol=1e-7)).summary
    tight = simulate(slider_crank(), t_end=1.0, options=RunOptions(rtol=1e-9, atol=1e-11)).summary
    assert tight["energy_balance_rel"] < 1e-5 < tight["energy_drift_rel"]
    assert tight["energy_balance_rel"] < 1e-2 * loose["energy_balance_rel"]


def test_energy_momentum_takes_the_papers_step(tmp_path):
    """Paper 004 runs the gyro top at dt = 0.01 (Fig. 9): the default --step of energy-momentum."""
    res = CliRunner().invoke(main, ["run", "gyro-top", "--integrator", "energy-momentum", "--formulation",
                                    "reduced", "--t-end", "0.1", "--json", "--out", str(tmp_path / "g.h5")])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["step"] == 0.01 and s["steps"] == 10


def test_flat_disk_on_the_triangle_equality():
    """A thin disk, J = diag(0.2, 0.4, 0.2) (J2 = J1 + J3: Euler tensor eq. 158 of paper 004 with one
    zero), is accepted; torque-free, its spin about the symmetry axis d2 is constant (Euler's equation
    J2 w2' = (J3 - J1) w3 w1 = 0) and so is its kinetic energy 1/2 w^T J w = 1.925 J."""
    from multibody import RunOptions, simulate

    b = multibody.SpatialModelBuilder("disk")
    b.add_body("disk", mass=1.0, inertia=(0.2, 0.4, 0.2), position=(0, 0, 0), omega=(1.0, 3.0, 0.5))
    r = simulate(b.build(), t_end=2.0, options=RunOptions(rtol=1e-9, atol=1e-11))
    q, v = r.q, r.v
    d = [q[:, 3 + 3 * i: 6 + 3 * i] for i in range(3)]
    dd = [v[:, 3 + 3 * i: 6 + 3 * i] for i in range(3)]
    omega = 0.5 * sum(np.cross(d[i], dd[i]) for i in range(3))      # w = 1/2 sum d_i x d_i'
    np.testing.assert_allclose(np.einsum("ki,ki->k", omega, d[1]), 3.0, atol=1e-7)
    np.testing.assert_allclose(r["energy"][:, 0], 0.5 * (0.2 * 1.0 + 0.4 * 9.0 + 0.2 * 0.25), rtol=1e-8)


def test_a_body_with_inertia_on_a_line_is_refused():
    import pytest

    b = multibody.SpatialModelBuilder("rod")
    with pytest.raises(multibody.ModelError, match="at most one zero"):
        b.add_body("rod", mass=1.0, inertia=(0.0, 0.1, 0.1), position=(0, 0, 0))
    with pytest.raises(multibody.ModelError, match="triangle"):
        b.add_body("bad", mass=1.0, inertia=(0.1, 0.1, 0.5), position=(0, 0, 0))


def test_readme_spatial_and_xarray_example(tmp_path, monkeypatch):
    """The results guide's block with to_xarray runs as written; the disk falls (z from 0.5 m) while its total
    energy stays (conservative: gravity and an ideal ball joint)."""
    import re
    from pathlib import Path

    import pytest

    pytest.importorskip("xarray")
    text = (Path(__file__).parents[1] / "docs" / "guide" / "results.md").read_text()
    code = next(c for c in re.findall(r"```python\n(.*?)```", text, re.S) if "to_xarray" in c)
    monkeypatch.chdir(tmp_path)
    env = {}
    exec(compile(code, "results.md", "exec"), env)
    assert float(env["height"][0]) == pytest.approx(0.5) and float(env["height"][-1]) < 0.5
    assert env["result"].summary["energy_conserved"] and env["result"].summary["energy_drift_rel"] < 1e-4
    assert list(env["df"].index[:2]) == [0.0, 0.01]
