"""The protocol's words from the client's side: what an engine's ``uci`` reply
teaches (its name, its options, the variants it takes) and the ``position``
command for a game.

Apart from :mod:`c4engine.engine.client` because the web board speaks to its
engine through its own asyncio process and needs the same words.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..geometry import STANDARD, Geometry
from ..rules.board import Board
from ..rules.notation import format_line, parse_fen
from ..rules.variants import BOARD_NAME_PREFIX

def learn_uci_line(line: str, options: dict[str, str]) -> str | None:
    """One line of an engine's ``uci`` reply: an ``option`` goes into ``options``
    (its name -> the rest of the line from ``type`` on); an ``id name`` is returned."""
    words = line.split()
    if words[:2] == ["id", "name"]:
        return " ".join(words[2:])
    if words[:2] == ["option", "name"] and "type" in words:
        end = words.index("type")
        options[" ".join(words[2:end])] = " ".join(words[end:])
    return None


def lists_option(options: Collection[str], name: str) -> bool:
    """Whether ``name`` is among the option names an engine announced; UCI option
    names are not case-sensitive."""
    lowered = name.lower()
    return any(listed.lower() == lowered for listed in options)


def offers_variant(options: dict[str, str], variant: str) -> bool:
    """Whether the options an engine announced list ``variant`` as a ``UCI_Variant``
    value (a whole word after ``var``: ``cfourx`` is not ``cfour``)."""
    words = options.get("UCI_Variant", "").split()
    return any(a == "var" and b == variant for a, b in zip(words, words[1:]))


def takes_board_variant(options: dict[str, str], variant: str) -> bool:
    """Whether an engine may be given ``variant``, the built-in name of a board
    (``cfour-8x7``): it lists it, or it lists such names at all (c4engine lists a few
    and takes any ``cfour-WxH``)."""
    return offers_variant(options, variant) or (variant.startswith(BOARD_NAME_PREFIX) and any(
        word.startswith(BOARD_NAME_PREFIX) for word in options.get("UCI_Variant", "").split()))


def position_command(moves: Sequence[int], start_fen: str | None,
                     drops: bool, geometry: Geometry = STANDARD) -> tuple[str, Board]:
    """``position startpos|fen <start_fen> [moves ...]`` on the board of ``geometry``
    with ``moves`` as columns 1..W written as drops or digits (``drops``), and the
    position they reach; RulesError when the moves or the FEN are not legal."""
    start = parse_fen(start_fen, geometry) if start_fen else Board(geometry=geometry)
    cols = [col - 1 for col in moves]
    tokens = format_line(start, cols, drops)
    line = f"position fen {start_fen}" if start_fen else "position startpos"
    return line + (" moves " + " ".join(tokens) if tokens else ""), start.play_all(cols)
