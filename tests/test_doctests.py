"""The examples in the docstrings run (issue 22): every docstring of the package with ``>>>`` examples, both
those written in the modules and the Examples sections that :mod:`multibody.docstrings` attaches to the
public API, runs through doctest (one test per docstring, named by the object)."""
import doctest
import importlib
import inspect
from pathlib import Path

import pytest

import multibody
from multibody import docstrings

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "multibody"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names():
    """Modules whose source holds examples (the section texts of multibody.docstrings are found through
    the objects they are attached to)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("multibody",) + path.relative_to(PACKAGE).with_suffix("").parts
        if ">>>" in path.read_text() and parts[1] != "docstrings":
            yield ".".join(parts).removesuffix(".__init__")


def _collect():
    tests, finder, flat = {}, doctest.DocTestFinder(), doctest.DocTestFinder(recurse=False)
    for name in _module_names():
        for test in finder.find(importlib.import_module(name)):
            tests[test.name] = test
    for owner, attr in docstrings.ATTACHED:
        obj = inspect.getattr_static(owner, attr) if attr else owner
        obj = getattr(obj, "__func__", obj)
        module = inspect.getmodule(owner)
        name = f"{module.__name__}.{getattr(owner, '__qualname__', '')}.{attr}".replace("..", ".").rstrip(".")
        for test in flat.find(obj, name, module=False, globs={}):
            tests[test.name] = test
    return {k: t for k, t in sorted(tests.items()) if t.examples}


TESTS = _collect()


def test_the_public_api_has_examples():
    """Most public names carry an example (the cheap ones, issue 22); the flat API is reached."""
    public = [n for n in multibody.__all__ if n != "__version__"]
    with_examples = {n for n in public if any(k.split(".")[-1] == n or f".{n}." in k for k in TESTS)}
    assert len(with_examples) >= 25, sorted(set(public) - with_examples)


@pytest.mark.parametrize("name", list(TESTS))
def test_docstring_examples(name):
    out = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    result = runner.run(TESTS[name], out=out.append)
    assert result.attempted > 0 and result.failed == 0, "".join(out)
