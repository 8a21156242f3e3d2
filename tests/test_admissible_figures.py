"""Paper 000 Figs 3, 6, 9: the admissible motions at a singular configuration of a nullspace run, the
continuing one first (N3), drawn as bar charts per body."""
import numpy as np

from multibody.models import MODELS
from multibody.plot.admissible import admissible_figures
from multibody.simulation import simulate


def test_continuing_motion_of_the_double_four_bar_is_the_conventional_one(tmp_path):
    """Paper 000 Sect. 3.2: the first admissible motion at the singular configuration is the
    conventional assembly's: no horizontal displacement, cranks 1, 3, 5 with vertical speed L/2 theta'
    and rotation theta', couplers 2, 4 twice the vertical speed and no rotation."""
    model = MODELS["double-four-bar"].factory()
    r = simulate(model, t_end=1.0, formulation="nullspace")
    event = next(e for e in r.events if e.get("kind") == "singular")
    u = np.concatenate([[0.0, 0.5, 1.0] if k % 2 else [0.0, 1.0, 0.0] for k in range(1, 6)])
    C = np.asarray(event["continuing"])[:, 0]
    assert abs(abs(C @ u) / np.linalg.norm(u) - 1.0) < 1e-6
    new = np.asarray(event["new"])
    assert new.shape == (15, 2) and np.allclose(new.T @ C, 0.0, atol=1e-10)
    paths = admissible_figures(r, model, tmp_path)
    assert paths and all(p.stat().st_size > 10_000 for p in paths)
