"""Every public name has a numpydoc docstring with its sections (issue 22), so that the rule stays true.

Public: the names of ``multibody.__all__`` and every object docs/api.rst documents (the flat API and the
objects it returns that users work with), with their public methods and properties (what ``:members:``
shows). A callable that takes parameters needs a Parameters section naming each of them (and no others),
one that returns a value a Returns section, one that raises a :class:`~multibody.MultibodyError` itself a
Raises section naming the class.
Sections are parsed by numpydoc's own parser (``numpydoc.docscrape``).
"""
import ast
import inspect
import re
import textwrap
from pathlib import Path

import pytest

import multibody
from multibody import docstrings, errors

docscrape = pytest.importorskip("numpydoc.docscrape")

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
#: what the API page documents: ``.. autoclass:: multibody.X`` and the like
DOCUMENTED = re.findall(r"^\.\. auto(?:class|function|exception):: (\S+)", API_PAGE.read_text(), re.M)
USER_ERRORS = {name for name, obj in vars(errors).items()
               if isinstance(obj, type) and issubclass(obj, errors.MultibodyError)}


def _resolve(path):
    module, _, name = path.rpartition(".")
    return getattr(__import__(module, fromlist=[name]), name)


def _public():
    """{qualified name: object} of the public names and their public members."""
    tops = {f"multibody.{n}": getattr(multibody, n) for n in multibody.__all__ if n != "__version__"}
    tops.update({path: _resolve(path) for path in DOCUMENTED})
    out = dict(tops)
    for name, obj in tops.items():
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                member = getattr(member, "__func__", member)
                if not attr.startswith("_") and (inspect.isfunction(member) or isinstance(member, property)):
                    out[f"{name}.{attr}"] = member
    return out


PUBLIC = _public()


def _parameters(obj):
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return []
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


def _body(obj):
    """The function's statements without nested functions and lambdas (their returns are not its own)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    nodes, stack = [], list(ast.iter_child_nodes(tree.body[0]))
    while stack:
        node = stack.pop()
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            nodes.append(node)
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _returns_value(obj):
    return any(isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value is None) for n in _body(obj))


def _raised(obj):
    names = set()
    for n in _body(obj):
        if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call):
            func = n.exc.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names & USER_ERRORS


def _names(section):
    return {part.strip().lstrip("*") for p in section for part in p.name.split(",") if part.strip()}


def _problems(name, obj):
    doc = inspect.getdoc(obj) or ""
    if not doc.strip() or (inspect.isclass(obj) and doc.startswith(obj.__name__ + "(")):
        return [f"{name}: no docstring"]
    if isinstance(obj, property):
        return []
    parsed = docscrape.NumpyDocString(doc)
    found, problems = _names(parsed["Parameters"]) | (_names(parsed["Attributes"]) if inspect.isclass(obj)
                                                      else set()), []
    params = _parameters(obj)
    if params and not found:
        problems.append(f"{name}: no Parameters section")
    else:
        problems += [f"{name}: parameter '{p}' not in Parameters" for p in params if p not in found]
        if not inspect.isclass(obj):
            problems += [f"{name}: Parameters names '{p}', which it does not take" for p in found - set(params)]
    if inspect.isfunction(obj):
        if _returns_value(obj) and not parsed["Returns"]:
            problems.append(f"{name}: no Returns section")
        listed = " ".join(p.type + " " + p.name for p in parsed["Raises"])
        problems += [f"{name}: raises {e}, not in Raises" for e in sorted(_raised(obj)) if e not in listed]
    return problems


def test_the_public_api_is_walked():
    """The walk reaches the flat API and the builders' methods (the rule is not vacuous)."""
    assert len(PUBLIC) > 80
    for name in ("multibody.ModelBuilder.revolute", "multibody.SpatialModelBuilder.joint", "multibody.Result.load",
                 "multibody.simulate", "multibody.sweep.SweepTable.save"):
        assert name in PUBLIC, name


def test_the_api_page_documents_the_flat_api():
    missing = [n for n in multibody.__all__ if n != "__version__" and f"multibody.{n}" not in DOCUMENTED]
    assert missing == [], "add them to docs/api.rst"


def test_every_public_name_has_its_sections():
    problems = [p for name, obj in PUBLIC.items() for p in _problems(name, obj)]
    assert problems == [], "\n".join(problems)


def test_the_attached_sections_name_existing_objects():
    """A method renamed or removed elsewhere leaves its sections behind: name them."""
    assert docstrings.MISSING == []


def test_the_checker_finds_missing_sections():
    """The checker itself: a function without sections, with a raise and a return, is reported."""
    def area(width, height):
        """Area of a rectangle."""
        if width < 0:
            raise errors.ModelError("negative")
        return width * height

    assert _problems("area", area) == ["area: no Parameters section", "area: no Returns section",
                                      "area: raises ModelError, not in Raises"]
