"""The examples in the docstrings run (issue 22): every module of the package whose docstrings hold
``>>>`` examples is run through doctest."""
import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "multibody"
WITH_EXAMPLES = sorted(
    ".".join(("multibody",) + p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py") if ">>>" in p.read_text())


def test_some_docstrings_have_examples():
    assert WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0, f"{name}: {failed} of {attempted} examples failed"
