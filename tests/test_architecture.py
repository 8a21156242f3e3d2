"""The package tree keeps its data flow (docs/contributing.md, "Layout"): no import circles, lower layers never import
upper ones, no module over 400 lines and no function over 60 (issue 19)."""
import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "multibody"

#: the layers from the bottom up; a subpackage (or root module) may import only its own layer and below
LAYERS = (
    ("errors",),
    ("linalg",),
    ("model",),
    ("assembly",),
    ("kinematics",),
    ("analysis",),
    ("fast",),
    ("formulations",),
    ("integrate",),
    ("results",),
    ("simulation",),
    ("models",),
    ("io",),
    ("experiments", "plot", "sweep", "report"),
    ("cli", "__main__", "docstrings"),
)
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 60


def _modules():
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("multibody",) + path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(mods):
    """{module: {imported module}} for relative and absolute imports inside the package, module-level
    and function-level alike; ``from pkg import name`` resolves to the submodule if there is one."""
    edges = defaultdict(set)
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                for alias in node.names:
                    target = next((c for c in (f"{base}.{alias.name}", base) if c in mods), None)
                    if target and target != name:
                        edges[name].add(target)
            elif isinstance(node, ast.Import):
                edges[name].update(a.name for a in node.names if a.name in mods and a.name != name)
    return edges


def _circles(mods, edges):
    """Strongly connected components with more than one module (Tarjan); edges into a package's
    __init__ (a re-exporting face) are not counted, as in shared/tools/import_circles.py."""
    faces = {m for m, p in mods.items() if p.name == "__init__.py"}
    graph = {m: {t for t in ts if t not in faces} for m, ts in edges.items()}
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in mods:
        if v not in index:
            visit(v)
    return found


def _layer(name):
    part = name.split(".")[1] if "." in name else None
    return next((i for i, group in enumerate(LAYERS) if part in group), None)


def test_no_import_circles():
    mods = _modules()
    assert _circles(mods, _imports(mods)) == []


def test_the_circle_finder_finds_a_circle(tmp_path, monkeypatch):
    """The checker itself: two modules that import each other are reported."""
    pkg = tmp_path / "multibody"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import x\n")
    (pkg / "b.py").write_text("def f():\n    from .a import y\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    mods = _modules()
    assert _circles(mods, _imports(mods)) == [["multibody.a", "multibody.b"]]


def test_every_module_has_a_layer_and_imports_only_its_layer_and_below():
    mods = _modules()
    unplaced = [m for m in mods if m != "multibody" and _layer(m) is None]
    assert unplaced == [], "add these to LAYERS"
    upward = [f"{m} -> {t}" for m, ts in _imports(mods).items() if m != "multibody"
              for t in ts if t != "multibody" and _layer(t) > _layer(m)]
    assert upward == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_functions_stay_small(path):
    text = path.read_text()
    assert len(text.splitlines()) <= MAX_MODULE_LINES
    long = [f"{n.name}: {n.end_lineno - n.lineno + 1} lines" for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []
