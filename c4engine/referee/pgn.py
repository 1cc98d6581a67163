"""Connect-Four games as PGN, in the form cutechess writes for its ``cfour`` variant.

cutechess' layout is kept so that its tools (and anything that reads its PGN)
can load our games: the seven-tag roster first, then the other tags in
alphabetical order (``Variant "cfour"`` among them), moves as drops ``P@d1``
with move numbers, after each engine move a comment ``{+0.35/12 0.103s}``
(score from the mover's side in hundredths, ``+M3`` for a mate in 3, the depth,
the time the move took; ``>=`` or ``<=`` in front when the engine gave only a
bound), and the reason the game ended as a last comment before the result,
with a ``Termination`` tag.

Text that came from an engine (its name, its move, its last words on stderr)
is untrusted: control characters become spaces, tag values are escaped, and
braces in comments become parentheses (PGN has no escape inside ``{...}``), so
a file always reads back as the games that were written.

Games that begin with an opening are written from the empty board, the opening
moves marked ``{book}``, as cutechess does for openings taken from a PGN book,
rather than from a ``SetUp``/``FEN`` of the position after them (what cutechess
does for EPD books).  The moves keep what a FEN loses: the order the opening
was played in, the whole game as one Pons digit string, and a ``PlyCount`` that
counts the whole game; and every game of a match starts from the same position,
which is what the engines were told (``position startpos moves ...``).  A game
that really starts from a set-up position carries ``SetUp``/``FEN``, and the
reader follows a ``FEN`` tag in PGN written by cutechess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..engine.info import InfoDict
from ..geometry import STANDARD
from ..rules.board import Board, RulesError
from ..rules.notation import format_move, parse_fen, parse_move, to_fen
from ..rules.variants import Variant, VariantError, VariantSet, built_in

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
BOOK = "book"
LINE_WIDTH = 80  # cutechess wraps movetext below 80 columns


SUFFIX_OF_NAG = {1: "!", 2: "?", 3: "!!", 4: "??", 5: "!?", 6: "?!"}  # PGN's move annotations


@dataclass(frozen=True)
class PgnMove:
    """A move (0-based column), its comment (``book``, ``+0.35/12 0.103s`` or empty)
    and its annotation (``?!``, ``?``, ``??``... or empty)."""

    col: int
    comment: str = ""
    nag: str = ""


@dataclass(frozen=True)
class PgnGame:
    """One game as PGN holds it."""

    white: str
    black: str
    result: str
    moves: tuple[PgnMove, ...] = ()
    round: str = "?"
    event: str = "?"
    site: str = "?"
    date: str = "????.??.??"
    termination: str = "normal"
    result_comment: str = ""
    time_control: str | None = None
    start_fen: str | None = None
    variant: Variant = built_in(STANDARD)

    def start_position(self) -> Board:
        geometry = self.variant.geometry
        return parse_fen(self.start_fen, geometry) if self.start_fen else Board(geometry=geometry)

    def final_position(self) -> Board:
        return self.start_position().play_all([m.col for m in self.moves])


def move_comment(info: InfoDict, seconds: float) -> str:
    """cutechess' comment for an engine move: ``+0.35/12 0.103s``, ``-M4/9 0.020s``,
    or only the time when the engine reported no score.  A score that is only a
    bound gets ``>=`` or ``<=`` in front (``>=+M3/12``: a win in 3 or quicker),
    where cutechess would show it as exact."""
    timing = f"{max(0.0, seconds):.3f}s"
    score = info.get("score")
    if score is None:
        return timing
    sign = "-" if score.value < 0 else "+"
    if score.kind == "mate":
        value = f"{sign}M{abs(score.value)}"
    else:
        whole, hundredths = divmod(abs(score.value), 100)  # integers: any size formats
        value = f"{sign}{whole}.{hundredths:02d}" if score.value else "0.00"
    bound = ">=" if info.get("lowerbound") else "<=" if info.get("upperbound") else ""
    return f"{bound}{value}/{info.get('depth', 0)} {timing}"


def write_game(game: PgnGame) -> str:
    """The game as PGN text, ending with a blank line so that games can be appended."""
    roster = [("Event", game.event), ("Site", game.site), ("Date", game.date),
              ("Round", game.round), ("White", game.white), ("Black", game.black),
              ("Result", game.result)]
    extra = {"PlyCount": str(len(game.moves)), "Termination": game.termination,
             "Variant": game.variant.name}
    if game.time_control:
        extra["TimeControl"] = game.time_control
    if game.start_fen or game.variant.geometry != STANDARD:  # the FEN shows the board's size
        extra.update(SetUp="1", FEN=game.start_fen or to_fen(game.start_position()))
    tags = "".join(f'[{name} "{_escape(value)}"]\n'
                   for name, value in roster + sorted(extra.items()))
    return f"{tags}\n{_wrap(_movetext_units(game))}\n\n"


def _escape(value: str) -> str:
    return _printable(value).replace("\\", "\\\\").replace('"', '\\"')


def _printable(text: str) -> str:
    """``text`` with control characters (a line break would end a tag) as spaces."""
    return "".join(" " if ord(ch) < 32 or ord(ch) == 127 else ch for ch in text)


def _comment(text: str) -> str:
    """``text`` made safe inside ``{...}``: PGN has no escape for ``}``, so braces
    from engine text (a ``bestmove }1-0{``) become parentheses; without this one
    hostile move would split a game in several on reading."""
    return _printable(text).translate(_BRACES)


_BRACES = str.maketrans("{}", "()")


def _movetext_units(game: PgnGame) -> list[str]:
    """Each move with its number and comment, then the final comment and result."""
    pos = game.start_position()
    units = []
    for i, move in enumerate(game.moves):
        number = pos.stones // 2 + 1
        prefix = f"{number}. " if pos.side_to_move == 0 else (f"{number}... " if i == 0 else "")
        comment = f" {{{_comment(move.comment)}}}" if move.comment else ""
        units.append(f"{prefix}{format_move(move.col, pos, drops=True)}{move.nag}{comment}")
        pos = pos.play(move.col)
    ending = f"{{{_comment(game.result_comment)}}} " if game.result_comment else ""
    units.append(ending + game.result)
    return units


def _wrap(units: list[str]) -> str:
    """Units joined by spaces, a new line started before one would reach LINE_WIDTH."""
    lines = [""]
    for unit in units:
        if lines[-1] and len(lines[-1]) + 1 + len(unit) >= LINE_WIDTH:
            lines.append(unit)
        else:
            lines[-1] = f"{lines[-1]} {unit}" if lines[-1] else unit
    return "\n".join(lines)


_TOKEN = re.compile(r"""
      \[\s*(?P<tag>\w+)\s+"(?P<value>(?:[^"\\]|\\.)*)"\s*\]
    | \{(?P<comment>[^}]*)\}
    | ;[^\n]*
    | (?P<result>1-0|0-1|1/2-1/2|\*)
    | [0-9]+\.(?:\.\.)?
    | \$(?P<nag>[0-9]+)
    | (?P<move>[^\s\[\]{};!?]+)(?P<suffix>[!?]{1,2})?
