"""In-process solving and search: ``solve``, ``analyse``, ``best_move``, ``warm_up``;
and ``review``, which scores games through an engine process.

These run the engine's own searcher inside the calling process, with no
engine process and no protocol in between, on the board of the position they
are given.  Each board gets one searcher (one search thread, the engine's
default transposition table and, on the 7x6 four-in-a-row board only, the
opening book, as the engine process starts with them), built on the first call
on that board and shared by every later call on it, because building it is the
expensive part: numba compiles the search kernel for the board (or loads it
from its cache) and the 12-stone book is read, together a few seconds.  The
searchers of the last :data:`KEPT_BOARDS` boards used are kept (16 MB of table
each), so alternating between a few boards pays that once per board.  On a
board whose kernel has never been compiled, :func:`solve` and :func:`analyse`
(without a node cap) do not wait for it: the kernel compiles in a child
process while the interpreted tier solves the position in plain Python, and a
position it finishes first is answered at once (docs/design.md, "The
interpreted tier"); a harder one waits for the kernel, as before.

This module imports the search only inside its functions, so that
``import c4engine`` stays light (the protocol process imports the package and
must answer ``uci`` at once).

The functions are safe to call from several threads: each board has a lock
that lets one call at a time use its searcher, so calls on the same board from
other threads wait for it, and calls on other boards do not: a board whose
kernel is compiling holds up the calls on that board only.

Bad arguments follow the one rule of :mod:`c4engine.arguments`: each raises
``ValueError`` naming the value (:class:`IllegalMoveError` for a position).
"""

from __future__ import annotations

import random
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from .arguments import file_path, flag, seconds, whole_number, whole_number_from_to
from .geometry import STANDARD, Geometry
from .position import IllegalMoveError, Position, board_shape
from .search.report import SolveLimitReached

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .kernel.book import OpeningBook
    from .kernel.built_book import BuiltBook
    from .rules.board import Board
    from .search.kernel_build import InterpretedTier
    from .search.searcher import Searcher
    from .reviewer.verdicts import GameReview

KEPT_BOARDS = 4
T = TypeVar("T")
_level_rng = random.Random()
FULL_STRENGTH = 20  # search.levels' FULL_STRENGTH, which this module does not import at load time


