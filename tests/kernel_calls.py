"""The kernel's internal functions called from a test.

They are compiled without a Python wrapper (``c4engine.kernel.jit.Internal``):
called from Python they raise TypeError, so a test calls one through a compiled
function that passes its arguments on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def compiled_caller(function: Any) -> Callable[..., Any]:
    """A compiled function that calls the kernel function ``function`` with its arguments."""
    return numba.njit(lambda *args: function(*args))  # type: ignore[no-any-return]