""", re.VERBOSE)


@dataclass
class _GameBuilder:
    """Collects one game's tags, moves and comments while the reader scans."""

    variants: VariantSet = field(default_factory=VariantSet)
    tags: dict[str, str] = field(default_factory=dict)
    moves: list[PgnMove] = field(default_factory=list)
    pos: Board | None = None
    ending: list[str] = field(default_factory=list)

    def add_move(self, token: str) -> None:
        pos = self.start() if self.pos is None else self.pos
        try:
            col = parse_move(token, pos)
            self.pos = pos.play(col)
        except RulesError as err:
            raise ValueError(f"{self.named()}: move {len(self.moves) + 1} '{token}': {err}") from None
        self.moves.append(PgnMove(col))

    def start(self) -> Board:
        """The position the game starts from (its ``FEN`` tag, else the empty board);
        ValueError naming the game for a FEN its board cannot have, moves or none."""
        fen, geometry = self.tags.get("FEN"), self.variant().geometry
        try:
            return parse_fen(fen, geometry) if fen else Board(geometry=geometry)
        except RulesError as err:
            raise ValueError(f"{self.named()}: {err}") from None

    def named(self) -> str:
        return f"game '{self.tags.get('White', '?')}' vs '{self.tags.get('Black', '?')}'"

    def annotate(self, nag: str) -> None:
        """The last move's annotation, a suffix (``?!``) or a NAG number (``$6``);
        NAGs that are no move annotation are skipped, as before any move."""
        nag = SUFFIX_OF_NAG.get(int(nag), "") if nag.isdigit() else nag
        if self.moves and nag:
            last = self.moves[-1]
            self.moves[-1] = PgnMove(last.col, last.comment, nag)

    def add_comment(self, text: str) -> None:
        """A move's first comment is its own; any further one describes the ending."""
        if self.moves and not self.moves[-1].comment and not self.ending:
            self.moves[-1] = PgnMove(self.moves[-1].col, text.strip(), self.moves[-1].nag)
        else:
            self.ending.append(text.strip())

    def variant(self) -> Variant:
        """The game the ``Variant`` tag names (``cfour`` without one): a built-in name,
        or one of the variants file the reader was given."""
        try:
            return self.variants.find(self.tags.get("Variant", "cfour"))
        except VariantError as err:
            raise ValueError(f"{self.named()}: {err}") from None

    def build(self, marker: str) -> PgnGame:
        if self.pos is None:
            self.start()
        t = self.tags
        return PgnGame(
            white=t.get("White", "?"), black=t.get("Black", "?"),
            result=t.get("Result", marker), moves=tuple(self.moves),
            round=t.get("Round", "?"), event=t.get("Event", "?"), site=t.get("Site", "?"),
            date=t.get("Date", "????.??.??"), termination=t.get("Termination", "normal"),
            result_comment=" ".join(self.ending), time_control=t.get("TimeControl"),
            start_fen=t.get("FEN"), variant=self.variant())


def read_games(text: str, variants: VariantSet | None = None) -> list[PgnGame]:
    """Every game of a PGN text; moves are checked against the rules (ValueError
    names the game and the move that is wrong).  ``variants``: the names a
    ``Variant`` tag may use besides the built-in ones (a loaded variants file)."""
    games = []
    known = variants or VariantSet()
    builder = _GameBuilder(known)
    for token in _TOKEN.finditer(text):
        if token["tag"]:
            builder.tags[token["tag"]] = re.sub(r"\\(.)", r"\1", token["value"])
        elif token["comment"] is not None:
            builder.add_comment(token["comment"])
        elif token["result"]:
            games.append(builder.build(token["result"]))
            builder = _GameBuilder(known)
        elif token["move"]:
            builder.add_move(token["move"])
            if token["suffix"]:
                builder.annotate(token["suffix"])
        elif token["nag"]:
            builder.annotate(token["nag"])
    return games
