"""numpydoc sections (Parameters, Returns, Raises, Examples) of the public API (issue 22).

Each public function, class and method keeps its summary in its own module: what it computes, with the
paper and equation it implements. The sections that describe every parameter (types, units), the return
value, the errors and a runnable example live in the modules of this package and are appended to those
docstrings when ``multibody`` is imported, the way pandas appends shared docstring parts
(``pandas.util._decorators.Appender``) and NumPy documents its C functions (``numpy._core._add_newdocs``).
Why not inline: the builders and several long routines sit at the project's size limits (400 lines a
module, 60 a function; tests/test_architecture.py), and sections inline would push them over.

``tests/test_docstrings.py`` checks that every public callable has its Parameters (each parameter by name),
Returns and Raises sections and that every entry here still names an existing object;
``tests/test_doctests.py`` runs the Examples.
"""
from __future__ import annotations

import inspect

#: every object whose docstring received sections: (owner, attribute name or "" for the owner itself)
ATTACHED: list[tuple[object, str]] = []
#: entries whose object no longer exists (renamed or removed elsewhere); tests/test_docstrings.py names them
MISSING: list[str] = []


def attach(owner, sections: dict[str, str]) -> None:
    """Append numpydoc sections to the docstrings of ``owner`` (a class or module) and its members.

    ``sections`` maps an attribute name ("" for ``owner`` itself) to the section text. A docstring that
    already has numpydoc sections (written inline) is left as it is; a name that no longer exists is
    recorded in :data:`MISSING` instead of failing the import."""
    for name, text in sections.items():
        obj = inspect.getattr_static(owner, name, None) if name else owner
        if obj is None:
            MISSING.append(f"{getattr(owner, '__qualname__', owner.__name__)}.{name}")
            continue
        target = getattr(obj, "__func__", obj)          # classmethod, staticmethod
        doc = inspect.cleandoc(target.__doc__ or "")
        if isinstance(target, type) and doc.startswith(target.__name__ + "("):
            doc = ""                                     # the signature a dataclass writes when it has no doc
        if "\n----" in doc:
            continue
        target.__doc__ = (doc + "\n\n" if doc else "") + inspect.cleandoc(text) + "\n"
        ATTACHED.append((owner, name))


# each module attaches the sections of its part of the API when imported
from . import (analyses, motion, planar, planar_elements, results, runs, solves, spatial,  # noqa: E402,F401
               spatial_elements, systems, terms)
