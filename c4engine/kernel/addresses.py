"""Calling a compiled function through the address of its machine code.

numba compiles every function in a module of its own and links the modules of
its callees into it, so a caller optimises and emits again all the machine code
it calls: the recursion (:func:`~c4engine.kernel.negamax.search_node`) and the
forced moves before it (:func:`~c4engine.kernel.negamax.negamax`) would be
emitted again in every driver that calls them, seconds at a board's first use.
Instead the drivers call them through their addresses, which the searcher
writes into the kernel's context (:mod:`.layout`); the call itself is the same
call instruction, made indirect, at a root only (docs/design.md, "What a first
use compiles").  The intrinsics that make such a call are defined beside each
function (their arguments are its own).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.core import cgutils

from .jit import jit


def compiled_address(dispatcher: Any, signature: Any) -> int:
    """Where the machine code of ``dispatcher``, compiled for ``signature``, lies in
    this process (numba's calling convention, see :func:`call_compiled`)."""
    compiled = dispatcher.overloads[signature.args]
    return int(compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name))


def call_compiled(context: Any, builder: Any, callee: Any, signature: Any, args: Any) -> Any:
    """Code calling ``callee`` (a function or a pointer to one, compiled for ``signature``)
    with numba's calling convention; an error it returns is passed on."""
    status, value = context.call_conv.call_function(builder, callee, signature.return_type, signature.args, args)
    with cgutils.if_unlikely(builder, status.is_error):
        context.call_conv.return_status_propagate(builder, status)
    return value


def call_at_address(context: Any, builder: Any, signature: Any, args: Any) -> Any:
    """Code calling the function compiled for ``signature`` at the address ``args[0]``
    with the rest of ``args``."""
    function_type = context.call_conv.get_function_type(signature.return_type, signature.args)
    return call_compiled(context, builder, builder.inttoptr(args[0], function_type.as_pointer()), signature, args[1:])


@jit
def address_in(mem: np.ndarray, slot: int) -> int:
    """The address in ``mem[slot]``; a context without it raises RuntimeError instead of
    jumping to 0."""
    if mem[slot] == 0:
        raise RuntimeError("the kernel context lacks the address of a compiled function (see layout)")
    return mem[slot]
