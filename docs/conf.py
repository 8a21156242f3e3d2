"""Sphinx configuration of the multibody documentation (issue 22).

Build: ``python3 -m pip install ".[docs]" && python3 -m sphinx -W --keep-going -b html docs docs/_build/html``.
The built site needs no network: MathJax 3 is served from ``_static/mathjax`` (copied from the pip
package ``sphinx-mathjax-offline``), the PyData theme ships its fonts and scripts.
"""
import json
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

# Broken cross-references are errors too (-W): every :func:, :meth:, :mod:, :data:, :exc: role and every
# :class: naming a multibody object must resolve. Parameter and return *types* ("float in m", "optional",
# "ndarray", "(n, n)") are descriptions rendered through the same field machinery; they are not links.
nitpicky = True
nitpick_ignore_regex = [("py:class", r"(?!multibody\.).*")]
# References to objects that exist but have no page of their own (internal modules, registries) are shown as
# code, not links (_existing_object below); a reference to a name that does not exist stays an error.
# internal classes that appear in signatures of documented functions, not documented themselves
nitpick_ignore = [("py:class", "multibody.formulations.nullspace.NullSpace"),
                  ("py:class", "multibody.model.director.LowerPairs"),
                  ("py:class", "multibody.model.director.SpatialBodies")]

autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"   # no second parameter list beside Attributes
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True     # Attributes sections as field lists: no second description of dataclass fields
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
html_static_path = []      # no own static files (the theme and MathJax bring theirs)
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


def _schema_rows(props, prefix=""):
    """(key, type, description) rows of a JSON Schema's properties, nested objects one level down."""
    rows = []
    for key, spec in props.items():
        kind = spec.get("type") or ("const " + json.dumps(spec["const"]) if "const" in spec else "")
        if "enum" in spec:
            kind = "one of " + ", ".join(json.dumps(v) for v in spec["enum"])
        item = spec.get("items", {}) if isinstance(spec.get("items"), dict) else {}
        rows.append((prefix + key, kind if isinstance(kind, str) else " or ".join(kind),
                     spec.get("description") or item.get("description", "")))
        nested = spec.get("properties") or item.get("properties")
        if nested and not prefix:
            rows += _schema_rows(nested, prefix + key + ("[]." if item else "."))
    return rows


def _write_model_file_page(app):
    """model-file.md from the shipped JSON Schema (multibody/io/model_schema.json): the reference of
    model files is generated, never written by hand."""
    schema_path = os.path.join(HERE, "..", "src", "multibody", "io", "model_schema.json")
    with open(schema_path) as f:
        schema = json.load(f)
    cell = lambda text: str(text).replace("|", "\\|").replace("\n", " ")     # noqa: E731
    lines = ["# Model-file reference", "", "Generated from the JSON Schema shipped with the package",
             "(`multibody/io/model_schema.json`, " + f"`{schema.get('$id', '')}`" + ").", "",
             cell(schema.get("description", "")), "", "Required keys: " +
             ", ".join(f"`{k}`" for k in schema.get("required", [])) + ".", "",
             "| key | type | description |", "|---|---|---|"]
    lines += [f"| `{k}` | {cell(t)} | {cell(d)} |" for k, t, d in _schema_rows(schema.get("properties", {}))]
    lines += ["", "The bodies, joints and the other tables are further constrained by the schema's `allOf` and",
              "`anyOf` rules; the whole schema:", "", "```{literalinclude} ../src/multibody/io/model_schema.json",
              ":language: json", "```", ""]
    text = "\n".join(lines)
    target = os.path.join(HERE, "model-file.md")
    if not os.path.exists(target) or open(target).read() != text:
        with open(target, "w") as f:
            f.write(text)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars)
    app.connect("builder-inited", _write_model_file_page)
    app.connect("missing-reference", _existing_object)


def _lookup(path):
    """The object at a dotted path (module prefix imported, the rest by attribute), or None."""
    import importlib
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
        except AttributeError:
            return None
        return obj
    return None


def _existing_object(app, env, node, contnode):
    """Resolve a py reference to an undocumented but existing object as plain code (missing-reference)."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    module = node.get("py:module") or ""
    candidates = [target, f"{module}.{target}", f"{module.rpartition('.')[0]}.{target}", f"multibody.{target}"]
    # autodoc pages document the flat API (py:module "multibody"): a short name may live in the object's own
    # module, so look in every loaded multibody module too
    candidates += [f"{name}.{target}" for name in list(sys.modules) if name.startswith("multibody.")]
    for path in candidates:
        if path.strip(".") and _lookup(path.strip(".")) is not None:
            return contnode
    return None
