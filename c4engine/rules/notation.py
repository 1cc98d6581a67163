"""Reading and writing positions and moves: digits, cutechess drops, FEN, text boards.

Every function reads the board's shape from the position it is given (``pos.geometry``)
or from an explicit :class:`~c4engine.geometry.Geometry`; none assumes 7x6.

Two move notations meet here.  Ours (and Pons') is a column digit ``1``..``W``; a
whole game is a digit string such as ``4453``.  Digits name at most 9 columns: on a
wider board a digit string would be ambiguous (is ``12`` one move or two?), so
there moves are drops only and digits are refused.  cutechess' and
Fairy-Stockfish's drop ``P@d1`` names the file (``a``, ``b``, ... one letter per
column, so at most 26 columns) and the rank the stone lands on (``1`` is the
bottom, ``10`` and up on tall boards), so a drop is only legal onto the lowest
empty cell.
"""

from __future__ import annotations

from functools import lru_cache
from string import ascii_lowercase

from ..geometry import STANDARD, Geometry, GeometryError
from .board import Board, RulesError, from_stones

FILES = ascii_lowercase  # file letters in order; a board of W columns uses the first W
DIGITS = "0123456789"
MAX_DIGIT_COLUMNS = 9  # column digits 1-9: wider boards use drops only


MAX_NUMBER_DIGITS = 30


def check_writable(geometry: Geometry) -> None:
    """Refuse a board whose drops cannot be written: one file letter per column."""
    if geometry.width > len(FILES):
        raise GeometryError(
            f"board {geometry}: drops name files a-z, so at most {len(FILES)} columns")


def parse_board(text: str) -> Geometry:
    """A board name as every interface reads it (each tool's ``--board``, the page,
    ``cfour-WxH`` variant names): ``WxH`` or ``WxHkK`` in ASCII digits, a board the
    bitboard holds and whose drops can be written; GeometryError naming the limit."""
    geometry = Geometry.parse(text)
    check_writable(geometry)
    return geometry


def uses_digits(geometry: Geometry) -> bool:
    """Whether column digits can name every column (at most 9 columns)."""
    return geometry.width <= MAX_DIGIT_COLUMNS


@lru_cache(maxsize=256)
def start_fen(geometry: Geometry = STANDARD) -> str:
    """The empty board's FEN, as cutechess and Fairy-Stockfish write it: the first
    player holds the larger half of the stones when the cell count is odd.  Kept
    per board: a variants file of thousands of sections asks for it per section."""
    return to_fen(Board(geometry=geometry))


def hand_sizes(geometry: Geometry) -> tuple[int, int]:
    """Stones each player holds at the start: together, one per cell."""
    return (geometry.cells + 1) // 2, geometry.cells // 2


def is_digit_string(text: str) -> bool:
    """Whether ``text`` is made of ASCII digits only (``str.isdigit`` also takes ``²``)."""
    return bool(text) and all(ch in DIGITS for ch in text)


def parse_int(text: str) -> int:
    """A whole number written as ASCII digits with an optional leading minus: the one
    number syntax of the protocol.  Python's ``int`` also takes ``1_0``, ``+2``,
    blanks and other scripts' digits (``٣``), which no GUI sends on purpose; callers
    check the range (and refuse negatives where they mean nothing)."""
    digits = text[1:] if text.startswith("-") else text
    if not is_digit_string(digits):
        raise ValueError(f"'{text}' is not a whole number")
    if len(digits) > MAX_NUMBER_DIGITS:
        raise ValueError(f"'{text[:12]}...' has too many digits")
    return int(text)


def _count(text: str) -> int | None:
    """A positive count written without a leading zero, or None."""
    if not is_digit_string(text) or text[0] == "0" or len(text) > 3:
        return None
    return int(text)


