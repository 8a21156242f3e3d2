"""The documentation site (docs/) builds with warnings as errors, runs its gallery and needs no network.

Slow (a full Sphinx build with the gallery executed): ``python3 -m pytest -m slow tests/test_docs.py``.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
pytest.importorskip("sphinx")
pytest.importorskip("sphinx_gallery")
pytest.importorskip("sphinx_click")
pytest.importorskip("myst_parser")
pytest.importorskip("pydata_sphinx_theme")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


@pytest.mark.slow
def test_site_is_complete(site):
    for page in ("index.html", "api.html", "cli.html", "getting-started.html", "contributing.html",
                 "auto_examples/index.html", "theory/index.html", "guide/index.html"):
        assert (site / page).is_file(), page
    api = (site / "api.html").read_text()
    import multibody
    for name in multibody.__all__:
        if name != "__version__":
            assert f'id="multibody.{name}"' in api, name
    cli = (site / "cli.html").read_text()
    from multibody.cli import COMMANDS
    for command in COMMANDS:
        assert f'id="multibody-{command.name}"' in cli, command.name


@pytest.mark.slow
def test_gallery_ran_with_figures(site):
    examples = sorted((DOCS / "examples").glob("plot_*.py"))
    assert examples
    for script in examples:
        page = site / "auto_examples" / (script.stem + ".html")
        assert page.is_file(), script.name
        assert re.search(r'src="[^"]*_images/sphx_glr_' + script.stem, page.read_text()), script.name


@pytest.mark.slow
def test_no_network_needed(site):
    """No script, stylesheet or font is loaded from another host; MathJax is served from _static."""
    remote = re.compile(r'<(?:script|link|img)[^>]*(?:src|href)="(?:https?:)?//', re.I)
    for page in site.rglob("*.html"):
        assert not remote.search(page.read_text()), page.relative_to(site)
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert "_static/mathjax/tex-chtml.js" in (site / "index.html").read_text()
