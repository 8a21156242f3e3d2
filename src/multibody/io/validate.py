"""Reading and validating a model file: TOML (or JSON) -> a checked dict, or one MultibodyError that names
the file, the key path, the line and what is wrong.

Three passes, each stopping at the first problem: numbers must be finite (TOML allows nan and inf),
the published JSON Schema (``model_schema.json``, shipped with the package), and the references the
schema cannot express (a joint naming an unknown body, a driver on an unknown joint, duplicate names).
Nothing in the file is executed: tomllib and json only build dicts, lists, strings and numbers.
"""
from __future__ import annotations

import json
import math
import re
import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..errors import MultibodyError

SCHEMA_FILE = "model_schema.json"
FORMAT = "multibody-model/1"


@lru_cache(maxsize=1)
def schema() -> dict:
    """The published JSON Schema of the model file (package data ``multibody/io/model_schema.json``)."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text())


def read_model_file(path, merge=None) -> tuple[dict, str]:
    """Parse and validate ``path`` (.toml or .json); returns (data, text). ``merge(data)`` (if given) adds the
    bodies and joints of a ``urdf`` key before the references are checked."""
    path = Path(path)
    if not path.is_file():
        raise MultibodyError(f"model file '{path}' does not exist.")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MultibodyError(f"model file '{path}' cannot be read: {exc}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise MultibodyError(f"model file '{path}' is not valid {path.suffix[1:].upper()}: {exc}") from None
    return check_data(data, str(path), text, merge), text


def check_data(data, where: str, text: str = "", merge=None) -> dict:
    """MultibodyError for the first problem in ``data`` (a parsed model file), naming ``where``; returns the
    data (with a URDF merged by ``merge`` when the file has a ``urdf`` key)."""
    problem = _non_finite(data, ()) or _schema_problem(data)
    if not problem and merge is not None and "urdf" in data:
        data = merge(data)
    problem = problem or _reference_problem(data)
    if problem:
        keys, message = problem
        raise MultibodyError(f"model file '{where}', {_format(keys)}{_line(text, keys)}: {message}")
    return data


# ----------------------------------------------------------------------------- the three passes
def _non_finite(x, keys):
    if isinstance(x, float) and not math.isfinite(x):
        return keys, f"{x} is not a finite number."
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for k, item in items:
        found = _non_finite(item, keys + (k,))
        if found:
            return found
    return None


def _schema_problem(data):
    import jsonschema

    errors = list(jsonschema.Draft202012Validator(schema()).iter_errors(data))
    if not errors:
        return None
    err = min((leaf for e in errors for leaf in _leaves(e)), key=_relevance)
    keys = tuple(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):   # point at the unknown key
        keys += tuple(k for k in err.instance if k not in err.schema.get("properties", {}))[:1]
    return keys, _message(err)


def _leaves(err):
    """The specific errors under a oneOf/anyOf (the closest alternative says more than "not valid under any")."""
    if err.context:
        for sub in err.context:
            yield from _leaves(sub)
    else:
        yield err


def _relevance(err):
    """Deeper errors first, then the ones that name a key: an unknown key (often a typo) before a missing one."""
    rank = {"additionalProperties": 0, "required": 1, "type": 2, "oneOf": 4}
    return (-len(err.absolute_path), rank.get(err.validator, 3))


def _message(err) -> str:
    v, inst = err.validator, err.instance
    if v == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        return f"missing key '{missing[0] if missing else err.message}'."
    if v == "additionalProperties":
        extra = re.findall(r"'([^']+)'", err.message)
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        return f"unknown key {', '.join(repr(e) for e in extra)} (allowed: {allowed})."
    if v == "type":
        return f"expected {err.validator_value}, got {type(inst).__name__} {inst!r}."
    if v == "enum":
        return f"{inst!r} is not one of {', '.join(map(repr, err.validator_value))}."
    if v == "const":
        return f"expected {err.validator_value!r}, got {inst!r}."
    if v in ("oneOf", "anyOf"):
        keys = [" and ".join(map(repr, alt.get("required", []))) for alt in err.validator_value]
        return f"give {'exactly ' if v == 'oneOf' else ''}one of {', '.join(k for k in keys if k)}."
    if v is False or v == "false" or err.schema is False:
        return "this key is not allowed here."
    if v in ("minItems", "maxItems"):
        return f"wrong number of entries ({len(inst)}): {err.message}."
    if v in ("exclusiveMinimum", "minimum"):
        return f"{inst!r} must be {'>' if v == 'exclusiveMinimum' else '>='} {err.validator_value}."
    return err.message + "."


def _reference_problem(data):
    """References between sections: body, joint and coordinate names."""
    bodies = [b["name"] for b in data.get("bodies", [])]
    known = set(bodies) | {"ground"}
    for section in ("bodies", "joints", "springs"):
        seen = set()
        for i, item in enumerate(data.get(section, [])):
            if item["name"] in seen or (section == "bodies" and item["name"] == "ground"):
                return (section, i, "name"), f"the name '{item['name']}' is used twice."
            seen.add(item["name"])
    for section in ("joints", "springs"):
        for i, item in enumerate(data.get(section, [])):
            for j, body in enumerate(item.get("bodies", [])):
                if body not in known:
                    return (section, i, "bodies", j), _unknown("body", body, bodies)
            if item.get("bodies") and item["bodies"][0] == item["bodies"][1]:
                return (section, i, "bodies"), f"connects body '{item['bodies'][0]}' to itself."
            if "body" in item and item["body"] not in bodies:
                return (section, i, "body"), _unknown("body", item["body"], bodies)
    for i, f in enumerate(data.get("forces", [])):
        if f["body"] not in bodies:
            return ("forces", i, "body"), _unknown("body", f["body"], bodies)
    kinds = ("revolute", "prismatic") + (("cylindrical",) if data["kind"] == "spatial" else ())
    joints = [j["name"] for j in data.get("joints", []) if j["type"] in kinds]
    for i, d in enumerate(data.get("drivers", [])):
        if "joint" in d and d["joint"] not in joints:
            return ("drivers", i, "joint"), _unknown(" or ".join(kinds) + " joint", d["joint"], joints)
    if data["kind"] == "spatial" and data.get("joints"):
        for i, j in enumerate(data["joints"]):
            if j["bodies"][1] == "ground":
                return ("joints", i, "bodies", 1), "the second body (the child) must not be the ground."
    return None


def _unknown(what, name, known):
    return f"unknown {what} '{name}' (known: {', '.join(known) or 'none'})."


# ----------------------------------------------------------------------------- where
def _format(keys) -> str:
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return f"at {out}" if out else "at the top level"


def _line(text: str, keys) -> str:
    """' (line N)' of the key path in TOML text: the (i+1)-th [[section]] header, then the key below it."""
    if not text or text.lstrip().startswith("{"):
        return ""
    lines = text.splitlines()
    start, end, pos = 0, len(lines), 0
    if keys and isinstance(keys[0], str):
        header = re.compile(rf"^\s*\[\[\s*{re.escape(keys[0])}\s*\]\]")
        index = keys[1] if len(keys) > 1 and isinstance(keys[1], int) else None
        hits = [i for i, ln in enumerate(lines) if header.match(ln)]
        if index is not None and index < len(hits):
            start = hits[index]
            end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
            pos = 2
        key = next((k for k in keys[pos:] if isinstance(k, str)), None) if pos else keys[0]
        if key is not None:
            pattern = re.compile(rf"^\s*{re.escape(key)}\s*=|^\s*\[\s*{re.escape(key)}\s*[\].]")
            for i in range(start, end):
                if pattern.match(lines[i]):
                    return f" (line {i + 1})"
        if pos:
            return f" (line {start + 1})"
    return ""
