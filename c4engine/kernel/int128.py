"""128-bit integers in numba, for the kernel of boards past 64 bits.

numba has no integer wider than 64 bits, but LLVM has ``i128``, which x86-64
code keeps in a pair of registers (an ``and`` is two ``and``s, a shift by a
constant a ``shld`` and a ``shl``, an addition an ``add`` and an ``adc``).  So
this module gives numba a type, :data:`int128`, whose values are LLVM ``i128``,
with the operators the kernel uses on bitboards: ``& | ^ ~ + - *``, unary
minus, shifts by an ``int64``, comparisons and truth, each mixing freely with
``int64`` (which is widened with its sign, as the kernel's ``-1`` and ``x & -x``
need).  The kernel's source then stays one source for every board: a board
whose bitboard needs more than 64 bits compiles the same functions with
``int128`` positions (docs/design.md, "Boards past 64 bits").

Values cross into Python as :class:`Wide` (an ``int`` that numba types as
``int128``) and come back as plain ``int``; :func:`popcount`, :func:`low_word`,
:func:`high_word` and :func:`join_words` are what the kernel needs besides the
operators.  Shifts are arithmetic, as numba's on ``int64``, and by fewer than
128 places (the kernel never shifts further).
"""

from __future__ import annotations

import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import lower_builtin, lower_cast, lower_constant
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import NativeValue, box, intrinsic, models, register_model, typeof_impl, unbox

I128 = ir.IntType(128)
I64 = ir.IntType(64)
_ALL_BITS = (1 << 128) - 1


class Int128Type(types.Type):
    """numba's type of a 128-bit two's-complement integer; an ``int64`` (or any
    integer) unifies with it by widening."""

    def __init__(self) -> None:
        super().__init__(name="int128")

    def unify(self, typingctx, other):  # type: ignore[no-untyped-def]
        if isinstance(other, (types.Integer, Int128Type)):
            return self
        return None

    def can_convert_from(self, typingctx, other):  # type: ignore[no-untyped-def]
        if isinstance(other, types.Integer):
            return types.Conversion.safe
        return None


int128 = Int128Type()


@register_model(Int128Type)
class Int128Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):  # type: ignore[no-untyped-def]
        super().__init__(dmm, fe_type, I128)


class Wide(int):
    """A Python ``int`` that numba passes to compiled code as :data:`int128` (its low
    128 bits); a board constant or a position's bits on a board past 64 bits."""

    __slots__ = ()


@typeof_impl.register(Wide)
def _typeof_wide(value, context):  # type: ignore[no-untyped-def]
    return int128


def _signed(value: int) -> int:
    """``value``'s low 128 bits as a signed number, as LLVM reads a constant."""
    value &= _ALL_BITS
    return value - (1 << 128) if value >> 127 else value


@lower_constant(Int128Type)
def _constant(context, builder, ty, value):  # type: ignore[no-untyped-def]
    return ir.Constant(I128, _signed(int(value)))


@lower_cast(types.Integer, Int128Type)
def _widen(context, builder, fromty, toty, value):  # type: ignore[no-untyped-def]
    return builder.sext(value, I128) if fromty.signed else builder.zext(value, I128)


@lower_cast(types.IntegerLiteral, Int128Type)
def _widen_literal(context, builder, fromty, toty, value):  # type: ignore[no-untyped-def]
    return ir.Constant(I128, _signed(fromty.literal_value))


def _is_integer(ty: types.Type) -> bool:
    return isinstance(ty, (types.Integer, Int128Type))


def _mixes_in_int128(args: tuple[types.Type, ...]) -> bool:
    return all(_is_integer(arg) for arg in args) and any(isinstance(arg, Int128Type) for arg in args)


class _Binary(AbstractTemplate):
    """``int128 op int128``, either side possibly a narrower integer (widened)."""

    def generic(self, args, kws):  # type: ignore[no-untyped-def]
        if len(args) == 2 and not kws and _mixes_in_int128(args):
            return signature(int128, int128, int128)
        return None


class _Shift(AbstractTemplate):
    """``int128 << n`` and ``int128 >> n`` for an integer ``n``."""

    def generic(self, args, kws):  # type: ignore[no-untyped-def]
        if len(args) == 2 and not kws and isinstance(args[0], Int128Type) and isinstance(args[1], types.Integer):
            return signature(int128, int128, types.int64)
        return None


class _Compare(AbstractTemplate):
    def generic(self, args, kws):  # type: ignore[no-untyped-def]
        if len(args) == 2 and not kws and _mixes_in_int128(args):
            return signature(types.boolean, int128, int128)
        return None


class _Unary(AbstractTemplate):
    def generic(self, args, kws):  # type: ignore[no-untyped-def]
        if len(args) == 1 and not kws and isinstance(args[0], Int128Type):
            return signature(int128, int128)
        return None


class _Truth(AbstractTemplate):
    def generic(self, args, kws):  # type: ignore[no-untyped-def]
        if len(args) == 1 and not kws and isinstance(args[0], Int128Type):
            return signature(types.boolean, int128)
        return None


def _register_binary(operators: tuple, emit) -> None:  # type: ignore[no-untyped-def]
    for op in operators:
        infer_global(op)(type(f"_Binary_{op.__name__}", (_Binary,), {"key": op}))
        lower_builtin(op, Int128Type, Int128Type)(
            lambda context, builder, sig, args, emit=emit: emit(builder, *args))


_register_binary((operator.and_, operator.iand), lambda builder, a, b: builder.and_(a, b))
_register_binary((operator.or_, operator.ior), lambda builder, a, b: builder.or_(a, b))
_register_binary((operator.xor, operator.ixor), lambda builder, a, b: builder.xor(a, b))
_register_binary((operator.add, operator.iadd), lambda builder, a, b: builder.add(a, b))
_register_binary((operator.sub, operator.isub), lambda builder, a, b: builder.sub(a, b))
_register_binary((operator.mul, operator.imul), lambda builder, a, b: builder.mul(a, b))

