"""Constraint release and replacement, and impulsive applied forces (paper 002 eqs 20-22): the general
transition condition when h- is not a subset of h+ (a brake opens) and when U != 0 (a hammer blow)."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from multibody.cli import main
from multibody.errors import ModelError, MultibodyError
from multibody.models.locking import three_r_pendulum
from multibody.models.pendulums import pendulum
from multibody.simulation import RunOptions, simulate
from multibody.simulation.events import AtTime, Lock, Release, impulse_at, lock_at, parse_event, release_at

TIGHT = RunOptions(rtol=1e-10, atol=1e-12)
CONSISTENT = ("lagrangian", "projected", "minimal")


def _jump(result, k):
    """(v-, v+) of the k-th event: the two rows recorded at the event time."""
    t = result.summary["events"][k]["t"]
    rows = np.flatnonzero(result.t == t)
    return result.v[rows[0]], result.v[rows[-1]]


@pytest.mark.parametrize("method", CONSISTENT)
def test_a_release_alone_changes_no_velocity_and_no_energy(method):
    """J+ of a release is a subset of J-, so J+ v- = 0 already and (22) gives dv = 0, Lambda = 0."""
    r = simulate(three_r_pendulum(), t_end=1.5, events=(lock_at(0.8, "q2"), release_at(1.3, "q2")),
                 transition=method, options=TIGHT)
    e = r.summary["events"][1]
    assert e["released"] == ["lock-q2.value"] and e["activated"] == []
    v_minus, v_plus = _jump(r, 1)
    assert np.array_equal(v_minus, v_plus)
    assert e["energy_after"] == e["energy_before"]
    assert np.isnan(r.column("multipliers", "lock-q2.value")[-1])      # inactive after the release


def test_after_a_release_the_motion_is_that_of_the_free_mechanism():
    """The run continued after the release equals a run of the unlocked pendulum started from the
    state at the release (same equations from the same state)."""
    model = three_r_pendulum()
    r = simulate(model, t_end=1.6, events=(lock_at(0.8, "q2"), release_at(1.3, "q2")), options=TIGHT)
    k = np.flatnonzero(r.t == 1.3)[-1]
    free = simulate(model.with_initial(q0=r.q[k], v0=r.v[k]), t_start=1.3, t_end=1.6, options=TIGHT)
    assert np.allclose(r.q[-1], free.q[-1], atol=1e-7)


def test_replacement_agrees_in_every_form_and_keeps_the_free_momenta():
    """Release q2 and lock q3 at the same instant: J1 = (nothing), J2 = lock q3. All consistent forms
    give the same v+ (they are the same condition, eqs 24, 32, 37); q3 stops; the momentum of the
    coordinates free after the event (q1, q2) is continuous; T drops by 1/2 dv^T M dv."""
    events = (lock_at(0.8, "q2"), AtTime(1.3, Release(("q2",))), AtTime(1.3, Lock(("q3",))))
    runs = {m: simulate(three_r_pendulum(), t_end=1.31, events=events, transition=m, options=TIGHT)
            for m in CONSISTENT}
    v_plus = {m: _jump(r, 1)[1] for m, r in runs.items()}
    for m in CONSISTENT[1:]:
        assert np.allclose(v_plus[m], v_plus["lagrangian"], rtol=0, atol=1e-10 * np.max(np.abs(v_plus[m])))
    r = runs["lagrangian"]
    e = r.summary["events"][1]
    assert e["released"] == ["lock-q2.value"] and e["activated"] == ["lock-q3.value"]
    assert abs(v_plus["lagrangian"][2]) < 1e-12
    assert e["momentum_continuity_error_rel"] < 1e-12
    v_minus = _jump(r, 1)[0]
    M = three_r_pendulum().mass(r.q[np.flatnonzero(r.t == 1.3)[0]])
    dv = v_plus["lagrangian"] - v_minus
    assert e["energy_before"] - e["energy_after"] == pytest.approx(0.5 * dv @ M @ dv, rel=1e-9)


def test_an_impulse_on_a_pendulum_bob_changes_only_its_tangential_velocity():
    """Point mass m on a rod of length l (x, z): an impulse U at the bob gives dv = (I - e e^T) U / m,
    e = (x, z) / l (the rod's impulse Lambda takes the radial part); here at rest with the rod
    horizontal (e = (1, 0)): U = (2, 3) N s gives dv = (0, 3/m)."""
    m = 2.0
    r = simulate(pendulum(mass=m), t_end=0.2, events=(impulse_at(1e-9, x=2.0, z=3.0),), options=TIGHT)
    v_minus, v_plus = _jump(r, 0)
    q = r.q[np.flatnonzero(r.t == 1e-9)[0]]
    e = q / np.linalg.norm(q)
    assert np.allclose(v_plus - v_minus, (np.eye(2) - np.outer(e, e)) @ [2.0, 3.0] / m, atol=1e-12)
    ev = r.summary["events"][0]
    assert ev["applied_impulse"] == {"x": 2.0, "z": 3.0}
    assert ev["momentum_continuity_error"] < 1e-12       # F^T (M dv - U) = 0


@pytest.mark.parametrize("method", CONSISTENT)
def test_the_work_of_an_impulse_is_its_average_velocity_times_u(method):
    """Delta T = 1/2 (v- + v+)^T M dv = 1/2 (v- + v+)^T (U - J^T Lambda) = 1/2 (v- + v+)^T U, since
    J v- = J v+ = 0 (paper 002 eq. 21; a constraint impulse does no work)."""
    r = simulate(three_r_pendulum(), t_end=1.0, events=(lock_at(0.4, "q3"), impulse_at(0.7, q1=40.0, q2=-15.0)),
                 transition=method, options=TIGHT)
    v_minus, v_plus = _jump(r, 1)
    e = r.summary["events"][1]
    U = np.array([40.0, -15.0, 0.0])
    assert e["energy_after"] - e["energy_before"] == pytest.approx(0.5 * (v_minus + v_plus) @ U, rel=1e-10)
    assert abs(v_plus[2]) < 1e-12                          # the lock holds through the blow


def test_release_refuses_what_it_cannot_release():
    model = three_r_pendulum()
    with pytest.raises(ModelError, match="no such constraint rows"):
        model.without_rows(["lock-q2.value"])
    with pytest.raises(ModelError, match="release all of"):
        _partial_group()
    with pytest.raises(MultibodyError, match="has no coordinate q9"):
        simulate(model, t_end=1.0, events=(lock_at(0.5, "q9"),))


def _partial_group():
    """A planar model whose revolute joint is one Coincident group of two rows: releasing one row is refused."""
    from multibody.models import MODELS
    model = MODELS["slider-crank"].factory()
    group = next(g for g in model.constraints if g.rows >= 2 and type(g).__name__ != "CoordinateDriver")
    return model.without_rows([group.labels[0]])


def test_cli_events_lock_release_and_impulse(tmp_path):
    out = CliRunner().invoke(main, ["run", "three-r-pendulum-locking", "--t-end", "1.5", "--event",
                                    "release@1.4:q3", "--event", "impulse@1.45:q1=10", "--json",
                                    "--out", str(tmp_path / "r.h5")])
    assert out.exit_code == 0, out.output
    names = [e["name"] for e in json.loads(out.stdout)["events"]]
    assert names == ["lock q2", "lock q3", "release q3", "impulse q1 10"]
    for bad, msg in (("lock@x:q2", "cannot read the event"), ("impulse@1:q1=abc", "not COORD=VALUE"),
                     ("release@1.0:q7", "has no coordinate q7")):
        res = CliRunner().invoke(main, ["run", "three-r-pendulum-locking", "--event", bad,
                                        "--out", str(tmp_path / "bad.h5")])
        assert res.exit_code == 2 and msg in res.output and "Traceback" not in res.output
    assert not (tmp_path / "bad.h5").exists()


def test_parse_event_reads_every_kind():
    assert parse_event("lock@0.8:q2,q3").action == Lock(("q2", "q3"))
    assert parse_event("release@1.5:q2").action == Release(("q2",))
    assert parse_event("impulse@2:q1=3.5").action.values == {"q1": 3.5}