def parse_move(token: str, pos: Board) -> int:
    """The 0-based column a single move token names: a digit or a drop ``P@d1``."""
    geometry = pos.geometry
    width = geometry.width
    if len(token) == 1 and token in DIGITS:
        if not uses_digits(geometry):
            raise RulesError(f"move '{token}': on a board of {width} columns moves are drops like P@a1")
        col = int(token) - 1
        if not 0 <= col < width:
            raise RulesError(f"move '{token}': column out of range (1-{width})")
        return col
    if len(token) >= 4 and token[1] == "@":
        return _parse_drop(token, pos)
    if not uses_digits(geometry):
        raise RulesError(f"move '{token}': expected a drop like P@a1")
    raise RulesError(f"move '{token}': expected a column 1-{width} or a drop like P@d1")


def _parse_drop(token: str, pos: Board) -> int:
    """The column of a cutechess drop, checking that the stone lands where it says."""
    geometry = pos.geometry
    piece, file, rank_text = token[0], token[2], token[3:]
    last_file = FILES[geometry.width - 1]
    if piece != "P":
        raise RulesError(f"move '{token}': the piece must be an uppercase P")
    if file not in FILES[:geometry.width]:
        raise RulesError(f"move '{token}': file must be a-{last_file}")
    rank = _count(rank_text)
    if rank is None or rank > geometry.height:
        raise RulesError(f"move '{token}': rank must be 1-{geometry.height}")
    col = FILES.index(file)
    landing = pos.column_height(col) + 1
    if rank != landing:
        where = f"rank {landing}" if landing <= geometry.height else "nowhere: the column is full"
        raise RulesError(f"move '{token}': a stone dropped in file {file} lands on {where}")
    return col


def play_moves(pos: Board, tokens: list[str]) -> Board:
    """``pos`` after every move of ``tokens``; a token may be a digit string (``4453``)."""
    for token in tokens:
        singles = list(token) if is_digit_string(token) else [token]
        for single in singles:
            try:
                pos = pos.play(parse_move(single, pos))
            except RulesError as err:
                msg = str(err)
                raise RulesError(msg if msg.startswith("move") else f"move '{single}': {msg}") from None
    return pos


def parse_digits(text: str, geometry: Geometry = STANDARD) -> Board:
    """The position after a Pons-style digit string such as ``4453`` (empty: start)."""
    if text and not is_digit_string(text):
        raise RulesError(f"'{text}' is not a string of column digits")
    return play_moves(Board(geometry=geometry), [text] if text else [])


def format_move(col: int, pos: Board, drops: bool) -> str:
    """``col`` played in ``pos`` as a digit, or as a drop when ``drops`` is set or the
    board is too wide for digits."""
    if not drops and uses_digits(pos.geometry):
        return str(col + 1)
    return f"P@{FILES[col]}{pos.column_height(col) + 1}"


def format_line(pos: Board, cols: list[int], drops: bool) -> list[str]:
    """A sequence of moves from ``pos`` in the chosen notation."""
    out = []
    for col in cols:
        out.append(format_move(col, pos, drops))
        pos = pos.play(col)
    return out


def parse_fen(fen: str, geometry: Geometry = STANDARD) -> Board:
    """A position on ``geometry`` from a cutechess / Fairy-Stockfish FEN.

    Refused: a malformed board or one of another size, floating stones, counts
    no game can reach, a hand that disagrees with the board, the wrong side to
    move, or a game that is already over."""
    fields = fen.split()
    if len(fields) < 2:
        raise RulesError(f"FEN '{fen}': needs at least the board and the side to move")
    board, hand = _split_hand(fields[0])
    first, second = _parse_rows(board, geometry)
    if fields[1] not in ("w", "b"):
        raise RulesError(f"FEN side to move '{fields[1]}': expected w or b")
    if hand is not None:
        _check_hand(hand, first, second, geometry)
    return from_stones(first, second, fields[1] == "w", geometry=geometry)


