"""Command line: the main job, JSON output, and bad input (message, exit code 2, no traceback,
nothing overwritten)."""
import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from multibody.cli import main


def run(args, cwd=None):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_models_lists_builtins():
    out = run(["models"]).output
    for name in ("pendulum", "pendulum-redundant", "slider-crank", "four-bar", "double-four-bar"):
        assert name in out


def test_run_json_summary(tmp_path):
    out = tmp_path / "p.h5"
    res = run(["run", "four-bar", "--t-end", "0.5", "--json", "--out", str(out), "--csv", str(tmp_path / "p.csv"),
               "--plot", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    for key in ("model", "formulation", "t_end", "steps", "rhs_evaluations", "wall_time_s", "energy_drift_rel",
                "constraint_violation_max", "coordinate_names", "final_q"):
        assert key in s
    assert out.exists() and (tmp_path / "p.csv").exists()
    assert len(list((tmp_path / "fig").glob("*.png"))) == 4


def test_run_human_summary_and_rk4(tmp_path):
    res = run(["run", "four-bar", "--t-end", "0.1", "--integrator", "rk4", "--step", "1e-3",
               "--out", str(tmp_path / "f.h5")])
    assert res.exit_code == 0, res.output
    assert "energy change (relative)" in res.output and "100 steps" in res.output   # the crank is driven


def write(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return str(p)


BAD_MODELS = {
    "no_build.py": ("x = 1\n", "does not define a function build()"),
    "neg_mass.py": ("""
        from multibody import ModelBuilder
        def build():
            mb = ModelBuilder("bad")
            mb.add_body("arm", mass=-1.0, inertia=0.1)
            return mb.build()
        """, "mass of body 'arm'"),
    "unknown_body.py": ("""
        from multibody import ModelBuilder
        def build():
            mb = ModelBuilder("bad")
            mb.add_body("arm", mass=1.0, inertia=0.1)
            mb.revolute("pin", "ground", "arn", at=(0, 0))
            return mb.build()
        """, "unknown body 'arn'"),
    "nan.py": ("""
        from multibody import ModelBuilder
        def build():
            mb = ModelBuilder("bad")
            mb.add_body("arm", mass=1.0, inertia=0.1, position=(float("nan"), 0.0))
            return mb.build()
        """, "position of body 'arm'"),
    "inconsistent.py": ("""
        from multibody import ModelBuilder
        def build():
            mb = ModelBuilder("bad")
            mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0), velocity=(1.0, 0.0))
            mb.distance("rod", "ground", "bob", at_a=(0, 0), on_b=(0, 0))
            mb.set_velocity("bob.x", 1.0)
            return mb.build()
        """, "inconsistent with the constraints"),
    "unassemblable.py": ("""
        from multibody import ModelBuilder
        def build():
            mb = ModelBuilder("bad")
            mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
            mb.distance("rod1", "ground", "bob", at_a=(0, 0), on_b=(0, 0), length=1.0)
            mb.distance("rod2", "ground", "bob", at_a=(5, 0), on_b=(0, 0), length=1.0)
            return mb.build()
        """, "cannot be assembled"),
    "raises.py": ("def build():\n    raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
}


@pytest.mark.parametrize("name", list(BAD_MODELS))
def test_bad_model_files(tmp_path, name):
    body, message = BAD_MODELS[name]
    out = tmp_path / "good.h5"
    out.write_bytes(b"previous result")
    res = CliRunner().invoke(main, ["run", write(tmp_path, name, body), "--out", str(out)])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output
    assert out.read_bytes() == b"previous result"


@pytest.mark.parametrize("args, message", [
    (["run", "no-such-model"], "unknown model 'no-such-model'"),
    (["run", "pendulum", "--integrator", "euler"], "'euler' is not one of 'rk4', 'dopri5'"),
    (["run", "pendulum", "--integrator", "rk4"], "give a fixed step"),
    (["run", "pendulum", "--formulation", "magic"], "'magic' is not one of 'lagrange'"),
    (["run", "pendulum", "--rtol", "-1"], "rtol must be a positive number"),
    (["run", "pendulum", "--t-end", "-1"], "t_end must be"),
])
def test_bad_options(args, message, tmp_path):
    res = CliRunner().invoke(main, args + ["--out", str(tmp_path / "x.h5")])
    assert res.exit_code == 2
    assert message in res.output
    assert not (tmp_path / "x.h5").exists()


def test_entry_point_no_traceback(tmp_path):
    """The installed console script: one-paragraph error on stderr, exit code 2."""
    proc = subprocess.run([sys.executable, "-m", "multibody", "run", "nope"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown model 'nope'")
    assert "Traceback" not in proc.stderr
