"""Model files (issue 14): every exportable built-in model loads back to the same equations; malformed files
give one clean MultibodyError naming the place; nothing in a file is executed."""
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from multibody.assembly import Workspace
from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.io.export import NotExpressible, export_builtin
from multibody.io.model_file import load_model_file, model_from_data
from multibody.io.toml_writer import dumps
from multibody.io.validate import check_data, schema
from multibody.models import MODELS

EXPORTABLE = ("slider-crank", "four-bar", "double-four-bar", "n-four-bar", "double-four-bar-modified", "triple-four-bar-modified",
              "four-bar-2x2-modified", "physical-pendulum", "door-two-hinges", "knife-edge-sled", "gyro-top",
              "cylindrical-pair", "planar-pair", "six-body-linkage", "spatial-slider-crank", "rssr-spring")
NOT_EXPRESSIBLE = ("pendulum", "pendulum-redundant", "four-bar-relative", "three-r-pendulum-locking", "mobile-robot",
                   "three-r-pendulum-locking-vertical",
                   "gimbal-lock")   # gimbal-lock: a spatial pair lock event


def _write(tmp_path, name, data):
    path = tmp_path / f"{name}.toml"
    path.write_text(dumps(data))
    return path


def test_exportable_list_is_complete():
    """Every built-in model is either exportable or listed (with a reason) as not expressible."""
    assert set(EXPORTABLE) | set(NOT_EXPRESSIBLE) | {"robot-emergency-stop"} == set(MODELS)


@pytest.mark.parametrize("name", EXPORTABLE)
def test_round_trip_same_equations(name, tmp_path):
    """Loading the exported file gives the builder's equations: M, f, Phi, A = Phi_q, Phi_t, gamma and the
    Pfaffian rows equal at random states (the same builder calls with the same numbers, so equal up to
    round-off; the spatial rates pass through omega = 1/2 sum d_i x d_i')."""
    original = MODELS[name].factory()
    loaded = load_model_file(_write(tmp_path, name, export_builtin(name)))
    model = loaded.model
    assert loaded.t_end == MODELS[name].t_end
    assert model.coordinate_names == original.coordinate_names
    assert model.velocity_labels == original.velocity_labels
    assert model.hold == original.hold and model.velocity_given == original.velocity_given
    scale = 1 + np.abs(original.v0).max()
    np.testing.assert_allclose(model.q0, original.q0, rtol=0, atol=1e-14 * (1 + np.abs(original.q0).max()))
    np.testing.assert_allclose(model.v0, original.v0, rtol=0, atol=1e-13 * scale)
    rng = np.random.default_rng(14)
    ws0, ws1 = Workspace(original), Workspace(model)
    for _ in range(3):
        t = rng.uniform(0, 1)
        q = original.q0 + 0.1 * rng.standard_normal(original.n)
        v = rng.standard_normal(original.n)
        a, b = ws0.terms(t, q, v), ws1.terms(t, q, v)
        for key in ("M", "f", "Phi", "A", "Phi_t", "gamma"):
            x, y = np.asarray(getattr(a, key)), np.asarray(getattr(b, key))
            np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12 * (1 + np.abs(x).max(initial=0)), err_msg=key)
        for x, y in zip(ws0.velocity_constraints(t, q, v), ws1.velocity_constraints(t, q, v)):
            np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12 * (1 + np.abs(x).max(initial=0)))


