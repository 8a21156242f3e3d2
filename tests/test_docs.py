"""The documentation site (docs/) builds with warnings as errors, runs its gallery and needs no network.

Slow (a full Sphinx build with the gallery executed): ``python3 -m pytest -m slow tests/test_docs.py``.
"""
import os
import re
import shutil
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
                 "auto_examples/index.html", "theory/index.html", "guide/index.html", "model-file.html"):
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


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (.ci/run installs the Debian package 'chromium')")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the 'test' extra")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.mark.slow
@pytest.mark.parametrize("page_path, math", [("index.html", True), ("auto_examples/plot_double_four_bar.html", True),
                                             ("api.html", False), ("theory/paper000.html", True)])
def test_pages_in_a_headless_browser(site, browser, tmp_path_factory, page_path, math):
    """No console error, no request to another host, every image loaded, formulas typeset by the local
    MathJax (mjx-container elements); a screenshot per page ($MULTIBODY_SCREENSHOT_DIR if set)."""
    shots = Path(os.environ.get("MULTIBODY_SCREENSHOT_DIR") or tmp_path_factory.mktemp("docs-shots"))
    shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:", "blob:"))
            else None)
    page.goto((site / page_path).as_uri(), wait_until="load")
    if math:
        page.wait_for_selector("mjx-container", timeout=20_000)
    broken = page.evaluate("() => Array.from(document.images).filter(i => i.complete && i.naturalWidth === 0)"
                           ".map(i => i.src)")
    page.screenshot(path=str(shots / (page_path.replace("/", "-") + ".png")), full_page=False)
    page.close()
    assert not errors, errors
    assert not requests, requests
    assert not broken, broken
