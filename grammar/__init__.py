"""The odt grammar (``odt.lark``) and the one way to load it."""
from __future__ import annotations

import functools

from lark import Lark


@functools.lru_cache(maxsize=1)
def load_parser() -> Lark:
    """The LALR parser for odt programs (strict, positions propagated). Lark caches the
    grammar analysis in the temporary folder, keyed by the grammar's hash, so a process
    after the first loads it in milliseconds instead of ~0.4 s."""
    return Lark.open_from_package(
        "odt.grammar",
        "odt.lark",
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        strict=True,
        cache=True,
    )