@pytest.mark.parametrize("name", NOT_EXPRESSIBLE)
def test_not_expressible_says_why(name, tmp_path):
    res = CliRunner().invoke(main, ["export", name, "-o", str(tmp_path / "x.toml")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "cannot express" in res.output or "knows constant-rate" in res.output
    assert not (tmp_path / "x.toml").exists()


def test_cli_export_then_run_matches_builtin(tmp_path):
    """`run FILE` after `export` integrates the same equations: the same trajectory as `run NAME`."""
    path = tmp_path / "sc.toml"
    assert CliRunner().invoke(main, ["export", "slider-crank", "-o", str(path)]).exit_code == 0
    runs = []
    for spec in ("slider-crank", str(path)):
        res = CliRunner().invoke(main, ["run", spec, "--t-end", "0.2", "--json", "--out", str(tmp_path / "r.h5")])
        assert res.exit_code == 0, res.output
        runs.append(json.loads(res.stdout))
    np.testing.assert_allclose(runs[1]["final_q"], runs[0]["final_q"], rtol=0, atol=1e-12)
    res = CliRunner().invoke(main, ["analyze", str(path), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["dof"] == 0    # driven: no free motion


def test_simulation_table_suggests_run_options(tmp_path):
    data = export_builtin("four-bar")
    data["simulation"].update(integrator="rk4", step=0.01, t_end=0.05)
    res = CliRunner().invoke(main, ["run", str(_write(tmp_path, "fb", data)), "--json", "--out", str(tmp_path / "r.h5")])
    summary = json.loads(res.stdout)
    assert summary["integrator"] == "rk4" and summary["t_end"] == 0.05 and summary["steps"] == 5


def test_lock_events_from_file(tmp_path):
    """A lock event of the file reaches the run (paper 002): the locked coordinate keeps its value."""
    data = export_builtin("double-four-bar")
    data["events"] = [{"type": "lock", "coordinates": ["bar1.theta"], "at": 0.1}]
    res = CliRunner().invoke(main, ["run", str(_write(tmp_path, "dfb", data)), "--t-end", "0.2", "--json",
                                    "--out", str(tmp_path / "r.h5")])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["events"]) == 1


# ----------------------------------------------------------------------------- malformed files
NAN_MARK = 12345.678
CASES = [
    ("unknown body", lambda d: d["joints"][1]["bodies"].__setitem__(1, "rodd"),
     "at joints[1].bodies[1] (line", "unknown body 'rodd'"),
    ("missing mass", lambda d: d["bodies"][2].pop("mass"), "at bodies[2]", "missing key 'mass'"),
    ("wrong type", lambda d: d["bodies"][0].__setitem__("mass", "heavy"), "at bodies[0].mass (line",
     "expected number"),
    ("nan", lambda d: d["bodies"][0].__setitem__("length", NAN_MARK), "at bodies[0].length (line",
     "not a finite number"),
    ("typo", lambda d: d["joints"][0].__setitem__("att", [0, 0]), "at joints[0].att (line", "unknown key 'att'"),
    ("driver", lambda d: d["drivers"][0].__setitem__("joint", "nope"), "at drivers[0].joint",
     "unknown revolute or prismatic joint 'nope'"),
    ("motion", lambda d: d["drivers"][0]["motion"].__setitem__("type", "spline"), "at drivers[0].motion.type",
     "is not one of"),
]


@pytest.mark.parametrize("case, edit, where, what", CASES, ids=[c[0] for c in CASES])
def test_malformed_file_names_place(case, edit, where, what, tmp_path):
    data = export_builtin("slider-crank")
    edit(data)
    path = tmp_path / "bad.toml"
    path.write_text(dumps(data).replace(repr(NAN_MARK), "nan"))    # TOML has nan; the writer refuses it
    res = CliRunner().invoke(main, ["run", str(path), "--out", str(tmp_path / "r.h5")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"model file '{path}', {where}" in res.output and what in res.output, res.output
    assert not (tmp_path / "r.h5").exists()


def test_line_numbers_point_at_the_key(tmp_path):
    data = export_builtin("slider-crank")
    data["bodies"][1]["mass"] = -2.0
    path = _write(tmp_path, "neg", data)
    with pytest.raises(MultibodyError) as info:
        load_model_file(path)
    line = int(str(info.value).split("(line ")[1].split(")")[0])
    assert path.read_text().splitlines()[line - 1] == "mass = -2.0"


def test_toml_syntax_error(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\nbodies = [\n')
    with pytest.raises(MultibodyError, match="is not valid TOML"):
        load_model_file(path)


def test_nothing_is_executed(tmp_path):
    """Strings that look like code stay strings: tomllib builds data only and no name is looked up."""
    marker = tmp_path / "executed"
    data = export_builtin("slider-crank")
    data["name"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    data["drivers"][0]["motion"] = {"type": f"__import__('os').system('touch {marker}')"}
    with pytest.raises(MultibodyError):
        load_model_file(_write(tmp_path, "code", data))
    data["drivers"][0]["motion"] = {"type": "constant-rate", "start": 1.0, "rate": 2.0}
    assert load_model_file(_write(tmp_path, "code", data)).model.name.startswith("__import__")
    assert not marker.exists()


# ----------------------------------------------------------------------------- fuzzing
BASES = {name: export_builtin(name) for name in ("slider-crank", "gyro-top", "knife-edge-sled")}
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=5), st.lists(st.floats(-2, 2), max_size=4), st.just("ground"), st.just("crank"),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _paths(x, prefix=()):
    yield prefix
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for k, v in items:
        yield from _paths(v, prefix + (k,))


@st.composite
def mutated(draw):
    data = json.loads(json.dumps(BASES[draw(st.sampled_from(sorted(BASES)))]))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        path = draw(st.sampled_from(paths))
        parent = data
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=6))] = draw(JUNK)
        else:
            parent[path[-1]] = draw(JUNK)
    return data


def _load_or_clean_error(data):
    try:
        model_from_data(data, "fuzz.toml", checked=False)
    except MultibodyError as exc:
        assert "model file 'fuzz.toml'" in str(exc)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_fuzzed_files_fail_cleanly(data):
    """Mutated model files (keys deleted or added, values replaced by wrong types, NaN, infinities, unknown
    references): each loads or raises a MultibodyError naming the model file; nothing else."""
    _load_or_clean_error(data)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_fuzzed_files_fail_cleanly_1000(data):
    """The issue's 1,000 malformed files (about 5 s)."""
    _load_or_clean_error(data)


def test_schema_is_package_data_and_valid():
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema())
    assert "SI" in schema()["description"]
    for name in EXPORTABLE:
        text = dumps(export_builtin(name))
        check_data(tomllib.loads(text), name, text)


def test_sweep_resolves_model_files(tmp_path):
    """A model file is a sweep model (its factory is picklable data: the path); scenarios vary its initial
    rates, and each row equals the run of the built-in model with the same rates."""
    import pickle

    from multibody.sweep.scenarios import resolve_model, run_serial

    path = _write(tmp_path, "dfb", export_builtin("double-four-bar"))
    spec, builtin = resolve_model(str(path)), resolve_model("double-four-bar")
    assert pickle.loads(pickle.dumps(spec)).factory().n == 15 and spec.t_end == 10.0
    scenarios = [{"v0:bar1.theta": -1.0, "t_end": 0.1}, {"v0:bar1.theta": -2.0, "t_end": 0.1}]
    rows, ref = run_serial(spec, scenarios).rows, run_serial(builtin, scenarios).rows
    for row, r in zip(rows, ref):
        assert row["status"] == "ok"
        assert row["q:bar3.theta"] == pytest.approx(r["q:bar3.theta"], abs=1e-12)
    with pytest.raises(MultibodyError, match="has no parameter 'omega0'"):
        from multibody.sweep.scenarios import check_scenarios
        check_scenarios(spec, [{"omega0": 1.0}])


EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_validate_and_run(path, tmp_path):
    if "urdf" in path.read_text():
        pytest.importorskip("pinocchio")
    res = CliRunner().invoke(main, ["run", str(path), "--t-end", "0.05", "--json", "--out", str(tmp_path / "r.h5")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["constraint_violation_max"] < 1e-8


def test_readme_model_files_are_true(tmp_path):
    """The models guide's TOML examples load as written (the slider-crank: 1 driven DOF -> dof 0)."""
    import re
    import shutil

    text = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "models.md").read_text()
    planar, spatial = re.findall(r"```toml\n(.*?)```", text, re.S)[:2]
    (tmp_path / "sc.toml").write_text(planar)
    model = load_model_file(tmp_path / "sc.toml").model
    assert (model.n, model.m) == (9, 9)
    pytest.importorskip("pinocchio")
    shutil.copy(Path(__file__).parent / "data" / "two_link.urdf", tmp_path / "two_link.urdf")
    (tmp_path / "closed.toml").write_text(spatial)
    assert load_model_file(tmp_path / "closed.toml").model.m == 25
