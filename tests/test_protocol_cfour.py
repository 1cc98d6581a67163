"""End-to-end tests of the protocol process, the `cfour` variant as cutechess drives it: drops, FENs, refusals.

The real ``c4engine`` process driven with pexpect (``engine_process.py``); the
shared process and its reset are the ``engine`` fixtures of ``conftest.py``;
``protocol.md`` is the contract checked."""

from __future__ import annotations

from engine_process import (
    MID_FEN,
    START_FEN,
    Board,
    EngineProcess,
    check_bestmove,
    infos,
)
from protocol_grammar import ERROR_RE

# ------------------------------------------------------------------ the cfour variant

def test_cfour_bestmove_and_pv_are_legal_drops(cfour_engine: EngineProcess) -> None:
    """After ``UCI_Variant cfour``: bestmove, ponder and every pv move are drops
    ``P@<file><rank>`` whose rank is where the stone lands."""
    cfour_engine.send("ucinewgame")
    cfour_engine.send("position startpos moves P@d1 P@d2 P@e1")
    cfour_engine.send("go depth 5")
    lines = cfour_engine.read_until("bestmove")
    for m in infos(lines):
        Board("445").play_line(m["pv"].split(), drops=True)
    check_bestmove(lines[-1], Board("445"), drops=True)


def test_cfour_start_fen_with_a_drop(cfour_engine: EngineProcess) -> None:
    """cutechess' start FEN followed by ``P@d1`` is accepted: ``d`` shows the stone, the
    FEN and the move as a drop, and a search answers with a drop for the second player."""
    cfour_engine.send(f"position fen {START_FEN} moves P@d1")
    lines = cfour_engine.command("d")
    assert lines[5] == ". . . X . . ."
    assert lines[7] == "Fen: 7/7/7/7/7/3P3[PPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 1"
    assert lines[8] == "Side to move: second player (O)"
    assert lines[9] == "Moves: P@d1"
    cfour_engine.send("go movetime 100")
    check_bestmove(cfour_engine.read_until("bestmove")[-1], Board("4"), drops=True)


def test_cfour_mid_game_fen(cfour_engine: EngineProcess) -> None:
    """A mid-game FEN (the position after 4453) with ``moves P@d3``: the stone lands on
    d3, ``perft 1`` names the replies as drops, and the bestmove is a legal drop."""
    cfour_engine.send(f"position fen {MID_FEN} moves P@d3")
    lines = cfour_engine.command("d")
    assert lines[:6] == [". . . . . . ."] * 3 + [". . . X . . .", ". . . O . . .", ". . O X X . ."]
    assert lines[7] == "Fen: 7/7/7/3P3/3p3/2pPP2[PPPPPPPPPPPPPPPPPPppppppppppppppppppp] b - - 0 3"
    assert lines[9] == "Moves: P@d3"
    perft = cfour_engine.command("perft 1")
    board = Board("44534")
    assert perft[:7] == [f"{board.drop(c)}: 1" for c in range(1, 8)]
    cfour_engine.send("go depth 4")
    check_bestmove(cfour_engine.read_until("bestmove")[-1], board, drops=True)


def test_cfour_refuses_a_drop_on_the_wrong_rank(cfour_engine: EngineProcess) -> None:
    """cutechess counts a drop onto any but the lowest empty cell as illegal: refused,
    the previous position stays."""
    cfour_engine.send("position startpos moves P@d1")
    for bad in ("P@d1 P@d1", "P@d3", "p@d2"):
        lines = cfour_engine.command(f"position startpos moves P@d1 {bad}")
        assert len(lines) == 1 and ERROR_RE.fullmatch(lines[0]), bad
    assert cfour_engine.command("d")[-1] == "Moves: P@d1"
