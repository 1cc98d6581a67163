"""numba's ``int128`` (c4engine/kernel/int128.py), which the kernel of boards past 64 bits
runs on: every operator against Python's own integers, on values that straddle the
two words, and the way values cross into Python and back."""

from __future__ import annotations

import operator
import random

import numba
import pytest

from c4engine.kernel.int128 import Wide, high_word, join_words, low_word, popcount

MASK = (1 << 128) - 1


def signed(value: int) -> int:
    value &= MASK
    return value - (1 << 128) if value >> 127 else value


@numba.njit
def binary(a, b):  # type: ignore[no-untyped-def]
    return a & b, a | b, a ^ b, a + b, a - b, a * b


@numba.njit
def with_int64(a, small):  # type: ignore[no-untyped-def]
    """Each operator with an int64 on either side, and in place."""
    c = a
    c &= small
    d = a
    d |= small
    return small & a, a | small, small ^ a, a + small, small - a, c, d, a & -a, ~a


@numba.njit
def shifts(a, n):  # type: ignore[no-untyped-def]
    b = a
    b <<= n
    return a << n, a >> n, b


@numba.njit
def compare(a, b):  # type: ignore[no-untyped-def]
    return a == b, a != b, a < b, a <= b, a > b, a >= b, bool(a), a == 0


@numba.njit
def words(a):  # type: ignore[no-untyped-def]
    return popcount(a), low_word(a), high_word(a), join_words(low_word(a), high_word(a))


@numba.njit
def unified(a, flag):  # type: ignore[no-untyped-def]
    """A variable first given an int64 then an int128 (numba unifies them)."""
    x = -1
    if flag:
        x &= a
    return x


@pytest.fixture(scope="module")
def values() -> list[int]:
    rng = random.Random(128)
    picks = [0, 1, (1 << 64) - 1, 1 << 64, (1 << 72) - 1, 1 << 126, (1 << 127) - 1]
    return picks + [rng.getrandbits(rng.choice((60, 64, 72, 100, 126))) for _ in range(40)]


def test_binary_operators_are_pythons(values: list[int]) -> None:
    for a, b in zip(values, reversed(values)):
        expected = tuple(signed(op(a, b)) for op in (operator.and_, operator.or_, operator.xor,
                                                       operator.add, operator.sub, operator.mul))
        assert binary(Wide(a), Wide(b)) == expected


def test_an_int64_widens_with_its_sign(values: list[int]) -> None:
    for a in values:
        for small in (0, 5, -1, -(1 << 40), (1 << 62) + 3):
            expected = (small & a, a | small, small ^ a, a + small, small - a, a & small, a | small, a & -a, ~a)
            assert with_int64(Wide(a), small) == tuple(signed(value) for value in expected)


def test_shifts_are_arithmetic_as_on_int64(values: list[int]) -> None:
    for a in values:
        for n in (0, 1, 9, 63, 64, 65, 100):
            assert shifts(Wide(a), n) == (signed(a << n), signed(a) >> n, signed(a << n))


def test_comparisons_and_truth(values: list[int]) -> None:
    for a, b in zip(values, values[1:] + values[:1]):
        assert compare(Wide(a), Wide(b)) == (a == b, a != b, a < b, a <= b, a > b, a >= b, a != 0, a == 0)


def test_words_popcount_and_the_round_trip(values: list[int]) -> None:
    for a in values:
        low = a & ((1 << 64) - 1)
        expected_low = low - (1 << 64) if low >> 63 else low
        assert words(Wide(a)) == (a.bit_count(), expected_low, a >> 64, a)


def test_an_int64_variable_unifies_with_int128() -> None:
    assert unified(Wide(1 << 100 | 6), True) == 1 << 100 | 6
    assert unified(Wide(1 << 100), False) == -1
