"""The documented output formats (docs/schemas/) held against real output: a test that
prints JSON or CSV checks it here, so the documentation cannot drift from the code."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

DIR = Path(__file__).resolve().parent.parent / "docs" / "schemas"


# Schemas other schemas build on ($ref): closing their top would refuse the fields the
# others add.
_BASES = {"run"}


def _closed(node: Any, top: bool = False) -> Any:
    """The schema with every object that lists its properties closed to others: the
    published schemas are open (a consumer must take an added field), but the harness's
    own output may carry no field its schema does not document."""
    if isinstance(node, dict):
        out = {k: _closed(v) for k, v in node.items()}
        if "required" in out and "properties" in out:  # a required name is documented
            out["properties"] = {**{k: {} for k in out["required"]}, **out["properties"]}
        said = "unevaluatedProperties" in out or "additionalProperties" in out  # open by design
        if ("properties" in out or "$ref" in out) and not said and not top:
            out["unevaluatedProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed(v) for v in node]
    return node


_SCHEMAS = {name: _closed(json.loads(p.read_text()), top=name in _BASES)
            for p in DIR.glob("*.schema.json") for name in [p.name.split(".")[0]]}
_REGISTRY = Registry().with_resources(
    [(s["$id"], Resource.from_contents(s)) for s in _SCHEMAS.values()])


def conform(name: str, instance: Any) -> None:
    """Fail with every way ``instance`` departs from docs/schemas/NAME.schema.json."""
    v = Draft202012Validator(_SCHEMAS[name], registry=_REGISTRY)
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
              for e in v.iter_errors(instance)]
    assert not errors, f"output departs from docs/schemas/{name}.schema.json:\n" + \
        "\n".join(errors[:20])


def export_columns() -> list[str]:
    """The CSV header docs/schemas/export.columns.json documents."""
    return list(json.loads((DIR / "export.columns.json").read_text())["columns"])
