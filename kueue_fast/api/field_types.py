"""What the declarations of api/fields.py are made of: a Field (one field or
object of Kueue's API with its OpenAPI type, enum, limits, default and
list-map keys) and the shorthands that build one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# field types: OBJECT/ARRAY/STRING/INTEGER/BOOLEAN as in OpenAPI; QUANTITY a
# resource.Quantity (a string or a number); MAP an object of string keys whose
# values are all ``values``.
OBJECT, ARRAY, STRING, INTEGER, BOOLEAN, QUANTITY, MAP = (
    "object",
    "array",
    "string",
    "integer",
    "boolean",
    "quantity",
    "map",
)


@dataclass(frozen=True)
class Field:
    """One field (or a whole object) of Kueue's API."""

    type: str
    doc: str = ""
    fields: Mapping[str, Field] = field(default_factory=dict)  # OBJECT: its fields
    items: Field | None = None  # ARRAY: the items
    values: Field | None = None  # MAP: the values
    enum: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    min_items: int | None = None
    max_items: int | None = None
    max_properties: int | None = None
    minimum: int | None = None
    int32: bool = False
    default: str | None = None  # what the API server (and the loader) puts in when unset
    # listType=map keys: items are merged by these keys (server-side apply)
    list_map_keys: tuple[str, ...] = ()
    # fields not declared are kept: kueue-fast does not check them here
    open: bool = False
    names: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(self.fields))

    def at(self, path: str) -> Field:
        """The field at a dotted path of object fields ("spec.preemption"); a
        ``[]`` step goes into array items or map values ("spec.podSets[]")."""
        cur = self
        for step in path.split(".") if path else ():
            name, items = (step[:-2], True) if step.endswith("[]") else (step, False)
            if name:
                cur = cur.fields[name]
            if items:
                nxt = cur.items if cur.type == ARRAY else cur.values
                assert nxt is not None, path
                cur = nxt
        return cur


def obj(doc: str = "", *, required: tuple[str, ...] = (), open: bool = False, **fields: Field) -> Field:  # noqa: A002
    return Field(OBJECT, doc, fields=fields, required=required, open=open)


def arr(items: Field, doc: str = "", *, keys: tuple[str, ...] = (), **kw: Any) -> Field:
    return Field(ARRAY, doc, items=items, list_map_keys=keys, **kw)


def string(doc: str = "", **kw: Any) -> Field:
    return Field(STRING, doc, **kw)


def int32(doc: str = "", **kw: Any) -> Field:
    return Field(INTEGER, doc, int32=True, **kw)


def string_map(doc: str = "", **kw: Any) -> Field:
    return Field(MAP, doc, values=Field(STRING), **kw)


def quantity(doc: str = "") -> Field:
    return Field(QUANTITY, doc)


def open_object(doc: str = "") -> Field:
    return Field(OBJECT, doc, open=True)
