"""numba's typing of operators and builtins on integers and arrays, remembered per process.

numba types every operator of every compiled function anew: ``a & b`` on two
``int64`` asks each template registered for ``&`` in turn (its scalar cases
ranked one by one, numpy's, the ``int128`` ones of :mod:`.int128`), with and
without literal arguments, about a millisecond each; a board's kernel has two
thousand such calls, and they took a third of its first compilation
(docs/design.md, "What a first use compiles").  The answer depends on the
function and the argument types only, so it is kept per typing context once
found: for a function (not a compiled one: those keep their own signatures)
whose arguments are integers, booleans or arrays, without keywords, the types
whose typing is a pure function of the types.  A failure is not kept: numba
reports it as before.

Installed by :mod:`.jit` before anything of a kernel is compiled; one module
for every board's kernel (:mod:`.specialise` ``SHARED``).
"""

from __future__ import annotations

from typing import Any, Callable

from numba.core import types
from numba.core.typing.context import BaseContext

from .int128 import Int128Type

PLAIN_TYPES = (types.Integer, types.Boolean, types.Array, Int128Type)
MEMO = "_c4engine_typing_memo"


def remembering(resolve: Callable[..., Any]) -> Callable[..., Any]:
    """``BaseContext.resolve_function_type`` that keeps what ``resolve`` found for the
    calls described in the module docstring."""
    def resolve_function_type(self: BaseContext, func: Any, args: Any, kws: Any) -> Any:
        if kws or not _plain_function(func) or not all(isinstance(arg, PLAIN_TYPES) for arg in args):
            return resolve(self, func, args, kws)
        memo = self.__dict__.setdefault(MEMO, {})
        key = (func, tuple(args))
        signature = memo.get(key)
        if signature is None:
            signature = resolve(self, func, args, kws)
            if signature is not None:
                memo[key] = signature
        return signature

    resolve_function_type.remembers = True  # type: ignore[attr-defined]
    return resolve_function_type


def _plain_function(func: Any) -> bool:
    """An operator or builtin as numba's type of it, or itself (``operator.getitem``)."""
    return isinstance(func, types.Function) or (not isinstance(func, types.Type) and callable(func))


def remember_typing() -> None:
    """Make numba's typing contexts keep what they find (module docstring); once per process."""
    if not getattr(BaseContext.resolve_function_type, "remembers", False):
        BaseContext.resolve_function_type = remembering(BaseContext.resolve_function_type)  # type: ignore[method-assign]
