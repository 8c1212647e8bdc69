"""The contract's JSON document written from the engine's bulk decisions
(commands/schedule_output.py _bulk_json): the "workloads" array joined entry
by entry, and the owners of the workloads.

Two implementations on purpose: ``kueue_fast.commands._contract_json``
(commands/_contract_json.pyx) is the compiled twin of the ``*_py`` functions
here, used when this installation's module is from these sources (_compiled);
an install without it runs the Python ones (the same text, slower). The tests
hold the compiled ones to these."""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

from .. import _compiled


def json_workload_entries_py(
    keys: list[str],
    kinds: list[int],
    shapes: list[int],
    admitted_tails: list[str],
    reasons: list[str],
    messages: list[str],
    owners: dict[str, str],
    other_texts: list[str],
    pending_state: str,
    prefix: str = "",
    suffix: str = "",
    write: Callable[[str], object] | None = None,
    chunk: int = 1 << 20,
) -> str:
    """The "workloads" array of schedule_output._bulk_json as json.dumps(doc, indent=2)
    writes it, between prefix and suffix: one entry per key; ``kinds`` (0
    other, 1 admitted, 2 pending) say whether its text is the next of
    other_texts, its shape's admitted tail, or written from the next reason
    and message. Given ``write``, the text goes to it in pieces (each ends
    once it holds ``chunk`` characters) and "" is returned."""
    enc = encode_basestring_ascii
    pending = iter(zip(reasons, messages, strict=True))
    others = iter(other_texts)
    entries: list[str] = []
    for key, kind, shape in zip(keys, kinds, shapes, strict=True):
        if kind == 0:
            entries.append(next(others))
            continue
        ns, name = key.split("/", 1)
        text = '{\n      "namespace": ' + enc(ns) + ',\n      "name": ' + enc(name)
        owner = owners.get(key)
        if owner is not None:
            text += ',\n      "owner": ' + enc(owner)
        if kind == 1:
            entries.append(text + admitted_tails[shape])
        else:
            reason, message = next(pending)
            entries.append(
                f'{text},\n      "state": {enc(pending_state)},\n      "reason": {enc(reason)},'
                f'\n      "message": {enc(message)}\n    }}'
            )
    text = prefix + ("[\n    " + ",\n    ".join(entries) + "\n  ]" if entries else "[]") + suffix
    if write is None:
        return text
    for start in range(0, len(text), chunk):
        write(text[start : start + chunk])
    return ""


def workload_owners_py(workloads: dict[str, Any]) -> dict[str, str]:
    """The owner of every workload that has one, by key (schedule_output.to_json)."""
    return {key: wl.owner for key, wl in workloads.items() if wl.owner is not None}


_compiled_json = _compiled.module("commands._contract_json")
json_workload_entries: Callable[..., str] = (
    _compiled_json.json_workload_entries if _compiled_json is not None else json_workload_entries_py
)
workload_owners: Callable[[dict[str, Any]], dict[str, str]] = (
    _compiled_json.workload_owners if _compiled_json is not None else workload_owners_py
)
