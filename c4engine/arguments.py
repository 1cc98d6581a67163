"""How the public API reads the values it is given: one rule for ``Position``,
``solve``, ``analyse``, ``best_move`` and the ConnectX agent.

Whatever is refused raises ``ValueError`` naming the value, whatever its type
(:class:`c4engine.IllegalMoveError`, a ``ValueError``, where the value is a
position, a move or a board), so one ``except ValueError`` catches every bad
argument and nothing of the search underneath ever leaks out.

- A whole number (a column, a depth, a board cell, a ConnectX size or mark) is
  an ``int`` or one of numpy's integers; ``True``, ``4.0``, ``nan`` and ``"4"``
  are not whole numbers.
- A flag (``weak``) is ``True`` or ``False``.
- A time is a real number of seconds above 0; ``inf``, and any time of
  :data:`NO_LIMIT_SECONDS` or more, means no time limit.
- A file path (``use_book``) is a ``str`` or an ``os.PathLike`` that gives one;
  ``bytes`` paths are not taken.
- A command line (``review``'s engine) is a ``str`` with something in it, or a
  non-empty list or tuple of ``str``.
"""

from __future__ import annotations

import numbers
import operator
import os

NO_LIMIT_SECONDS = 10**9  # about 32 years: beyond what a timer can wait for on every platform


def is_whole_number(value: object) -> bool:
    """Whether ``value`` is a whole number by the rule above."""
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def whole_number(value: object, name: str, least: int) -> int:
    """``value`` as an int of at least ``least``, or ValueError naming ``name`` and the value."""
    if not is_whole_number(value) or operator.index(value) < least:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a whole number of at least {least}, got {value!r}")
    return operator.index(value)  # type: ignore[arg-type]


def whole_number_from_to(value: object, name: str, least: int, most: int) -> int:
    """``value`` as an int from ``least`` to ``most``, or ValueError naming ``name`` and the value."""
    if not is_whole_number(value) or not least <= operator.index(value) <= most:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a whole number from {least} to {most}, got {value!r}")
    return operator.index(value)  # type: ignore[arg-type]


def flag(value: object, name: str) -> bool:
    """``value`` if it is True or False, else ValueError naming ``name`` and the value."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def seconds(value: object, name: str) -> float | None:
    """``value`` as a time limit in seconds, None for no limit (``inf`` or at least
    :data:`NO_LIMIT_SECONDS`); ValueError for what is not a number above 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"{name} must be a number of seconds above 0, got {value!r}")
    if value >= NO_LIMIT_SECONDS:
        return None
    return float(value)


def file_path(value: object, name: str) -> str:
    """``value`` as a path string, or ValueError naming ``name`` and the value: the
    file layer underneath would raise TypeError for another type."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a str or os.PathLike path, got {value!r}")
    return text


def command_line(value: object, name: str) -> str | list[str]:
    """``value`` as a command line to start, or ValueError naming ``name`` and the value:
    starting the process would raise TypeError for an int or bytes in it."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(word, str) for word in value):
        return list(value)
    raise ValueError(f"{name} must be a command line: a str or a list of str, got {value!r}")
