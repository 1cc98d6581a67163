"""Named games: ``cfour`` and the other boards, built in or read from a variants file.

The protocol's ``UCI_Variant`` option names the game, as Fairy-Stockfish's does.
``cfour`` is the standard 7x6 game (what cutechess sends); ``cfour-8x7``,
``cfour-9x6k5`` and every other ``cfour-WxH`` / ``cfour-WxHkK`` within the
geometry's limits name the drop-on-top game on that board, a few of them
listed in the option, all of them accepted.

A variants file is Fairy-Stockfish's own ini format, so that one file drives
both engines in a match: sections ``[name]`` or ``[name:parent]`` (inheriting
the parent's keys: a built-in game or a section earlier in the file), lines
``key = value``, comments starting with ``#`` or ``;``.  Only the keys of a
drop-on-top connect-N game are read (:data:`SIZE_KEYS` and :data:`FIXED_KEYS`),
and those that cannot change the game (:data:`NEUTRAL_KEYS`); any other key,
or one of these with a value that would make another game, is refused.  A
section with no parent starts from Fairy-Stockfish's defaults (chess on 8x8),
so it must say everything ``[cfour]`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ..geometry import STANDARD, Geometry, GeometryError
from ..inputs import open_regular
from .board import Board, RulesError
from .notation import FILES, check_writable, parse_board, parse_fen, start_fen

STANDARD_NAME = "cfour"
BOARD_NAME_PREFIX = "cfour-"
LISTED_BOARDS = ("6x7", "7x7", "8x7", "9x6", "9x6k5")  # named in the option; any other is accepted
MAX_FILE_BYTES = 1 << 20
NAMES_IN_MESSAGES = 20  # an unknown name's error lists this many known ones

Rules = dict[str, str]

FIXED_KEYS = {  # key: the only value a drop-on-top connect game can have
    "pieceDrops": "true",
    "enclosingDrop": "top",
    "immobile": "p",
    "stalemateValue": "draw",
    "immobilityIllegal": "false",
}
SIZE_KEYS = ("maxFile", "maxRank", "connectN", "startFen")


def _is_bool(value: str) -> bool:
    return value in ("true", "false")


def _is_whole(value: str) -> bool:
    return value.isascii() and value.isdigit()


NEUTRAL_KEYS: dict[str, tuple[str, Callable[[str], bool]]] = {  # keys that cannot change the game
    "doubleStep": ("true or false", _is_bool),  # the stones never move
    "castling": ("true or false", _is_bool),
    "nFoldRule": ("a whole number", _is_whole),  # no position repeats
    "nMoveRule": ("a whole number", _is_whole),  # checked against the board's size too
    "connectHorizontal": ("true", lambda value: value == "true"),
    "connectVertical": ("true", lambda value: value == "true"),
    "connectDiagonal": ("true", lambda value: value == "true"),
    "connectValue": ("win", lambda value: value == "win"),
}
FAIRY_DEFAULTS: Rules = {  # Fairy-Stockfish's values of these keys when a section has no parent
    "maxFile": "8", "maxRank": "8", "connectN": "0", "pieceDrops": "false", "enclosingDrop": "none",
    "immobile": "-", "stalemateValue": "draw", "immobilityIllegal": "false", "nMoveRule": "50",
}


class VariantError(ValueError):
    """A variant name the engine does not know, or a variants file it cannot play."""


@dataclass(frozen=True)
class Variant:
    """A game the protocol can play: its name, its board and its rules as
    Fairy-Stockfish keys (what a section inheriting from it starts from)."""

    name: str
    geometry: Geometry
    rules: tuple[tuple[str, str], ...]

    def start(self) -> Board:
        return Board(geometry=self.geometry)


def rules_for(geometry: Geometry) -> Rules:
    """Fairy-Stockfish's keys for the drop-on-top game on ``geometry`` (its ``[cfour]``
    section with the board's size, row length and start position)."""
    return {"maxRank": str(geometry.height), "maxFile": str(geometry.width), "immobile": "p",
            "startFen": start_fen(geometry), "pieceDrops": "true", "enclosingDrop": "top",
            "doubleStep": "false", "castling": "false", "stalemateValue": "draw",
            "immobilityIllegal": "false", "connectN": str(geometry.connect), "nMoveRule": "0"}