for _op, _emit in ((operator.lshift, ir.IRBuilder.shl), (operator.ilshift, ir.IRBuilder.shl),
                   (operator.rshift, ir.IRBuilder.ashr), (operator.irshift, ir.IRBuilder.ashr)):
    infer_global(_op)(type(f"_Shift_{_op.__name__}", (_Shift,), {"key": _op}))
    lower_builtin(_op, Int128Type, types.Integer)(
        lambda context, builder, sig, args, emit=_emit: emit(builder, args[0], builder.zext(args[1], I128)))

for _op, _predicate in ((operator.eq, "=="), (operator.ne, "!="), (operator.lt, "<"), (operator.le, "<="),
                        (operator.gt, ">"), (operator.ge, ">=")):
    infer_global(_op)(type(f"_Compare_{_op.__name__}", (_Compare,), {"key": _op}))
    lower_builtin(_op, Int128Type, Int128Type)(
        lambda context, builder, sig, args, predicate=_predicate: builder.icmp_signed(predicate, *args))

infer_global(operator.neg)(type("_Unary_neg", (_Unary,), {"key": operator.neg}))
lower_builtin(operator.neg, Int128Type)(lambda context, builder, sig, args: builder.neg(args[0]))
infer_global(operator.invert)(type("_Unary_invert", (_Unary,), {"key": operator.invert}))
lower_builtin(operator.invert, Int128Type)(lambda context, builder, sig, args: builder.not_(args[0]))
infer_global(bool)(type("_Truth_bool", (_Truth,), {"key": bool}))
lower_builtin(bool, Int128Type)(
    lambda context, builder, sig, args: builder.icmp_signed("!=", args[0], ir.Constant(I128, 0)))


def _as_int128(context, builder, ty, value):  # type: ignore[no-untyped-def]
    return value if isinstance(ty, Int128Type) else context.cast(builder, value, ty, int128)


@intrinsic
def popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Set bits of an ``int128`` (or ``int64``), as an ``int64``: LLVM's ``ctpop``."""
    if not _is_integer(x):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        wide = _as_int128(context, builder, sig.args[0], args[0])
        count = builder.call(builder.module.declare_intrinsic("llvm.ctpop", [I128]), [wide])
        return builder.trunc(count, I64)
    return signature(types.int64, x), codegen


@intrinsic
def low_word(typingctx, x):  # type: ignore[no-untyped-def]
    """Bits 0-63 of an ``int128`` as an ``int64`` (an ``int64`` unchanged)."""
    if not _is_integer(x):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        return builder.trunc(_as_int128(context, builder, sig.args[0], args[0]), I64)
    return signature(types.int64, x), codegen


@intrinsic
def high_word(typingctx, x):  # type: ignore[no-untyped-def]
    """Bits 64-127 of an ``int128`` as an ``int64`` (an ``int64``'s sign)."""
    if not _is_integer(x):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        wide = _as_int128(context, builder, sig.args[0], args[0])
        return builder.trunc(builder.ashr(wide, ir.Constant(I128, 64)), I64)
    return signature(types.int64, x), codegen


@intrinsic
def join_words(typingctx, low, high):  # type: ignore[no-untyped-def]
    """The ``int128`` whose bits 0-63 are ``low`` and 64-127 ``high`` (two ``int64``)."""
    if not (isinstance(low, types.Integer) and isinstance(high, types.Integer)):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        low_bits = builder.zext(args[0], I128)
        high_bits = builder.shl(builder.zext(args[1], I128), ir.Constant(I128, 64))
        return builder.or_(low_bits, high_bits)
    return signature(int128, types.int64, types.int64), codegen


def _long_function(c, name: str, ret: ir.Type, arg: ir.Type):  # type: ignore[no-untyped-def]
    return c.pyapi._get_function(ir.FunctionType(ret, [arg]), name=name)


@unbox(Int128Type)
def _unbox(typ, obj, c):  # type: ignore[no-untyped-def]
    """A Python ``int``'s low 128 bits (``int(obj) >> 64`` for the high word)."""
    as_mask = _long_function(c, "PyLong_AsUnsignedLongLongMask", I64, c.pyapi.pyobj)
    low = c.builder.call(as_mask, [obj])
    sixty_four = c.pyapi.long_from_longlong(ir.Constant(I64, 64))
    high_obj = c.pyapi.number_rshift(obj, sixty_four)
    high = c.builder.call(as_mask, [high_obj])
    c.pyapi.decref(high_obj)
    c.pyapi.decref(sixty_four)
    value = c.builder.or_(c.builder.zext(low, I128), c.builder.shl(c.builder.zext(high, I128), ir.Constant(I128, 64)))
    return NativeValue(value, is_error=cgutils.false_bit)


@box(Int128Type)
def _box(typ, value, c):  # type: ignore[no-untyped-def]
    """An ``int128`` as a Python ``int``, signed."""
    low = c.pyapi.long_from_ulonglong(c.builder.trunc(value, I64))
    high = c.pyapi.long_from_longlong(c.builder.trunc(c.builder.ashr(value, ir.Constant(I128, 64)), I64))
    sixty_four = c.pyapi.long_from_longlong(ir.Constant(I64, 64))
    shifted = c.pyapi.number_lshift(high, sixty_four)
    result = c.pyapi.number_or(shifted, low)
    for temporary in (low, high, sixty_four, shifted):
        c.pyapi.decref(temporary)
    return result
