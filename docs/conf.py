"""Sphinx configuration of the multibody documentation (issue 22, first part).

Build (offline; the README's "Documentation" section):
    python3 -m pip install ".[docs]" && python3 -m sphinx -b html docs docs/_build/html
"""
import multibody

project = "multibody"
release = version = multibody.__version__
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.autosummary",
              "sphinx_click"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_heading_anchors = 3
exclude_patterns = ["_build"]
html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path = []
# offline: the pages write formulas as text, so no page loads MathJax (Sphinx adds its CDN script only to
# pages with math); the theme serves its fonts and icons itself
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_numpy_docstring = True
