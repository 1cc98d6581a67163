"""The protocol on every board: ``UCI_Variant`` names the game, ``VariantPath`` loads
Fairy-Stockfish's variants files, and every command works on the board in play
(protocol.md, "Variants and other boards").

cutechess' ``cfour`` must stay exactly the 7x6 game, and a variants file must mean
to c4engine what it means to Fairy-Stockfish, so both are checked on the real
process; a refused name or file must change nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine_process import (
    NETWORK_NOTE,
    READY_TIMEOUT,
    START_FEN,
    EngineProcess,
    bestmoves,
    errors,
    infos,
    start_engine,
)

SHARED_FILE = str(Path(__file__).resolve().parent / "data" / "variants.ini")
START_8X7 = "8/8/8/8/8/8/8[" + "P" * 28 + "p" * 28 + "] w - - 0 1"
BOOK_NOTE = "info string no opening book for the 8x7 board (the book covers 7x6)"
NO_LEARNED_NOTE = "info string no learned evaluation for the {} board: using the hand-written threat weights"
HYBRID_NOTE = ("info string evaluation ntuple: ntuple-7x7k4.npz for the 7x7 board, tuples beside the threat terms, "
               "held-out accuracy 0.6850 on 800 positions")
HYBRID_6X7_NOTE = ("info string evaluation ntuple: ntuple-6x7k4.npz for the 6x7 board, tuples beside the threat terms, "
                   "held-out accuracy 0.6275 on 800 positions")
HYBRID_8X7_NOTE = ("info string evaluation ntuple: ntuple-8x7k4.npz for the 8x7 board, tuples beside the threat terms, "
                   "held-out accuracy 0.7037 on 800 positions")
HYBRID_8X8_NOTE = ("info string evaluation ntuple: ntuple-8x8k4.npz for the 8x8 board, tuples beside the threat terms, "
                   "held-out accuracy 0.7300 on 400 positions")




def option_line(proc: EngineProcess, name: str) -> str:
    proc.send("uci")
    lines = proc.read_until("uciok", READY_TIMEOUT)
    return next(line for line in lines if line.startswith(f"option name {name} "))


def switch(proc: EngineProcess, variant: str) -> list[str]:
    """Set the variant; the lines before ``readyok`` (a new board may compile first)."""
    proc.send(f"setoption name UCI_Variant value {variant}")
    return proc.sync(READY_TIMEOUT)


def board_lines(proc: EngineProcess) -> list[str]:
    return proc.command("d")


def test_uci_lists_cfour_first_then_other_boards(engine: EngineProcess) -> None:
    """cutechess needs ``default cfour var cfour`` as it stands; other boards follow."""
    line = option_line(engine, "UCI_Variant")
    assert line.startswith("option name UCI_Variant type combo default cfour var cfour var ")
    assert " var cfour-8x7 " in line and line.endswith(" var cfour-9x6k5")
    assert option_line(engine, "VariantPath") == "option name VariantPath type string default <empty>"


def test_a_variants_file_adds_its_names_and_a_bad_one_changes_nothing(engine: EngineProcess,
                                                                     tmp_path: Path) -> None:
    before = option_line(engine, "UCI_Variant")
    bad = tmp_path / "bad.ini"
    bad.write_text("[fine:cfour-8x7]\n[x:cfour]\ncapturesToHand = true\n")
    lines = engine.command(f"setoption name VariantPath value {bad}")
    assert errors(lines) == ["info string error option VariantPath: [x]: the rule 'capturesToHand = true' "
                             "is not supported: c4engine reads only " + lines[0].split("reads only ")[1]]
    assert option_line(engine, "UCI_Variant") == before
    assert errors(engine.command(f"setoption name VariantPath value {SHARED_FILE}")) == []
    assert option_line(engine, "UCI_Variant") == before + " var cfour8x7 var five9x6"


def test_a_refused_variant_changes_nothing(engine: EngineProcess) -> None:
    engine.send("position startpos moves 4453")
    for variant, message in (("chess", "no variant named 'chess'"),
                             ("cfour-12x10", r"needs width x \(height \+ 1\) <= 128 bits"),
                             ("cfour-7x6k8", "row length 8 is out of range"),
                             ("cfour-30x1k3", "at most 26 columns")):
        lines = switch(engine, variant)
        assert len(errors(lines)) == 1 and re.search(message, lines[0]), lines
    assert "Moves: 4 4 5 3" in board_lines(engine)


def test_cfour_is_the_7x6_game_in_drops(engine: EngineProcess) -> None:
    assert switch(engine, "cfour") == []
    engine.send("position startpos moves P@d1")
    lines = board_lines(engine)
    assert lines[-1] == "Moves: P@d1" and lines[-3].startswith("Fen: 7/7/7/7/7/3P3[")


def test_play_on_8x7_from_a_variants_file(engine: EngineProcess) -> None:
    """Every command on the board of the variant: FEN, drops on files a-h and ranks
    1-7, MultiPV over 8 columns, perft, eval and bench."""
    engine.command(f"setoption name VariantPath value {SHARED_FILE}")
    assert set(switch(engine, "cfour8x7")) <= {BOOK_NOTE, HYBRID_8X7_NOTE}
    lines = board_lines(engine)
    assert lines[:8] == [". . . . . . . ."] * 7 + ["1 2 3 4 5 6 7 8"]
    assert lines[8] == f"Fen: {START_8X7}"
    engine.send("position startpos moves P@h1 P@h2 P@a1")
    assert board_lines(engine)[5:7] == [". . . . . . . O", "X . . . . . . X"]
    engine.send("setoption name MultiPV value 8")
    engine.send("go depth 3")
    lines = engine.read_until("bestmove", READY_TIMEOUT)
    last = [m for m in infos(lines) if m["depth"] == "3"]
    assert sorted(int(m["multipv"]) for m in last) == list(range(1, 9))
    assert re.fullmatch(r"P@[a-h][12]", bestmoves(lines)[0]["move"])
    engine.send("setoption name MultiPV value 1")
    perft = engine.command("perft 2")
    assert perft[:2] == ["P@a2: 8", "P@b1: 8"] and perft[-1] == "Nodes searched: 64"
    assert errors(engine.command("perft 10")) == [
        "info string error perft: expected a depth from 1 to 9 on the 8x7 board"]  # 8^10 > 7^10
    assert engine.command("eval")[-1].startswith("Evaluation (side to move): ")
    bench = engine.command("bench")
    assert bench[-2].startswith("Nodes searched") and int(bench[-2].split(":")[1]) > 0


def test_bad_positions_on_8x7_change_nothing(engine: EngineProcess) -> None:
    engine.command(f"setoption name VariantPath value {SHARED_FILE}")
    switch(engine, "cfour8x7")
    engine.send("position startpos moves P@h1")
    for command, message in ((f"position fen {START_FEN}", "expected 7 rows, found 6"),
                             ("position startpos moves P@i1", "file must be a-h"),
                             ("position startpos moves P@a8", "rank must be 1-7"),
                             ("position fen 8/8/8/8/8/8/8[PPP] w", "do not make 28")):
        lines = engine.command(command)
        assert len(errors(lines)) == 1 and message in lines[0], (command, lines)
    assert board_lines(engine)[-1] == "Moves: P@h1"


@pytest.mark.parametrize("evaluation", ["learned", "ntuple"])
def test_learned_evaluation_said_where_a_board_has_none(engine: EngineProcess, evaluation: str) -> None:
    """With ``Evaluation learned`` or ``ntuple`` (the default), a board without such
    weights says at its set-up that the hand-written ones stand in; 7x6 (which has
    them) says nothing, nor does any board with ``threats``."""
    assert option_line(engine, "Evaluation").startswith("option name Evaluation type combo default ntuple ")
    engine.send("setoption name Evaluation value threats")
    assert not [line for line in engine.sync(READY_TIMEOUT) if "learned" in line]
    assert not [line for line in switch(engine, "cfour-9x6k5") if "learned" in line]
    engine.send(f"setoption name Evaluation value {evaluation}")
    assert NO_LEARNED_NOTE.format("9x6k5") in engine.sync(READY_TIMEOUT)
    assert not [line for line in switch(engine, "cfour") if "learned" in line]
    assert NO_LEARNED_NOTE.format("9x6k5") in switch(engine, "cfour-9x6k5")
    engine.send("setoption name Evaluation value threats")
    assert not [line for line in engine.sync(READY_TIMEOUT) if "learned" in line]
    switch(engine, "cfour")


def test_the_default_evaluation_says_so_on_a_board_without_a_network() -> None:
    """A fresh engine (default ``Evaluation``) set to a board without a network
    says at once that the hand-written weights stand in."""
    fresh = start_engine()
    try:
        assert NO_LEARNED_NOTE.format("9x6k5") in switch(fresh, "cfour-9x6k5")
        fresh.assert_clean()
    finally:
        fresh.close()


def test_the_network_that_plays_is_named_at_set_up(engine: EngineProcess) -> None:
    """With ``Evaluation ntuple`` a board with a network names its file, its board
    and its held-out accuracy when it is set up or the option set (7x7's, 6x7's and
    8x8's, hybrids, say that the threat terms play beside their tuples); a board without one says
    that the threats stand in, and ``threats`` names no network."""
    fresh = EngineProcess()
    try:
        fresh.send("uci")
        fresh.read_until("uciok", READY_TIMEOUT)
        assert NETWORK_NOTE in fresh.sync(READY_TIMEOUT)  # the start-up's board
    finally:
        fresh.close()
    engine.send("setoption name Evaluation value threats")
    assert not [line for line in engine.sync(READY_TIMEOUT) if "evaluation ntuple" in line]
    engine.send("setoption name Evaluation value ntuple")
    assert engine.sync(READY_TIMEOUT) == [NETWORK_NOTE]
    assert not [line for line in switch(engine, "cfour-9x6k5") if "evaluation ntuple" in line]
    assert HYBRID_NOTE in switch(engine, "cfour-7x7")
    assert HYBRID_6X7_NOTE in switch(engine, "cfour-6x7")
    assert HYBRID_8X8_NOTE in switch(engine, "cfour-8x8")  # past 64 bits
    assert NETWORK_NOTE in switch(engine, "cfour")


def test_eval_of_a_hybrid_network_shows_its_threat_terms_part(engine: EngineProcess) -> None:
    """7x7's network is a hybrid (protocol.md, ``eval``): between its size and the total,
    the part of the total that the threat terms make."""
    switch(engine, "cfour-7x7")
    try:
        engine.send("position startpos moves P@d1 P@d2 P@c1")
        lines = engine.command("eval")
        assert re.fullmatch(r"n-tuple network: 40 tuples of 8 cells, each read on the mirror image too", lines[0])
        assert re.fullmatch(r"threat terms beside it \(side to move\): -?\d+ cp", lines[1])
        assert re.fullmatch(r"Evaluation \(side to move\): -?\d+ cp", lines[2]) and len(lines) == 3
    finally:
        switch(engine, "cfour")


def test_back_to_cfour_after_another_board(engine: EngineProcess) -> None:
    switch(engine, "cfour-9x6k5")
    assert board_lines(engine)[6] == "1 2 3 4 5 6 7 8 9"
    switch(engine, "cfour")
    engine.send("position startpos")
    assert board_lines(engine)[7] == f"Fen: {START_FEN}"
    engine.send("go depth 2")
    assert re.fullmatch(r"P@[a-g]1", bestmoves(engine.read_until("bestmove"))[0]["move"])


def test_no_line_is_over_64_kib_whatever_the_variants_file(tmp_path: Path) -> None:
    """12,000 names make a ``var`` list of 130 KB: the option lists those that fit in
    one line of the protocol (a longer one would be dropped, option and all), in
    file order, and still accepts the others by name; an error quoting a long input
    line is cut to the limit.  Run apart (the names stay in the process), to the end
    of its input, which carries out every command."""
    names = [f"game{i:05d}" for i in range(12_000)]
    path = tmp_path / "many.ini"
    path.write_text("".join(f"[{name}:cfour-8x7]\n" for name in names))
    script = (f"setoption name VariantPath value {path}\nuci\nsetoption name UCI_Variant value {names[-1]}\n"
              f"setoption name UCI_Variant value nope\n{'x' * 65_530}\nisready\n").encode()
    done = subprocess.run([sys.executable, "-m", "c4engine"], input=script, capture_output=True, timeout=120,
                          check=True)
    lines = done.stdout.decode().splitlines()
    assert max(len(line.encode()) for line in lines) <= 65536
    option = next(line for line in lines if line.startswith("option name UCI_Variant "))
    from_file = option.split(" var ")[7:]  # after cfour and the five listed boards
    assert 1000 < len(from_file) < len(names) and from_file == names[:len(from_file)]
    assert len(option) + len(f" var {names[len(from_file)]}") > 65536  # the next one did not fit
    errors_seen = [line for line in lines if line.startswith("info string error")]
    assert len(errors_seen) == 2, errors_seen  # nope, the unknown command; the last name was accepted
    assert errors_seen[0].startswith("info string error option UCI_Variant: no variant named 'nope'")
    assert errors_seen[1].startswith("info string error unknown command 'xxx") and errors_seen[1].endswith("...")
    assert lines[-1] == "readyok"