@lru_cache(maxsize=256)
def built_in(geometry: Geometry) -> Variant:
    """The built-in variant of ``geometry``: ``cfour`` for 7x6, else ``cfour-WxH[kK]``
    (kept per board: every section of a variants file names its parent)."""
    check_writable(geometry)
    name = STANDARD_NAME if geometry == STANDARD else BOARD_NAME_PREFIX + geometry.name
    return Variant(name, geometry, tuple(rules_for(geometry).items()))


def variant_name(geometry: Geometry) -> str:
    """The name ``UCI_Variant`` takes for the built-in game on ``geometry``."""
    return built_in(geometry).name


class VariantSet:
    """The games ``UCI_Variant`` offers: the built-ins and those loaded from files.
    Immutable: :meth:`with_file` returns a new set, so a refused file changes nothing.
    The loaded games are also kept by lowered name, so that reading a file of n
    sections, each looked up by name and parent, takes time linear in n."""

    def __init__(self, loaded: tuple[Variant, ...] = ()) -> None:
        self.loaded = loaded
        self._by_name: dict[str, Variant] = {}
        for variant in loaded:
            self._by_name.setdefault(variant.name.lower(), variant)

    def names(self) -> list[str]:
        """The names the option lists: ``cfour`` first, then the listed sizes, then the
        loaded ones in file order."""
        names = [STANDARD_NAME] + [BOARD_NAME_PREFIX + board for board in LISTED_BOARDS]
        return names + [v.name for v in self.loaded if v.name not in names]

    def find(self, name: str) -> Variant:
        """The variant called ``name`` (case-insensitive, as UCI option values are)."""
        variant = _find(name, self._by_name)
        if variant is None:
            raise VariantError(f"no variant named '{name}' (known: {self._some_names()}, "
                               f"or cfour-WxH / cfour-WxHkK for another board)")
        return variant

    def _some_names(self) -> str:
        """The first :data:`NAMES_IN_MESSAGES` names, and how many there are when there
        are more: a message stays one short line whatever a variants file holds."""
        names = self.names()
        shown = ", ".join(names[:NAMES_IN_MESSAGES])
        return shown if len(names) <= NAMES_IN_MESSAGES else f"{shown} and {len(names) - NAMES_IN_MESSAGES} more"

    def with_file(self, path: str) -> VariantSet:
        """This set and the variants of the file at ``path``, all of them or, when any
        section is refused, none (VariantError names the section, key and reason).
        A section redefining a loaded name keeps the loaded game (on the same board)."""
        text = read_text(path)
        loaded = list(self.loaded)
        by_name = dict(self._by_name)
        for name, parent, rules in parse_sections(text, path):
            variant = _variant_of(name, parent, rules, by_name)
            try:
                known = _find(name, by_name)
            except VariantError:
                known = None
            if known is not None and known.geometry != variant.geometry:
                raise VariantError(f"{path}: [{name}] is already the {known.geometry} game; "
                                   f"it cannot become {variant.geometry}")
            if name.lower() not in by_name:
                loaded.append(variant)
                by_name[name.lower()] = variant
        return VariantSet(tuple(loaded))


def _find(name: str, loaded: dict[str, Variant]) -> Variant | None:
    """The variant called ``name`` among ``loaded`` (keyed by lowered name), else built
    in; None when nothing has that name, VariantError for a ``cfour-WxH`` the engine
    cannot play."""
    lowered = name.lower()
    if lowered in loaded:
        return loaded[lowered]
    if lowered == STANDARD_NAME:
        return built_in(STANDARD)
    if lowered.startswith(BOARD_NAME_PREFIX):
        try:
            return built_in(parse_board(lowered[len(BOARD_NAME_PREFIX):]))
        except GeometryError as err:
            raise VariantError(f"variant '{name}': {err}") from None
    return None


