"""A small TOML writer for model files (the standard library reads TOML but does not write it).

Handles what model files contain: strings, booleans, ints, finite floats (written with ``repr``, so
they read back bit for bit), lists of those (nested), tables (inline below the top level) and arrays
of tables at the top level (``[[bodies]]``)."""
from __future__ import annotations

import json
import math


def dumps(data: dict) -> str:
    """TOML text of ``data``: scalars first, then [tables], then [[arrays of tables]]."""
    head, tables, arrays = [], [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append(f"\n[{_key(key)}]\n" + "".join(f"{_key(k)} = {_value(v)}\n" for k, v in value.items()))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                arrays.append(f"\n[[{_key(key)}]]\n" + "".join(f"{_key(k)} = {_value(v)}\n" for k, v in item.items()))
        else:
            head.append(f"{_key(key)} = {_value(value)}\n")
    return "".join(head) + "".join(tables) + "".join(arrays)


def _key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "-_" for c in k) else json.dumps(k)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"TOML model files hold finite numbers only, got {v}.")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)      # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML.")
