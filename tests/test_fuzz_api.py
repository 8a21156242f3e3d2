"""Fuzzing the public API (issue 17): model builders, run options, matrix systems, sweep parameters and
result files with random and invalid values. A call either works or raises one MultibodyError whose
message names the culprit; never another exception. Bounded (benchmarks/fuzz.py runs 10,000 cases)."""
from __future__ import annotations

import math

import h5py
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import count, fuzz_settings, scratch, time_limit
from multibody import ModelBuilder, RunOptions, matrix_system, serial_chain, simulate
from multibody.errors import FileFormatError, MultibodyError
from multibody.models import MODELS
from multibody.results.result import Result, Series
from multibody.sweep.scenarios import check_scenarios, grid, parse_param, resolve_model

#: numbers and not-numbers a user might pass anywhere
junk = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6), st.text(max_size=6),
                 st.none(), st.booleans(), st.sampled_from([1e308, -1e308, 1e-320, 0.0, -0.0, "1", b"1", [], {}]))
vectors = st.one_of(junk, st.lists(st.one_of(st.floats(-10, 10), junk), max_size=4).map(tuple))
#: mostly valid values, now and then junk: so that some models build and run
fair = st.one_of(st.floats(0.1, 10), st.floats(0.1, 10), junk)
pairs = st.one_of(st.tuples(st.floats(-2, 2), st.floats(-2, 2)), st.tuples(st.floats(-2, 2), st.floats(-2, 2)), vectors)
API_ERRORS = MultibodyError


def _expect(name: str, call, culprits=()):
    """Run ``call``; a MultibodyError must name one of ``culprits`` (when given); count the outcome."""
    try:
        with time_limit():
            out = call()
    except API_ERRORS as exc:
        text = str(exc)
        assert text.strip(), "an empty message"
        if culprits:
            assert any(c in text for c in culprits), (culprits, text)
        count(name, "clean error")
        return None
    count(name, "ok")
    return out


def _step(mb: ModelBuilder, op: str, args: dict):
    if op == "body":
        mb.add_body(args["name"], mass=args["a"], inertia=args["b"], position=args["v"], angle=args["c"])
    elif op == "bar":
        mb.add_bar(args["name"], length=args["a"], mass=args["b"], position=args["v"], angle=args["c"])
    elif op == "point":
        mb.add_point_mass(args["name"], mass=args["a"], position=args["v"])
    elif op == "revolute":
        mb.revolute(args["name"], args["x"], args["y"], at=args["v"])
    elif op == "distance":
        mb.distance(args["name"], args["x"], args["y"], at_a=args["v"], on_b=(0, 0))
    elif op == "spring":
        mb.spring_damper(args["name"], args["x"], args["y"], stiffness=args["a"], damping=args["b"])
    elif op == "torque":
        mb.torque(args["x"], lambda t, q, v, c=args["c"]: c)
    elif op == "velocity":
        mb.set_velocity(f"{args['x']}.x", args["a"])


names = st.sampled_from(["arm", "bob", "ground", "", "x y", "arm", "bob"])
operation = st.fixed_dictionaries({"op": st.sampled_from(["body", "bar", "point", "revolute", "distance", "spring",
                                                          "torque", "velocity"]),
                                   "name": names, "x": names, "y": names, "a": fair, "b": fair, "c": fair,
                                   "v": pairs})


@fuzz_settings()
@given(st.one_of(st.none(), st.none(), pairs), st.booleans(), st.lists(operation, max_size=4))
def test_model_builder(gravity, pendulum, ops):
    def build():
        mb = ModelBuilder("fz", gravity=(0.0, -9.81) if gravity is None else gravity)
        if pendulum:      # a valid start, then the random operations
            mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
            mb.distance("rod", "ground", "bob", at_a=(0, 0), on_b=(0, 0))
        for o in ops:
            _step(mb, o["op"], o)
        return mb.build()
    model = _expect("model builder", build)
    if model is not None:
        _expect("model builder run", lambda: simulate(model, t_end=0.01))


def _long(x) -> bool:
    """A valid end time of more than 0.05 s: a long run, not what this fuzzes."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0.05


run_fields = st.fixed_dictionaries({}, optional={
    "integrator": st.sampled_from(["dopri5", "rk4", "generalized-alpha", "nope", ""]),
    "rtol": junk, "atol": junk, "step": junk, "max_step": junk, "output_interval": junk,
    "output_step": junk, "rho_inf": junk, "output_times": st.lists(junk, max_size=3).map(tuple)})


@fuzz_settings()
@given(run_fields, st.one_of(st.sampled_from([0.01, 0.02]), junk.filter(lambda x: not _long(x))),
       st.sampled_from(["lagrange", "nullspace", "projection", "minimal", "partitioning", "nope"]),
       st.sampled_from([{}, {"fast": False}, {"sparse": True}, {"nope": 1}]))
def test_simulate_options(fields, t_end, formulation, form_opts):
    fields = dict(fields)
    if isinstance(fields.get("step"), (int, float)) and not isinstance(fields["step"], bool) \
            and 0 < fields["step"] < 1e-4:
        fields["step"] = 1e-4        # a valid but long run is not what this fuzzes
    model = MODELS["pendulum"].factory()
    culprits = list(fields) + list(form_opts) + ["t_end", "formulation", "option", "output", "step",
                                                 "tolerances", "integrator", "pendulum"]
    _expect("simulate options", lambda: simulate(model, t_end=t_end, formulation=formulation,
                                                 options=RunOptions(**fields), formulation_options=form_opts),
            [c.replace("_", " ") for c in culprits] + culprits)


@fuzz_settings(0.5)
@given(st.one_of(st.integers(1, 3), junk), fair,
       st.one_of(st.lists(st.floats(-1, 1), min_size=1, max_size=3).map(tuple), vectors),
       st.lists(st.one_of(st.integers(0, 2), junk), max_size=2).map(tuple))
def test_matrix_system_and_chain(n, mass, q0, hold):
    size = n if isinstance(n, int) and not isinstance(n, bool) and 0 < n < 4 else 2
    names = [f"c{i}" for i in range(size)]
    matrix = mass * np.eye(size) if isinstance(mass, float) and not isinstance(mass, bool) else mass
    _expect("matrix system", lambda: matrix_system("ms", names, mass=matrix, q0=q0, hold=hold))
    _expect("serial chain", lambda: serial_chain("ch", lengths=(1.0,) * size, masses=(mass,) * size,
                                                 inertias=(0.1,) * size, q0=q0))


@fuzz_settings()
@given(st.lists(st.text(max_size=30), min_size=1, max_size=3))
def test_sweep_parameters(texts):
    spec = resolve_model("pendulum")

    def check():
        params = dict(parse_param(t) for t in texts)
        check_scenarios(spec, grid(params))
    _expect("sweep parameters", check)


def _good_result(path):
    t = np.linspace(0.0, 1.0, 5)
    Result(t, {"q": Series(np.c_[t, 2 * t], ("x", "y"), "m"), "energy": Series(t[:, None], ("total",), "J")},
           {"model": "m"}, []).save(path)


attr_values = st.one_of(st.text(max_size=20), st.integers(), st.floats(), st.sampled_from(
    ['{"a": 1}', "[]", "[" * 50, '"x"', "null", "{}", b"\xff\xfe"]), st.lists(st.text(max_size=3), max_size=3))
mutation = st.one_of(
    st.tuples(st.just("del"), st.sampled_from(["time", "q", "energy", "coordinate", "energy_label"])),
    st.tuples(st.just("attr"), st.sampled_from(["/", "q", "time", "energy"]),
              st.sampled_from(["summary", "events", "labels", "format", "version", "column_units", "units"]),
              attr_values),
    st.tuples(st.just("data"), st.sampled_from(["time", "q", "energy", "new"]),
              st.sampled_from([(0,), (5,), (5, 2), (3, 2), (5, 3), (2, 2, 2), ()]),
              st.sampled_from(["f8", "i4", "S3", "u1", "?"])))


def _mutate(h5, m):
    if m[0] == "del":
        if m[1] in h5:
            del h5[m[1]]
    elif m[0] == "attr":
        if m[1] in h5:
            h5[m[1]].attrs[m[2]] = m[3] if not isinstance(m[3], list) or m[3] else np.array([], dtype="S1")
    else:
        if m[1] in h5:
            del h5[m[1]]
        h5.create_dataset(m[1], data=np.zeros(m[2], dtype=m[3]))


@fuzz_settings()
@given(st.lists(mutation, min_size=1, max_size=4))
def test_result_files_with_changed_structure(mutations):
    with scratch() as d:
        path = d / "r.h5"
        _good_result(path)
        with h5py.File(path, "a") as h5:
            for m in mutations:
                try:
                    _mutate(h5, m)
                except (TypeError, ValueError, KeyError, OSError, RuntimeError):
                    pass         # h5py refused to make that change: the file stays as it was
        loaded = _expect("result files (structure)", lambda: Result.load(path), [str(path)])
    if loaded is not None:
        assert all(s.data.shape == (len(loaded.t), len(s.labels)) for s in loaded.series.values())


@fuzz_settings()
@given(st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=8)), min_size=1, max_size=6))
def test_result_files_with_changed_bytes(changes):
    """Bytes overwritten anywhere in the file: loaded (and then consistent) or one FileFormatError."""
    with scratch() as d:
        path = d / "r.h5"
        _good_result(path)
        data = bytearray(path.read_bytes())
        for where, new in changes:
            i = min(int(where * len(data)), len(data) - len(new))
            data[i:i + len(new)] = new
        path.write_bytes(bytes(data))
        try:
            with time_limit():
                loaded = Result.load(path)
        except FileFormatError as exc:
            assert str(path) in str(exc)
            count("result files (bytes)", "clean error")
            return
        count("result files (bytes)", "ok")
    assert all(s.data.shape == (len(loaded.t), len(s.labels)) for s in loaded.series.values())
    assert math.isfinite(len(loaded.t))
