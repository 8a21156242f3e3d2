"""Sphinx configuration of the multibody documentation (issue 22).

Build: ``python3 -m pip install ".[docs]" && python3 -m sphinx -W --keep-going -b html docs docs/_build/html``.
The built site needs no network: MathJax 3 is served from ``_static/mathjax`` (copied from the pip
package ``sphinx-mathjax-offline``), the PyData theme ships its fonts and scripts.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
os.environ.setdefault("MPLBACKEND", "Agg")
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import multibody  # noqa: E402

project = "multibody"
author = "the multibody developers"
copyright = "2026, the multibody developers"
release = multibody.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_click",
    "sphinx_gallery.gen_gallery",
    "sphinx-mathjax-offline",      # MathJax 3 copied into _static/mathjax: no CDN
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "examples/README.rst", "sg_execution_times.rst"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
autosummary_generate = False

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": False,   # its page loads jQuery/DataTables from CDNs
}

html_theme = "pydata_sphinx_theme"
html_title = f"multibody {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
}
html_show_sourcelink = False
html_context = {"default_mode": "auto"}   # else the theme logs a console error on pages opened from files


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings write norms as ``|x|``: escape the bars so docutils does not read substitutions."""
    if what == "module":      # module docstrings are plain text (paper maps, layouts): show them verbatim
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""] if any(lines) else []
        return
    for i, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith(("|", "+")):
            lines[i] = line.replace("|", "\\|")


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars)