def _variant_of(name: str, parent: str | None, own: Rules, loaded: dict[str, Variant]) -> Variant:
    """The section ``[name:parent]`` with its own keys, its parent among ``loaded`` or built in."""
    if parent is None:
        rules = dict(FAIRY_DEFAULTS)
    else:
        try:
            found = _find(parent, loaded)
        except VariantError:
            found = None
        if found is None:
            raise VariantError(f"[{name}:{parent}]: no variant '{parent}' is built in or defined earlier")
        rules = dict(found.rules)
    rules.update(own)
    try:
        return Variant(name, geometry_of(rules), tuple(rules.items()))
    except (VariantError, GeometryError, RulesError) as err:
        raise VariantError(f"[{name}]: {err}") from None


def read_text(path: str) -> str:
    """The file's text; VariantError when it cannot be read as a small UTF-8 file."""
    try:
        with open_regular(path) as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise VariantError(f"cannot read variants file '{path}': {err.strerror or err}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise VariantError(f"variants file '{path}' is larger than {MAX_FILE_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise VariantError(f"variants file '{path}' is not UTF-8 text") from None


def parse_sections(text: str, path: str) -> list[tuple[str, str | None, Rules]]:
    """The sections of an ini text in order: name, parent (or None) and own keys.
    Lines before the first section are ignored, as Fairy-Stockfish does."""
    sections: list[tuple[str, str | None, Rules]] = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            sections.append(_section_header(line, f"{path}:{number}"))
        elif sections:
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise VariantError(f"{path}:{number}: expected 'key = value', got '{line[:60]}'")
            sections[-1][2][key.strip()] = value.strip()
    if not sections:
        raise VariantError(f"variants file '{path}' has no [section]")
    return sections


def _section_header(line: str, where: str) -> tuple[str, str | None, Rules]:
    if not line.endswith("]"):
        raise VariantError(f"{where}: a section header must close with ']'")
    name, _, parent = line[1:-1].partition(":")
    name, parent = name.strip(), parent.strip()
    if not name or any(ch.isspace() for ch in name) or ":" in parent:
        raise VariantError(f"{where}: '{line[:60]}' is not [name] or [name:parent] (names have no spaces)")
    return name, parent or None, {}


def geometry_of(rules: Rules) -> Geometry:
    """The board a section's effective keys describe, after checking that they
    describe a drop-on-top connect game and nothing else."""
    for key, value in rules.items():
        _check_key(key, value)
    geometry = Geometry(_file_count(rules["maxFile"]), _whole("maxRank", rules["maxRank"]),
                        _whole("connectN", rules["connectN"]))
    check_writable(geometry)
    moves_rule = _whole("nMoveRule", rules.get("nMoveRule", "0"))
    if moves_rule and 2 * moves_rule <= geometry.cells:
        raise VariantError(f"nMoveRule = {moves_rule} could end a game on {geometry} early; "
                           f"expected 0 or more than {geometry.cells // 2}")
    if "startFen" not in rules:
        raise VariantError("no startFen: it must be the empty board, "
                           f"'{start_fen(geometry)}'")
    if rules["startFen"] != start_fen(geometry) and parse_fen(rules["startFen"], geometry).stones:
        raise VariantError(f"startFen must be the empty board, '{start_fen(geometry)}'")
    return geometry


def _check_key(key: str, value: str) -> None:
    if key in FIXED_KEYS:
        if value != FIXED_KEYS[key]:
            raise VariantError(f"{key} = {value} is not supported (only {FIXED_KEYS[key]}: "
                               f"c4engine plays drop-on-top connect games)")
    elif key in NEUTRAL_KEYS:
        expected, accepts = NEUTRAL_KEYS[key]
        if not accepts(value):
            raise VariantError(f"{key} = {value} is not supported (expected {expected})")
    elif key not in SIZE_KEYS:
        raise VariantError(f"the rule '{key} = {value}' is not supported: c4engine reads only "
                           f"{', '.join(SIZE_KEYS + tuple(FIXED_KEYS) + tuple(NEUTRAL_KEYS))}")


def _whole(key: str, value: str) -> int:
    if not value.isascii() or not value.isdigit() or len(value) > 3:
        raise VariantError(f"{key} = {value}: expected a whole number")
    return int(value)


def _file_count(value: str) -> int:
    """``maxFile`` as Fairy-Stockfish reads it: a number of files, or the last file's letter."""
    if len(value) == 1 and value in FILES:
        return FILES.index(value) + 1
    return _whole("maxFile", value)