@dataclass
class _Board:
    """One board's searcher (None until built), its interpreted tier (None until a
    solve asks it) and the lock its calls take."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    searcher: Searcher | None = None
    tier: InterpretedTier | None = None
    opening_book: OpeningBook | None = None  # the searcher's, kept aside while a level searches
    with_books: bool = True  # whether the searcher holds its books (at full strength) or not (a level)


_boards_lock = threading.Lock()  # for the two below only: held by no build and no search
_boards: OrderedDict[Geometry, _Board] = OrderedDict()  # least recently used first
_in_play = STANDARD  # the board of the last call: use_book's
_built_book: BuiltBook | None = None  # from use_book; searched with on its own board only


def warm_up(width: int = STANDARD.width, height: int = STANDARD.height,
            connect: int = STANDARD.connect) -> None:
    """Build that board's searcher (as ``Position()`` takes it: 7x6, four in
    a row, unless told otherwise) rather than in the first call that needs it.

    The first call of :func:`solve`, :func:`analyse` or :func:`best_move` on a
    board pays for it anyway (a few seconds: the numba kernel is compiled for the
    board or loaded from its cache, and on 7x6 the opening book is read); calling
    this first moves that cost to a moment of your choosing, for example before a
    clock starts.  Later calls on that board return at once.  Raises
    :class:`IllegalMoveError` for a board the engine cannot play."""
    with _searching(board_shape(width, height, connect)):
        pass


def is_warm(width: int, height: int, connect: int) -> bool:
    """Whether that board's searcher is built, so that :func:`warm_up` would return at
    once and a call on the board starts searching at once (unless another call on
    it runs).  Never waits; False for a board the engine cannot play.  The Kaggle
    agent asks it, to answer without waiting for a board still compiling."""
    try:
        geometry = board_shape(width, height, connect)
    except IllegalMoveError:
        return False
    with _boards_lock:
        board = _boards.get(geometry)
        return board is not None and board.searcher is not None


@contextmanager
def _searching(geometry: Geometry, full_strength: bool = True) -> Iterator[Searcher]:
    """The searcher of ``geometry``'s board, built on first use, for the calling thread
    alone while the block runs: with its books at full strength (the book of
    :func:`use_book` on its board), without them at a level."""
    board = _board(geometry)
    with board.lock:
        if board.searcher is None:
            if board.tier is not None:
                board.tier.wait_for_kernel()
            board.searcher, board.opening_book = _new_searcher(geometry)
            board.with_books = True
        _give_books(board, full_strength)
        yield board.searcher


def _before_the_searcher(pos: Board, ask: Callable[[InterpretedTier], T | None]) -> T | None:
    """What ``ask`` gets from the interpreted tier of ``pos``'s board, while the board's
    searcher is not built: on a board whose kernel is not compiled yet, exact
    solves in plain Python while the whole kernel compiles in a child process
    (:mod:`c4engine.search.kernel_build`), so that a first call on a new board
    that needs few nodes is answered at once; None once the searcher is built
    or its kernel is ready, and the searcher answers."""
    from .search.kernel_build import InterpretedTier
    board = _board(pos.geometry)
    with board.lock:
        if board.searcher is not None:
            return None
        if board.tier is None:
            board.tier = InterpretedTier(pos.geometry, whole=True)
        return ask(board.tier)


def _board(geometry: Geometry) -> _Board:
    """``geometry``'s entry, made the board in play and the most recently used; the
    least recently used beyond :data:`KEPT_BOARDS` are dropped (a call still running
    on one keeps its searcher until it ends)."""
    global _in_play
    with _boards_lock:
        board = _boards.setdefault(geometry, _Board())
        _boards.move_to_end(geometry)
        while len(_boards) > KEPT_BOARDS:
            _boards.popitem(last=False)
        _in_play = geometry
        return board


def _new_searcher(geometry: Geometry) -> tuple[Searcher, OpeningBook | None]:
    """A searcher for ``geometry``, warmed up, and its opening book (7x6 only)."""
    from .kernel.book import OpeningBook
    from .search.searcher import Searcher
    # stacklevel 7: the caller of the public function, through the context manager
    # _searching (two frames), this function and load_or_empty
    book = OpeningBook.load_or_empty(
        lambda message: warnings.warn(f"c4engine: {message}", stacklevel=7)) \
        if geometry == STANDARD else None
    searcher = Searcher(book=book, geometry=geometry)
    searcher.warm_up()
    return searcher, book


def _give_books(board: _Board, full_strength: bool) -> None:
    """Give ``board``'s searcher its books back at full strength, or take them away for
    a level, which knows nothing past its depth, as the engine's ``Skill Level``
    does; and the book of :func:`use_book` where it is for this board (each change
    empties the table, whose entries hold the books' scores)."""
    from .kernel.book import OpeningBook
    searcher = board.searcher
    assert searcher is not None
    if full_strength != board.with_books:
        book = board.opening_book if full_strength and board.opening_book is not None else OpeningBook.empty()
        searcher.set_book(book)
        board.with_books = full_strength
    wanted = _built_book_for(searcher.geometry) if full_strength else None
    if searcher.built_book is not wanted:
        searcher.set_built_book(wanted)


def _built_book_for(geometry: Geometry) -> BuiltBook | None:
    """The built book a full-strength search on ``geometry`` probes: :func:`use_book`'s
    on its board, else on 7x6 the package's book of every 4-stone position, as the
    engine's ``OwnBook`` does (through the 12-stone book alone a 1-stone position
    needs some 30,000 nodes, more than a move of milliseconds has)."""
    from .search.own_book import own_built_book
    if _built_book is not None and _built_book.header.geometry == geometry:
        return _built_book
    return own_built_book() if geometry == STANDARD else None


def use_book(path: str | None) -> None:
    """Search with the book built by ``c4engine book build`` at ``path`` from now on, as
    the engine's ``BookFile`` option does (None: without one; on 7x6 the
    package's book of every 4-stone position is probed then, as the engine's
    ``OwnBook`` does).

    The book must be for the board in play: the board of the last call (or of
    :func:`warm_up`), 7x6 before any.  Calls on another board search without it,
    and calls back on its board with it again.  Raises ``ValueError``
    (:class:`c4engine.kernel.built_book.BookFileError`), and keeps the book in
    use, for a file that is no sound book or is for another board, or a path
    that is no ``str`` or ``os.PathLike``."""
    from .kernel.built_book import BuiltBook

    global _built_book
    text = None if path is None else file_path(path, "use_book: path")
    _built_book = None if text is None else BuiltBook.load(text, _in_play)
    with _boards_lock:
        board = _boards.get(_in_play)
    if board is not None:
        with board.lock:
            if board.searcher is not None:
                _give_books(board, board.with_books)


def _playable(position: Position, call: str) -> Board:
    """The rules' position behind ``position``; refused if it is no Position or the
    game is already over."""
    if not isinstance(position, Position):
        raise IllegalMoveError(f"{call}: expected a c4engine.Position, got {type(position).__name__}")
    if position.is_over():
        raise IllegalMoveError(f"{call}: the game is already over")
    return position._board


def solve(position: Position, weak: bool = False) -> int:
    """Pons' exact score of ``position`` for the side to move, on its board.

    0 is a draw; a positive score is a win, the sooner the larger: a side that
    wins with its own next stone, ``n`` stones being on a board of ``W x H``
    cells, scores ``(W*H + 1 - n) // 2`` (``(43 - n) // 2`` on 7x6), and each own move the win takes longer costs one point;
    a negative score is a loss by the same count.  With ``weak`` only the
    result is computed, -1, 0 or 1, which is faster.

    The first call in a process also pays the searcher's start-up (see
    :func:`warm_up`).  Raises :class:`IllegalMoveError` for what is no
    Position or a game that is already over, and ``ValueError`` for a
    ``weak`` that is not True or False."""
    board = _playable(position, "solve")
    weak = flag(weak, "solve: weak")
    interpreted = _before_the_searcher(board, lambda tier: tier.solve(board, weak))
    if interpreted is not None:
        return interpreted[0]
    with _searching(board.geometry) as searcher:
        score, _nodes = searcher.solve(board, weak)
    return score


def analyse(position: Position, nodes: int | None = None) -> dict[int, int | None]:
    """The exact score, for the side to move, of playing each column 1-W (None for
    a full column), in Pons' convention as :func:`solve` gives it.

    The best moves are the columns with the highest score.  ``nodes`` (a whole
    number of at least 1) caps each column's solve: one that needs more raises
    :class:`SolveLimitReached` (a ``RuntimeError``), which ``c4engine grade`` takes
    as "too dear: unknown" (nodes give the same verdict on any machine, where a time would not).
    The first call in a process also pays the searcher's start-up (see
    :func:`warm_up`).  Raises :class:`IllegalMoveError` for what is no Position
    or a game that is already over, and ``ValueError`` for any other ``nodes``."""
    from .search.thread import NO_MOVE_SCORE, UNLIMITED
    board = _playable(position, "analyse")
    limit = UNLIMITED if nodes is None else whole_number(nodes, "analyse: nodes", 1)
    # a cap counts the kernel's nodes: the tier, which counts its own, does not answer it
    solved = None if nodes is not None else _before_the_searcher(board, lambda tier: tier.solve_moves(board, False))
    if solved is None:
        with _searching(board.geometry) as searcher:
            solved = searcher.solve_moves(board, node_limit=limit)
    values, _nodes = solved
    return {col: None if value == NO_MOVE_SCORE else value for col, value in enumerate(values, start=1)}


def best_move(position: Position, time: float | None = None, depth: int | None = None,
              nodes: int | None = None, level: int = FULL_STRENGTH, rng: random.Random | None = None) -> int:
    """A best column (1-W) for the side to move, as the engine would play it.

    ``time`` limits the search to that many seconds (a number above 0;
    ``inf`` or a billion seconds or more is no limit), ``depth`` to that many
    plies and ``nodes`` to about that many nodes (whole numbers of at least 1); with none it
    searches until the result is
    proven, which on 7x6 the opening book and the exact solver make immediate in most
    positions but which can take minutes in hard middle-game ones (and far longer
    early on a bigger board, which has no book).  Where the search proves
    the result in time the move keeps it (past the 7x6 book, a win proven
    without its distance may not be the fastest: a game's move asks only for
    the result, which is cheaper); otherwise it is the deepest search's
    choice.  ``time`` counts from the start of the search: the first call in
    a process also pays the searcher's start-up (see :func:`warm_up`), and a
    call made while another thread's call runs waits for it first.

    ``level`` (a whole number 0-20) plays as the engine's ``Skill Level`` does:
    20 is full strength; below it the search sees a few plies only (1 at level 0,
    10 at 19), without the books, and the move is drawn among every column by
    its score, from ``rng`` (a ``random.Random``; None: one of this module's), so
    that a seeded ``rng`` repeats its choices (the limits above still apply).

    Raises :class:`IllegalMoveError` for what is no Position or a game that is
    already over, and ``ValueError`` for any other time, depth, nodes, level or rng."""
    from .search.levels import Strength
    from .search.limits import Limits
    board = _playable(position, "best_move")
    limit = None if time is None else seconds(time, "best_move: time")
    depth = None if depth is None else whole_number(depth, "best_move: depth", 1)
    nodes = None if nodes is None else whole_number(nodes, "best_move: nodes", 1)
    level = whole_number_from_to(level, "best_move: level", 0, FULL_STRENGTH)
    if rng is not None and not isinstance(rng, random.Random):
        raise ValueError(f"best_move: rng must be a random.Random, got {rng!r}")
    millis = None if limit is None else limit * 1000.0
    limits = Limits(depth=depth, nodes=nodes, soft_ms=millis, hard_ms=millis)
    with _searching(board.geometry, full_strength=level == FULL_STRENGTH) as searcher:
        if level == FULL_STRENGTH:
            result = searcher.search(board, limits, result_first=True)
        else:
            strength = Strength(level)
            result = strength.weakened(searcher.search(board, strength.cap(limits), multipv=board.geometry.width,
                                                       solve_early=False), rng or _level_rng)
    assert result.move is not None, "a game that is not over has a move"
    return result.move + 1


def review(moves_or_game: object, movetime: float | None = None,
           engine: str | Sequence[str] | None = None) -> GameReview:
    """Every move of a game judged with exact scores, as ``c4engine review`` does.

    ``moves_or_game`` is a :class:`Position` on any board (its moves from its
    start), the columns 1-7 of a 7x6 game as digits (``"4453"``) or a list, or the
    PGN text of one game (``c4engine match``, cutechess, the board page; its
    ``Variant`` tag, ``cfour`` or ``cfour-8x7``, names the board).  Each position is scored
    column by column by an engine process: c4engine's own by default, started
    on the first call and kept for the process (a few seconds), or ``engine``,
    a command line, for this call only.  ``movetime`` caps each position, in
    seconds (None: ``c4engine review``'s 5 s; ``inf``: no cap); where it hits, a score is a range, and a mark
    that the range leaves open is None.

    Returns a :class:`GameReview`: ``moves``, one :class:`MoveVerdict` each
    (``mark`` ``"kept"``, ``"slower"``, ``"mistake"``, ``"blunder"`` or None;
    ``before``/``after`` the position's and the move's :class:`Value`, Pons
    scores from the mover's side; ``best`` the best columns), and ``first`` /
    ``second``, each player's :class:`PlayerSummary` with its ``accuracy``.

    Raises :class:`IllegalMoveError` for an illegal move in a position or
    move list, ``ValueError`` for PGN that is not one readable game (the
    message names the move) or a ``movetime`` that is no time (the rule of
    :mod:`c4engine.arguments`) or an ``engine`` that is no command line (a
    ``str``, or a list of ``str``), and ``c4engine.engine.EngineError`` when the
    engine fails."""
    from .reviewer.driver import review_game
    return review_game(moves_or_game, movetime, engine)
