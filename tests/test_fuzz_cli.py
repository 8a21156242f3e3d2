"""Fuzzing the command line (issue 17): invalid option values, output paths and model files. Every
case ends with exit 0 (valid input), 2 (user error) or 1 (run failure), no traceback, no "internal
error", within a time limit, with a message naming the culprit; an earlier result is never changed
by a failed run. Bounded: a few dozen cases per property (benchmarks/fuzz.py runs 10,000)."""
from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuzzing import check_contract, count, fuzz_settings, hostile_paths, invoke, model_file, path_names, \
    run_command, scratch, toml_mutation

FUZZ = fuzz_settings()


@FUZZ
@given(run_command())
def test_run_options(case):
    args, bad = case
    with scratch() as d:
        res = invoke(args + ["--out", str(d / "r.h5")])
    if bad is None:
        assert count("run options", check_contract(res)) == "ok", (args, res.output)
        assert json.loads(res.output.splitlines()[-1])["result_file"].endswith("r.h5")
    else:
        assert count("run options", check_contract(res, culprits=[bad.lstrip("-")])) != "ok", (args, res.output)


@FUZZ
@given(st.sampled_from(["--out", "--csv", "--plot"]),
       st.sampled_from(["under a file", "in /proc", "in /sys", "device", "device by link", "directory",
                        "long name", "NUL", "empty"]))
def test_hostile_output_paths_keep_the_earlier_result(option, kind):
    with scratch() as d:
        earlier = d / "earlier.h5"
        earlier.write_bytes(b"an earlier result")
        path = hostile_paths(d, ".csv" if option == "--csv" else ".h5")[kind]
        if option == "--plot" and kind == "directory":
            path = str(d / "afile")         # a file where a directory is wanted
        extra = [] if option == "--out" else ["--out", str(earlier)]
        res = invoke(["run", "pendulum", "--t-end", "0.02", *extra, option, path])
        outcome = count("hostile output paths", check_contract(res, culprits=[option]))
        assert outcome == "user error", res.output
        assert earlier.read_bytes() == b"an earlier result"
        assert not [p for p in d.rglob("*") if ".mbtmp-" in p.name]


@FUZZ
@given(path_names, st.sampled_from([".h5", ".hdf5", ".csv", ".txt", ""]))
def test_random_output_names(name, suffix):
    """Any name: written where asked (a valid one) or refused naming --out; never a traceback."""
    with scratch() as d:
        target = d / f"{name}{suffix}"
        res = invoke(["run", "pendulum", "--t-end", "0.02", "--out", str(target)], cwd=d)
        outcome = count("random output names", check_contract(res, culprits=["--out"]))
        if outcome == "ok":
            assert target.is_file() and suffix in (".h5", ".hdf5")


@fuzz_settings(0.75)
@given(model_file())
def test_python_model_files(case):
    source, valid = case
    with scratch() as d:
        path = d / "model.py"
        path.write_text(source)
        res = invoke(["run", str(path), "--t-end", "0.02", "--out", str(d / "r.h5")])
    outcome = count("python model files", check_contract(res, culprits=[str(path), "body 'bob'"]))
    assert (outcome == "ok") == valid, (source, res.output)


@fuzz_settings(0.75)
@given(toml_mutation())
def test_data_model_files(case):
    text, example = case
    with scratch() as d:
        for f in example.parent.iterdir():     # the URDF a model file names
            (d / f.name).write_bytes(f.read_bytes())
        path = d / example.name
        path.write_text(text)
        res = invoke(["run", str(path), "--t-end", "0.02", "--out", str(d / "r.h5")])
    name = next(line[7:].strip('"') for line in text.splitlines() if line.startswith("name = "))
    count("data model files", check_contract(res, culprits=[example.name, f"model '{name}'", "urdf ="]))


OTHER_OUTPUTS = {   # the output option of the other commands, with a command line that is otherwise fine
    "criterion --plot": (["criterion", "pendulum", "--plot"], "--plot", ".h5"),
    "modes --plot": (["modes", "pendulum", "--plot"], "--plot", ".h5"),
    "kinematics --out": (["kinematics", "slider-crank", "--t-end", "0.01", "--out"], "--out", ".h5"),
    "export --out": (["export", "pendulum", "--out"], "--out", ".toml"),
    "sweep --out": (["sweep", "pendulum", "--param", "mass=1,2", "--out"], "--out", ".csv"),
}


@FUZZ
@given(st.sampled_from(sorted(OTHER_OUTPUTS)),
       st.sampled_from(["under a file", "in /proc", "in /sys", "device", "device by link", "directory",
                        "long name", "NUL", "empty"]))
def test_hostile_outputs_of_other_commands(command, kind):
    """Refused before anything runs (a sweep never starts its cluster), naming the option."""
    args, option, suffix = OTHER_OUTPUTS[command]
    with scratch() as d:
        paths = hostile_paths(d, suffix)
        path = str(d / "afile") if option == "--plot" and kind == "directory" else paths[kind]
        res = invoke([*args, path])
        assert count("other commands' outputs", check_contract(res, culprits=[option])) == "user error", res.output
        assert not [p for p in d.rglob("*") if ".mbtmp-" in p.name]


def _event(kind, t, coords, value) -> str:
    return f"{kind}@{t}:" + ",".join(c + (f"={value}" if kind == "impulse" else "") for c in coords)


event_specs = st.builds(
    _event,
    st.sampled_from(["lock", "release", "impulse", "lok", ""]),
    st.sampled_from(["0.01", "0", "-1", "nan", "inf", "1e308", "abc", "", "0.02"]),
    st.lists(st.sampled_from(["x", "z", "nope", "", "x "]), max_size=3),
    st.sampled_from(["1", "nan", "abc", "", "1e308"]))


@FUZZ
@given(st.lists(event_specs, min_size=1, max_size=2), st.sampled_from(["pendulum", "three-r-pendulum-locking"]),
       st.booleans())
def test_event_options(specs, model, stream):
    """--event KIND@T:WHAT with bad kinds, times, coordinates and values, in memory or streamed: run or one
    message naming it."""
    args = ["run", model, "--t-end", "0.02", *(["--stream"] if stream else [])]
    for spec in specs:
        args += ["--event", spec]
    with scratch() as d:
        res = invoke(args + ["--out", str(d / "r.h5")])
    culprits = ["event", "impulse", "lock", "release", "coordinate", *[s.split("@")[0] for s in specs]]
    count("event options", check_contract(res, culprits=[c for c in culprits if c]))
