"""Checks of the plain (non-tensor) arguments of kiln's Python API, done before the extension
modules see them: nanobind turns a value it cannot convert into ``std::bad_cast`` or
"incompatible function arguments", which names neither the argument nor what it takes, and
silently truncates a path at an embedded NUL.

Every check names the argument and the value and says what is expected, in kiln-compile's form
("invalid max_seq_len 64.7 (float): expected an int"). The caller picks the exception classes:
a value of the wrong Python type raises ``errors[1]`` (a TypeError subclass), a value out of range
``errors[0]`` (a ValueError subclass): kiln.CompileOptionTypeError / kiln.CompileOptionError for
kiln.compile, kiln.InvalidArgumentTypeError / kiln.InvalidArgumentError for the runtime.
"""

from __future__ import annotations

import operator
import os
from typing import Any, Optional

Errors = tuple  # (ValueError subclass, TypeError subclass)

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1


def describe(value: Any) -> str:
    """`value` as the messages quote it: its repr, then its type unless the repr shows it."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    if value is None or isinstance(value, (str, bool)):
        return text
    return f"{text} ({type(value).__name__})"


def integer(name: str, value: Any, errors: Errors, *, low: Optional[int] = None,
            high: Optional[int] = None, why: str = "") -> int:
    """`value` as an int: a Python or NumPy integer (not a bool, not a float even when whole:
    64.7 must not become 64), within [low, high] where those are given."""
    if isinstance(value, bool):
        index = None
    else:
        try:
            index = operator.index(value)
        except TypeError:
            index = None
    if index is None:
        raise errors[1](f"invalid {name} {describe(value)}: expected an int")
    if (low is not None and index < low) or (high is not None and index > high):
        if low is not None and high is not None:
            expected = f"an int from {low} to {high}"
        elif low is not None:
            expected = f"an int >= {low}"
        else:
            expected = f"an int <= {high}"
        raise errors[0](f"invalid {name} {index}: expected {expected}{why}")
    return index


def real(name: str, value: Any, errors: Errors) -> float:
    """`value` as a finite float (an int or a float, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and \
            not hasattr(value, "__float__"):
        raise errors[1](f"invalid {name} {describe(value)}: expected a number")
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise errors[0](f"invalid {name} {number}: expected a finite number")
    return number


def flag(name: str, value: Any, errors: Errors) -> bool:
    """`value` as a bool: True/False (NumPy's too) or the ints 0 and 1; a str such as "false"
    is refused rather than read as True."""
    kind = type(value)
    # NumPy's bool scalar is numpy.bool_ in NumPy 1 and numpy.bool in NumPy 2.
    if isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")):
        return bool(value)
    try:
        index = operator.index(value)  # Python and NumPy integers, as integer() takes them
    except TypeError:
        index = None
    if index in (0, 1):
        return bool(index)
    raise errors[1](f"invalid {name} {describe(value)}: expected True or False (or 0 or 1)")


def string(name: str, value: Any, errors: Errors, *, choices: tuple = ()) -> str:
    """`value`, which must be a str; `choices` (when given) only names the valid values in the
    message of a non-str (the compiler checks the str values and lists them itself)."""
    if not isinstance(value, str):
        expected = "a str" + (", one of " + ", ".join(choices) if choices else "")
        raise errors[1](f"invalid {name} {describe(value)}: expected {expected}")
    return value


def path(name: str, value: Any, errors: Errors) -> str:
    """`value` (a str, bytes or os.PathLike) as a str path; refuses an empty path and an
    embedded NUL, at which the C layers would cut the path short (compiling or writing another
    file than the one named)."""
    try:
        text = os.fspath(value)
    except TypeError:
        raise errors[1](f"invalid {name} {describe(value)}: expected a path (str or "
                        f"os.PathLike)") from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if "\0" in text:
        raise errors[0](f"invalid {name} {text!r}: a path cannot contain a NUL character")
    if not text:
        raise errors[0](f"invalid {name} '': an empty path")
    return text
