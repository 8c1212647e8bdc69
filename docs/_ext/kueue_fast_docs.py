"""The site's one local extension: a command's options as ``--help`` prints them.

    ```{kueue-fast-help} schedule
    ```

    ```{kueue-fast-help} trace generate
    ```

The text comes from the command's own argparse parser
(:func:`kueue_fast.commands.cli.command_parser`), formatted at a fixed width, so a
page can never disagree with the program. In process rather than running
``kueue-fast CMD --help`` (sphinxcontrib-programoutput): no dependency, no
process per page, and the same text on every terminal.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WIDTH = 100  # columns the help is formatted for


def help_text(words: list[str]) -> str:
    """``kueue-fast WORDS... --help``, formatted at WIDTH columns."""
    from kueue_fast.commands.cli import build_parser, command_parser

    parser = command_parser(words[0]) if words else build_parser()
    for word in words[1:]:  # a subcommand: trace generate
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or word not in actions[0].choices:
            raise ValueError(f"kueue-fast {' '.join(words)}: no such command")
        parser = actions[0].choices[word]
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH + 2)  # argparse takes the terminal's width less 2
    try:
        return parser.format_help()
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


class KueueFastHelp(SphinxDirective):
    """``kueue-fast-help [COMMAND [SUBCOMMAND]]``: the help as a literal block."""

    required_arguments = 0
    optional_arguments = 2
    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            text = help_text(list(self.arguments))
        except ValueError as e:
            raise self.error(str(e)) from None
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("kueue-fast-help", KueueFastHelp)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
