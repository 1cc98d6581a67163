"""Reading and writing positions and moves: digits, cutechess drops, FEN, text boards.

Two move notations meet here.  Ours (and Pons') is a column digit ``1``-``7``;
a whole game is a digit string such as ``4453``.  cutechess' ``cfour`` variant
writes a drop ``P@d1``: file ``a``-``g`` is the column and the rank is the row
the stone lands on, so a drop is only legal onto the lowest empty cell.
"""

from __future__ import annotations

from .bits import H1, HEIGHT, WIDTH, popcount
from .board import Board, RulesError, from_stones

FILES = "abcdefg"
DIGITS = "0123456789"
STONES_PER_PLAYER = WIDTH * HEIGHT // 2
START_FEN = f"7/7/7/7/7/7[{'P' * STONES_PER_PLAYER}{'p' * STONES_PER_PLAYER}] w - - 0 1"


MAX_NUMBER_DIGITS = 30


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


def parse_move(token: str, pos: Board) -> int:
    """The 0-based column a single move token names: a digit or a drop ``P@d1``."""
    if len(token) == 1 and token in DIGITS:
        col = int(token) - 1
        if not 0 <= col < WIDTH:
            raise RulesError(f"move '{token}': column out of range (1-{WIDTH})")
        return col
    if len(token) == 4 and token[1] == "@":
        return _parse_drop(token, pos)
    raise RulesError(f"move '{token}': expected a column 1-{WIDTH} or a drop like P@d1")


def _parse_drop(token: str, pos: Board) -> int:
    """The column of a cutechess drop, checking that the stone lands where it says."""
    piece, file, rank = token[0], token[2], token[3]
    if piece != "P":
        raise RulesError(f"move '{token}': the piece must be an uppercase P")
    if file not in FILES:
        raise RulesError(f"move '{token}': file must be a-g")
    if rank not in DIGITS or not 1 <= int(rank) <= HEIGHT:
        raise RulesError(f"move '{token}': rank must be 1-{HEIGHT}")
    col = FILES.index(file)
    landing = pos.column_height(col) + 1
    if int(rank) != landing:
        where = f"rank {landing}" if landing <= HEIGHT else "nowhere: the column is full"
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


def parse_digits(text: str) -> Board:
    """The position after a Pons-style digit string such as ``4453`` (empty: start)."""
    if text and not is_digit_string(text):
        raise RulesError(f"'{text}' is not a string of column digits")
    return play_moves(Board(), [text] if text else [])


def format_move(col: int, pos: Board, drops: bool) -> str:
    """``col`` played in ``pos`` as a digit, or as a drop when ``drops`` is set."""
    if not drops:
        return str(col + 1)
    return f"P@{FILES[col]}{pos.column_height(col) + 1}"


def format_line(pos: Board, cols: list[int], drops: bool) -> list[str]:
    """A sequence of moves from ``pos`` in the chosen notation."""
    out = []
    for col in cols:
        out.append(format_move(col, pos, drops))
        pos = pos.play(col)
    return out


def parse_fen(fen: str) -> Board:
    """A position from a cutechess / Fairy-Stockfish ``cfour`` FEN.

    Refused: a malformed board, floating stones, counts no game can reach,
    a hand that disagrees with the board, the wrong side to move, or a game
    that is already over."""
    fields = fen.split()
    if len(fields) < 2:
        raise RulesError(f"FEN '{fen}': needs at least the board and the side to move")
    board, hand = _split_hand(fields[0])
    first, second = _parse_rows(board)
    if fields[1] not in ("w", "b"):
        raise RulesError(f"FEN side to move '{fields[1]}': expected w or b")
    if hand is not None:
        _check_hand(hand, first, second)
    return from_stones(first, second, fields[1] == "w")


def _split_hand(text: str) -> tuple[str, str | None]:
    """The board part of a FEN's first field and its ``[...]`` stones in hand, if any."""
    if "[" not in text:
        return text, None
    if not text.endswith("]") or text.count("[") != 1:
        raise RulesError(f"FEN board '{text}': the stones in hand must close with ']'")
    board, hand = text[:-1].split("[")
    return board, hand


def _parse_rows(board: str) -> tuple[int, int]:
    """Each player's stones from the ``/``-separated rows, top row first."""
    rows = board.split("/")
    if len(rows) != HEIGHT:
        raise RulesError(f"FEN board '{board}': expected {HEIGHT} rows, found {len(rows)}")
    first = second = 0
    for i, row in enumerate(rows):
        rank = HEIGHT - i
        col = 0
        for at, ch in enumerate(row):
            if ch in DIGITS:
                if ch == "0" or (at > 0 and row[at - 1] in DIGITS):
                    raise RulesError(f"FEN rank {rank} '{row}': an empty run is one digit 1-{WIDTH}")
                col += int(ch)
            elif ch in "Pp":
                if col < WIDTH:
                    bit = 1 << (col * H1 + rank - 1)
                    first, second = (first | bit, second) if ch == "P" else (first, second | bit)
                col += 1
            else:
                raise RulesError(f"FEN rank {rank} '{row}': unexpected '{ch}'")
        if col != WIDTH:
            raise RulesError(f"FEN rank {rank} '{row}': describes {col} cells, expected {WIDTH}")
    return first, second


def _check_hand(hand: str, first: int, second: int) -> None:
    """The stones in hand must be what is left of 21 each after the board's stones."""
    if set(hand) - set("Pp-"):
        raise RulesError(f"FEN stones in hand '{hand}': only P and p may appear")
    on_board = (popcount(first), popcount(second))
    in_hand = (hand.count("P"), hand.count("p"))
    for name, board_count, hand_count in zip(("P", "p"), on_board, in_hand):
        if board_count + hand_count != STONES_PER_PLAYER:
            raise RulesError(
                f"FEN stones in hand: {hand_count} '{name}' in hand and {board_count} on the board "
                f"do not make {STONES_PER_PLAYER}")


def to_fen(pos: Board) -> str:
    """The cutechess ``cfour`` FEN of ``pos``, stones in hand included."""
    rows = []
    for row in range(HEIGHT - 1, -1, -1):
        text, empty = "", 0
        for col in range(WIDTH):
            owner = pos.cell(col, row)
            if owner == 0:
                empty += 1
                continue
            text += (str(empty) if empty else "") + ("P" if owner == 1 else "p")
            empty = 0
        rows.append(text + (str(empty) if empty else ""))
    first = popcount(pos.first_player_stones())
    second = pos.stones - first
    hand = "P" * (STONES_PER_PLAYER - first) + "p" * (STONES_PER_PLAYER - second)
    side = "w" if pos.side_to_move == 0 else "b"
    return f"{'/'.join(rows)}[{hand}] {side} - - 0 {1 + pos.stones // 2}"


def render(pos: Board) -> str:
    """The board as text, top row first: ``X`` first player, ``O`` second, ``.`` empty."""
    symbols = ".XO"
    lines = [" ".join(symbols[pos.cell(col, row)] for col in range(WIDTH))
             for row in range(HEIGHT - 1, -1, -1)]
    lines.append(" ".join(str(col + 1) for col in range(WIDTH)))
    return "\n".join(lines)