def _split_hand(text: str) -> tuple[str, str | None]:
    """The board part of a FEN's first field and its ``[...]`` stones in hand, if any."""
    if "[" not in text:
        return text, None
    if not text.endswith("]") or text.count("[") != 1:
        raise RulesError(f"FEN board '{text}': the stones in hand must close with ']'")
    board, hand = text[:-1].split("[")
    return board, hand


def _parse_rows(board: str, geometry: Geometry) -> tuple[int, int]:
    """Each player's stones from the ``/``-separated rows, top row first.  A run of
    empty cells is a number without a leading zero, all its digits together (``10``
    on a wide board, as Fairy-Stockfish writes it; ``16`` on 7x6 is 16 cells, too many)."""
    width, height = geometry.width, geometry.height
    rows = board.split("/")
    if len(rows) != height:
        raise RulesError(f"FEN board '{board}': expected {height} rows, found {len(rows)}")
    first = second = 0
    for i, row in enumerate(rows):
        rank = height - i
        col, at = 0, 0
        while at < len(row):
            ch = row[at]
            if ch in DIGITS:
                end = at
                while end < len(row) and row[end] in DIGITS:
                    end += 1
                run = _count(row[at:end])
                if run is None:
                    raise RulesError(f"FEN rank {rank} '{row}': an empty run is a number 1-{width} "
                                     f"with no leading 0")
                col, at = col + run, end
                continue
            if ch not in "Pp":
                raise RulesError(f"FEN rank {rank} '{row}': unexpected '{ch}'")
            if col < width:
                bit = 1 << (col * geometry.h1 + rank - 1)
                first, second = (first | bit, second) if ch == "P" else (first, second | bit)
            col, at = col + 1, at + 1
        if col != width:
            raise RulesError(f"FEN rank {rank} '{row}': describes {col} cells, expected {width}")
    return first, second


def _check_hand(hand: str, first: int, second: int, geometry: Geometry) -> None:
    """The stones in hand must be what is left of each player's share after the board's."""
    if set(hand) - set("Pp-"):
        raise RulesError(f"FEN stones in hand '{hand}': only P and p may appear")
    on_board = (first.bit_count(), second.bit_count())
    in_hand = (hand.count("P"), hand.count("p"))
    for name, share, board_count, hand_count in zip(("P", "p"), hand_sizes(geometry), on_board, in_hand):
        if board_count + hand_count != share:
            raise RulesError(
                f"FEN stones in hand: {hand_count} '{name}' in hand and {board_count} on the board "
                f"do not make {share}")


def to_fen(pos: Board) -> str:
    """The FEN of ``pos`` as cutechess and Fairy-Stockfish write it, stones in hand included."""
    geometry = pos.geometry
    rows = []
    for row in range(geometry.height - 1, -1, -1):
        text, empty = "", 0
        for col in range(geometry.width):
            owner = pos.cell(col, row)
            if owner == 0:
                empty += 1
                continue
            text += (str(empty) if empty else "") + ("P" if owner == 1 else "p")
            empty = 0
        rows.append(text + (str(empty) if empty else ""))
    first = pos.first_player_stones().bit_count()
    second = pos.stones - first
    first_share, second_share = hand_sizes(geometry)
    hand = "P" * (first_share - first) + "p" * (second_share - second)
    side = "w" if pos.side_to_move == 0 else "b"
    return f"{'/'.join(rows)}[{hand}] {side} - - 0 {1 + pos.stones // 2}"


def render(pos: Board) -> str:
    """The board as text, top row first: ``X`` first player, ``O`` second, ``.`` empty;
    below, the column names (digits up to 9 columns, file letters beyond)."""
    geometry = pos.geometry
    symbols = ".XO"
    lines = [" ".join(symbols[pos.cell(col, row)] for col in range(geometry.width))
             for row in range(geometry.height - 1, -1, -1)]
    names = [str(col + 1) for col in range(geometry.width)] if uses_digits(geometry) \
        else list(FILES[:geometry.width])
    lines.append(" ".join(names))
    return "\n".join(lines)
