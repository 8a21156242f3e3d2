"""The README's model example runs as written (the README stays true to the code)."""
import re
from pathlib import Path

import numpy as np

from multibody.models.linkages import slider_position


def test_readme_example(tmp_path, monkeypatch):
    text = (Path(__file__).parents[1] / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    env = {}
    exec(compile(code, "README.md", "exec"), env)
    result = env["result"]
    assert (tmp_path / "slider.h5").exists() and (tmp_path / "slider.csv").exists()
    phi = result.column("q", "crank.theta")
    np.testing.assert_allclose(result.column("q", "slider.x"), slider_position(phi), atol=1e-7)
