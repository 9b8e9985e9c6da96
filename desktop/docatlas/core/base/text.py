"""Text that came from a model or a document, made safe for a terminal or a spreadsheet.

Untrusted text may carry terminal control sequences (clear the screen, set the window
title, write the clipboard through OSC 52) or, in a CSV cell, a formula. These pure
functions take them out; the CLI passes everything it prints from a model or a document
through `for_terminal`, the CSV export every cell through `for_spreadsheet`.
"""

from __future__ import annotations

import re

# ESC [ ... final byte (CSI); ESC ] ... BEL or ESC \ (OSC); ESC P/X/^/_ ... ESC \ (DCS, SOS,
# PM, APC); ESC and one more byte (the other escapes); the 8-bit C1 forms of the same; then
# any single C0/C1 control left over except newline and tab.
_SEQUENCES = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?          # CSI
    | (?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # OSC
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?  # DCS, SOS, PM, APC
    | \x1b[ -~]?                               # any other escape
    | [\x00-\x08\x0b-\x1f\x7f-\x9f]            # lone controls (not \t or \n)
    """,
    re.VERBOSE,
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f\u2028\u2029]")


def for_terminal(text: object) -> str:
    """`text` without terminal control sequences; newlines and tabs are kept.

    A carriage return is dropped too (it would let a line overwrite what came before it).
    """
    return _SEQUENCES.sub("", str(text))


def json_for_terminal(text: str) -> str:
    """JSON text with the controls json.dumps(ensure_ascii=False) leaves raw (DEL, C1) escaped.

    The JSON means the same (a string may spell any character as \\uXXXX); C0 controls are
    escaped by json.dumps already.
    """
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def for_spreadsheet(value: object) -> object:
    """A CSV cell that no spreadsheet runs as a formula: a leading = + - @ tab or CR gets a '.

    Numbers stay numbers (a negative weight is not a formula); other values are returned as
    they are.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
