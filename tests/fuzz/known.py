"""Failure classes the fuzzer knows of and does not fail on (yet).

THE ONE PLACE TO EMPTY: each entry is a class of failures that issue 21
tracks and another workstream fixes. While an entry is here, the mutators it
names are not drawn by default, and a failure whose stderr matches its
``signature`` is counted as known, not as a failure. Remove the entry once
its fix is merged: the CI run then fails on any case of that class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    item: str  # where it is tracked
    mutators: tuple[str, ...] = ()  # mutators that make only this class: not drawn
    signature: str = ""  # a regular expression on the outcome (class and stderr)

    def matches(self, outcome: str) -> bool:
        return bool(self.signature) and re.search(self.signature, outcome, re.S) is not None


KNOWN: dict[str, Known] = {}


def skipped_mutators(known: dict[str, Known] = KNOWN) -> set[str]:
    return {m for k in known.values() for m in k.mutators}


def classify(outcome: str, known: dict[str, Known] = KNOWN) -> str | None:
    """The known class an outcome (``"<class>: <stderr>"``) belongs to, or None."""
    for name, k in known.items():
        if k.matches(outcome):
            return name
    return None
