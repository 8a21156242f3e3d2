"""Animations (issue 15): what each frame draws is the mechanism of the stored state, and the geometry the
eye relies on holds in the drawing itself: the double four-bar's three cranks stay parallel through every
singular crossing (parallelogram linkage, paper 000 Sect. 3.2), the locked joint of the 3R pendulum keeps
its angle after the lock (paper 002 Sect. 6: the lock holds q2 = const), the drawn directors of a spatial
body form an orthonormal frame (paper 004 eq. 24). Bad input exits with code 2 and one message."""
import numpy as np
import pytest
from click.testing import CliRunner

from multibody import RunOptions, simulate
from multibody.cli import main
from multibody.models import MODELS
from multibody.report.animation import Animation
from multibody.report.timeline import frame_indices, markers

#: the tests step through frames by hand instead of saving them
pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted")


@pytest.fixture(scope="module")
def double_four_bar(tmp_path_factory):
    model = MODELS["double-four-bar"].factory()
    result = simulate(model, t_end=3.0, options=RunOptions(output_step=0.02))
    result.summary["model_source"] = "double-four-bar"
    path = tmp_path_factory.mktemp("dfb") / "dfb.h5"
    result.save(path)
    return model, result, path


@pytest.fixture(scope="module")
def locking(tmp_path_factory):
    entry = MODELS["three-r-pendulum-locking"]
    result = simulate(entry.factory(), t_end=2.0, options=RunOptions(output_step=0.02), events=entry.events)
    path = tmp_path_factory.mktemp("lock") / "3r.h5"
    result.save(path)
    return entry.factory(), result, path


def _frames(anim):
    """Every frame's artists (the lines drawn for the mechanism), frame by frame."""
    for i in range(len(anim.idx)):
        anim._frame(i)
        yield i, [a for a in anim.artists if hasattr(a, "get_xydata")]


def test_frames_decimated_and_keep_every_event():
    t = np.linspace(0.0, 10.0, 5001)
    idx = frame_indices(t, 100, [0.7143, 5.11])
    assert len(idx) <= 100 + 2 and idx[0] == 0 and idx[-1] == len(t) - 1     # whole run, not truncated
    for te in (0.7143, 5.11):
        assert np.min(np.abs(t[idx] - te)) <= 0.001                            # the state at the event is shown


def test_double_four_bar_cranks_parallel_in_every_frame(double_four_bar):
    model, result, _ = double_four_bar
    crossings = [m.t for m in markers(result) if m.kind == "singular"]
    assert len(crossings) >= 2                        # the run passes the all-horizontal configuration
    anim = Animation(result, model, max_frames=60)
    names = [b.name for b in model.bodies]
    cranks = [names.index(c) for c in ("bar1", "bar3", "bar5")]
    shown = set()
    for i, lines in _frames(anim):
        bars = [ln.get_xydata() for ln in lines if len(ln.get_xydata()) == 2][: len(names)]
        d = np.array([bars[c][1] - bars[c][0] for c in cranks])
        assert np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-9)             # the bars drawn are 1 m
        assert np.abs(d[0, 0] * d[1:, 1] - d[0, 1] * d[1:, 0]).max() < 1e-9                        # parallel cranks
        shown.add(anim.banner.get_text().split(" at ")[0])
    anim.close()
    assert any(s.startswith("singular crossing (rank 12 of 14)") for s in shown)   # announced in the frames


def test_locked_joint_keeps_its_angle(locking):
    model, result, _ = locking
    anim = Animation(result, model, max_frames=400)
    angles, held = {}, {}
    for i, lines in _frames(anim):
        k = anim.idx[i]
        chain = next(ln.get_xydata() for ln in lines if len(ln.get_xydata()) == 4)   # base + 3 link ends
        a = np.arctan2(*np.diff(chain, axis=0)[:, ::-1].T)
        angles[k] = np.angle(np.exp(1j * (a[1] - a[0])))                             # drawn q2
        held[k] = sum(len(ln.get_xydata()) for ln in lines if ln.get_marker() == "s")
    t = result.t
    after = [k for k in angles if t[k] > 0.8 or (t[k] == 0.8 and k > 0 and t[k - 1] == 0.8)]
    q2_lock = np.interp(0.8, t[: np.searchsorted(t, 0.8) + 1], result.q[: np.searchsorted(t, 0.8) + 1, 1])
    assert np.allclose([angles[k] for k in after], np.angle(np.exp(1j * q2_lock)), atol=1e-7)
    assert {held[k] for k in angles if t[k] < 0.8} == {0}
    assert {held[k] for k in angles if 0.8 < t[k] < 1.3} == {1}                     # one locked joint marked
    assert {held[k] for k in angles if t[k] > 1.3} == {2}                           # then two
    anim.close()


def test_spatial_directors_drawn_orthonormal():
    model = MODELS["gyro-top"].factory()
    result = simulate(model, t_end=0.2, options=RunOptions(output_step=0.01))
    anim = Animation(result, model, max_frames=10)
    for _, lines in _frames(anim):
        d = np.array([ln.get_data_3d() for ln in lines if ln.get_color() in ("C3", "C2", "C4")][:3])
        vec = (d[:, :, 1] - d[:, :, 0]) / anim.scene.scale
        assert np.allclose(vec @ vec.T, np.eye(3), atol=1e-6)
    anim.close()


def test_animate_command_writes_gif_and_html(double_four_bar, tmp_path):
    from PIL import Image

    _, _, path = double_four_bar
    res = CliRunner().invoke(main, ["animate", str(path), "-o", str(tmp_path / "a.gif"), "--max-frames", "12"])
    assert res.exit_code == 0, res.output
    with Image.open(tmp_path / "a.gif") as im:
        assert 12 <= im.n_frames <= 12 + 2 * 5      # decimated, plus the states at the crossings of 3 s
    res = CliRunner().invoke(main, ["animate", str(path), "-o", str(tmp_path / "a.html"), "--max-frames", "5"])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "a.html").read_text()
    assert "data:image/png;base64" in page and "http" not in page     # self-contained: no network reference


@pytest.mark.parametrize("args, words", [
    (["missing.h5", "-o", "a.gif"], "does not exist"),
    (["{dfb}", "-o", "a.avi"], "must end in .gif"),
    (["{dfb}", "-o", "x.txt/a.gif"], "is a file, not a directory"),
    (["{dfb}", "-o", "a.gif", "--model", "gyro-top"], "12 coordinates"),
    (["{txt}", "-o", "a.gif"], "result file"),
])
def test_animate_bad_input(double_four_bar, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.txt").write_text("not a result")
    args = [a.format(dfb=double_four_bar[2], txt=tmp_path / "x.txt") for a in args]
    res = CliRunner().invoke(main, ["animate", *args])
    assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output
    assert not list(tmp_path.glob("a.*"))


def test_mp4_without_ffmpeg_is_a_clear_error(double_four_bar, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))            # no ffmpeg on this PATH
    res = CliRunner().invoke(main, ["animate", str(double_four_bar[2]), "-o", str(tmp_path / "a.mp4")])
    assert res.exit_code == 2 and "ffmpeg" in res.output and not (tmp_path / "a.mp4").exists()


@pytest.mark.skipif(__import__("shutil").which("ffmpeg") is None, reason="ffmpeg is not installed (optional)")
def test_mp4_with_ffmpeg(locking, tmp_path):
    res = CliRunner().invoke(main, ["animate", str(locking[2]), "-o", str(tmp_path / "a.mp4"), "--max-frames", "8"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "a.mp4").read_bytes()[4:8] == b"ftyp"          # an ISO media file


def test_spatial_snapshots_without_outlines(tmp_path):
    """A spatial model without outlines used to get no snapshot figure at all; now its director frames."""
    from multibody import SpatialModelBuilder
    from multibody.plot.spatial import snapshots3d

    b = SpatialModelBuilder("disk-on-a-ball-joint")
    b.add_body("disk", mass=1.0, inertia=(0.2, 0.4, 0.2), position=(0.2, 0, 0.5), omega=(0, 0, 5.0))
    b.spherical("tip", "ground", "disk", point=(0, 0, 0))
    b.gravity()
    model = b.build()
    result = simulate(model, t_end=0.2, options=RunOptions(output_step=0.05))
    path = snapshots3d(result, model, tmp_path / "s.png")
    assert path is not None and path.stat().st_size > 10_000
