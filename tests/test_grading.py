"""``c4engine grade``: sets made and read, grades of known agents, bad agents, the
command line.  The rates of a seeded random mover are counted again with bitbully."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from c4engine.geometry import STANDARD, Geometry
from c4engine.grading.agents import PythonAgent, RandomAgent
from c4engine.grading.build import build_set, exact_scores
from c4engine.grading.command import grade_command
from c4engine.grading.metrics import Grade, summarise, wilson
from c4engine.grading.runner import grade_sets
from c4engine.grading.sets import GradeSet, SetFileError, class_of, moves_left, read_set, set_text, write_set

TESTS = Path(__file__).resolve().parent
AGENTS = TESTS / "engines" / "grading_agents.py"
PONS = TESTS.parent / "../shared/data/pons"


@pytest.fixture(scope="module")
def small_set() -> GradeSet:
    grade_set, _report = build_set(STANDARD, 7, 4)
    return grade_set


@pytest.fixture
def set_file(small_set: GradeSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "small.set"
    write_set(path, small_set)
    monkeypatch.setenv("GRADING_SET", str(path))
    return path


def python_agent(name: str, seconds: float = 10.0) -> PythonAgent:
    return PythonAgent(f"{AGENTS}:{name}", "position", seconds)


# -- sets -------------------------------------------------------------------


def test_the_same_seed_makes_the_same_set_and_another_seed_another(small_set: GradeSet) -> None:
    again, _ = build_set(STANDARD, 7, 4)
    other, _ = build_set(STANDARD, 8, 4)
    assert set_text(again) == set_text(small_set)
    assert {p.moves for p in other.positions} != {p.moves for p in small_set.positions}


def test_a_set_fills_pons_six_classes_with_scores_that_match_its_classes(small_set: GradeSet) -> None:
    labels = [p.label for p in small_set.positions]
    assert sorted(set(labels)) == ["L1_R1", "L1_R2", "L1_R3", "L2_R1", "L2_R2", "L3_R1"]
    assert all(labels.count(label) == 4 for label in set(labels))
    for p in small_set.positions:
        assert p.label == class_of(p.stones, p.best, STANDARD)


def test_moves_left_counts_to_the_end_of_perfect_play() -> None:
    assert moves_left(0, 10, STANDARD) == 32  # a draw fills the board
    assert moves_left(16, 10, STANDARD) == 1  # 16 = (43 - 10) // 2: the mover wins at once
    assert moves_left(-15, 11, STANDARD) == 2  # (43 - 12) // 2: the opponent's next stone wins
    assert class_of(14, 8, STANDARD) == "L1_R1"  # Pons' Test_L1_R1 holds 14-stone positions scoring 8


def test_a_set_file_reads_back_the_same(small_set: GradeSet, set_file: Path) -> None:
    assert read_set(set_file).positions == small_set.positions


@pytest.mark.parametrize("change", ["score", "cut", "header"])
def test_a_corrupt_set_file_is_refused(set_file: Path, change: str) -> None:
    text = set_file.read_text()
    body_at = text.index("\n\n") + 2
    if change == "score":
        line_end = text.index("\n", body_at)
        fields = text[body_at:line_end].split()
        fields[3] = str(int(fields[3]) + 1) if fields[3] not in "x?" else "0"
        text = text[:body_at] + " ".join(fields) + text[line_end:]
    elif change == "cut":
        text = text[:len(text) - 40]
    else:
        text = text.replace("format 1", "format 9")
    set_file.write_text(text)
    with pytest.raises(SetFileError, match="checksum|format|positions|fields"):
        read_set(set_file)


def test_a_set_of_another_board_is_refused(set_file: Path) -> None:
    with pytest.raises(SetFileError, match="a set of the 7x6 board, not 8x7"):
        read_set(set_file, Geometry(8, 7))
    result = CliRunner().invoke(grade_command, ["run", str(set_file), "--board", "8x7", "--random", "1"])
    assert result.exit_code != 0 and "not 8x7" in result.output


def test_a_file_that_is_no_set_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello there\n")
    with pytest.raises(SetFileError, match="notes.txt:1"):
        read_set(path, analyse=lambda board: ())


def test_pons_files_are_read_with_their_classes_and_checked_scores(tmp_path: Path) -> None:
    source = PONS / "Test_L3_R1"
    if not source.exists():
        pytest.skip(f"Pons' test set {source} is not available")
    lines = source.read_text().splitlines()[:20]
    path = tmp_path / "Test_L3_R1"
    path.write_text("\n".join(lines) + "\n")
    pons = read_set(path, analyse=lambda board: exact_scores(board, None))
    assert [p.best for p in pons.positions] == [int(line.split()[1]) for line in lines]
    assert {p.label for p in pons.positions} == {"L3_R1"}
    moves, score = lines[0].split()
    path.write_text(f"{moves} {int(score) + 1}\n")
    with pytest.raises(SetFileError, match="the file says"):
        read_set(path, analyse=lambda board: exact_scores(board, None))


def test_positions_too_dear_to_solve_are_unknown_never_guessed() -> None:
    grade_set, report = build_set(Geometry(8, 8), 1, 1, node_limit=2000)
    unknown = [p for p in grade_set.positions if not p.known]
    assert unknown and all(p.label.endswith("_R?") for p in unknown)
    assert report.solved >= len(grade_set.positions)


# -- metrics ------------------------------------------------------------------


def test_wilson_interval_matches_the_textbook_figures() -> None:
    low, high = wilson(81, 263)  # Wilson (1927) as Newcombe (1998) gives it: 0.2553-0.3662
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


def test_every_best_column_is_perfect_and_a_kept_class_is_good(small_set: GradeSet) -> None:
    position = next(p for p in small_set.positions if len(p.best_columns()) > 1)
    grades = [Grade(position, "s", col) for col in position.best_columns()]
    assert all(g.perfect and g.good and not g.mistake for g in grades)


# -- known agents ---------------------------------------------------------------


def test_always_best_scores_all_perfect_where_one_move_is_best(small_set: GradeSet, set_file: Path) -> None:
    single = replace(small_set, positions=tuple(p for p in small_set.positions if len(p.best_columns()) == 1))
    agent = python_agent("best")
    try:
        total = summarise(grade_sets(agent, [single]))
    finally:
        agent.close()
    assert total.positions == len(single.positions) > 10
    assert total.perfect.count == total.good.count == total.positions


def test_always_worst_scores_nothing_where_the_worst_spoils_the_result(small_set: GradeSet, set_file: Path) -> None:
    def spoils(scores: tuple[int | None, ...]) -> bool:
        known = [s for s in scores if s is not None]
        return (min(known) > 0) - (min(known) < 0) < (max(known) > 0) - (max(known) < 0)
    spoiling = replace(small_set, positions=tuple(p for p in small_set.positions if spoils(p.scores or ())))
    agent = python_agent("worst")
    try:
        total = summarise(grade_sets(agent, [spoiling]))
    finally:
        agent.close()
    assert total.positions == len(spoiling.positions) > 5
    assert total.perfect.count == total.good.count == 0 and total.mistake.count == total.positions


def test_a_seeded_random_mover_s_rates_match_a_count_made_with_bitbully(small_set: GradeSet) -> None:
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully()
    agent = RandomAgent(5)
    grades = grade_sets(agent, [small_set])
    perfect = good = 0
    for p in small_set.positions:
        board = p.board(STANDARD)
        scores = oracle.score_all_moves(bitbully.Board(list(board.history)))
        played = agent.move(board)
        best = max(scores.values())
        perfect += scores[played] == best
        good += (scores[played] > 0) - (scores[played] < 0) == (best > 0) - (best < 0)
    total = summarise(grades)
    assert (total.perfect.count, total.good.count) == (perfect, good)
    assert 0 < perfect < good < len(small_set.positions)
    assert summarise(grade_sets(RandomAgent(5), [small_set])) == total  # the same seed, the same grades


# -- bad agents --------------------------------------------------------------------


@pytest.mark.parametrize(("name", "says"), [
    ("raises", "raised RuntimeError: the agent's own bug"),
    ("hangs", "no move within 1 s"),
    ("illegal", "illegal move 99: column 99 is off the board"),
    ("fraction", "returned '3.5' (float), not a whole number"),
    ("kaggle_fraction", "returned '3.5' (float), not a whole number"),  # never rounded to column 3
    ("crashes", "the agent's process died (killed by signal 11"),
])
def test_a_bad_agent_fails_those_positions_only_and_grading_goes_on(small_set: GradeSet, name: str,
                                                                    says: str) -> None:
    few = replace(small_set, positions=tuple(p for p in small_set.positions if p.stones < 12)[:8])
    bad = [p for p in few.positions if p.stones % 3 == 0]
    assert 0 < len(bad) < len(few.positions)
    agent = PythonAgent(f"{AGENTS}:{name}", "kaggle" if name.startswith("kaggle") else "position", 1.0)
    try:
        grades = grade_sets(agent, [few])
    finally:
        agent.close()
    failed = [g for g in grades if g.failure]
    assert [g.position for g in failed] == bad
    assert all(says in g.failure for g in failed), failed[0].failure
    assert all(g.played is not None for g in grades if not g.failure)


def test_an_agent_s_prints_do_not_garble_its_moves(small_set: GradeSet) -> None:
    agent = python_agent("prints")
    try:
        grades = grade_sets(agent, [replace(small_set, positions=small_set.positions[:3])])
    finally:
        agent.close()
    assert not any(g.failure for g in grades)


def test_an_agent_that_cannot_be_loaded_stops_the_command_with_a_clear_error(set_file: Path) -> None:
    result = CliRunner().invoke(grade_command, ["run", str(set_file), "--python", "no_such_module_here:agent"])
    assert result.exit_code == 1
    assert "the agent cannot be used" in result.output and "no_such_module_here" in result.output


# -- the command line --------------------------------------------------------------


def test_build_then_run_as_json(tmp_path: Path) -> None:
    path = tmp_path / "tiny.set"
    built = CliRunner().invoke(grade_command, ["build", str(path), "--per-class", "2", "--seed", "4"])
    assert built.exit_code == 0, built.output
    result = CliRunner().invoke(grade_command, ["run", str(path), "--random", "2", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["all"]["positions"] == 12 and document["board"] == "7x6"
    assert set(document["by_set"]) == {f"tiny.set/L{c}" for c in
                                       ("1_R1", "1_R2", "1_R3", "2_R1", "2_R2", "3_R1")}
    first = document["positions"][0]
    assert first["perfect"] == (first["score"] == max(s for s in first["scores"] if s is not None))


def test_games_are_graded_move_by_move(tmp_path: Path) -> None:
    games = tmp_path / "games.txt"
    games.write_text("4455443\n")  # the first player wins in column 4's
    result = CliRunner().invoke(grade_command, ["run", "--games", str(games), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["all"]["positions"] == 7
    last = document["positions"][-1]
    assert last["moves"] == "445544" and last["played"] == 3 and last["perfect"]


def test_random_agent_moves_depend_on_the_position_alone() -> None:
    board = build_set(STANDARD, 7, 1)[0].positions[0].board(STANDARD)
    assert RandomAgent(3).move(board) == RandomAgent(3).move(board)
    moves = {RandomAgent(seed).move(board) for seed in range(20)}
    assert len(moves) > 1


def test_analyse_with_a_node_cap_refuses_what_needs_more_and_spoils_nothing() -> None:
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    import c4engine
    from c4engine import Position
    moves = "4453112633"  # a middle game: more than 50 nodes a column, past nothing the book holds
    with pytest.raises(c4engine.SolveLimitReached, match="more than 50 nodes"):
        c4engine.analyse(Position.from_moves(moves + "5656"), nodes=50)
    with pytest.raises(ValueError, match="nodes"):
        c4engine.analyse(Position.from_moves(moves), nodes=0)
    expected = bitbully.BitBully().score_all_moves(bitbully.Board([int(c) - 1 for c in moves + "5656"]))
    scores = c4engine.analyse(Position.from_moves(moves + "5656"), nodes=10**9)
    assert scores == {col + 1: score for col, score in expected.items()}


def test_a_pettingzoo_policy_sees_connect_four_v3_s_planes_and_mask(small_set: GradeSet) -> None:
    few = replace(small_set, positions=small_set.positions[:6])
    policy = PythonAgent(f"{AGENTS}:first_free", "pettingzoo")
    first = python_agent("prints")  # the first legal column, from the Position
    try:
        assert [g.played for g in grade_sets(policy, [few])] == [g.played for g in grade_sets(first, [few])]
    finally:
        policy.close()
        first.close()


def test_openspiel_s_mcts_takes_a_win_at_once(small_set: GradeSet) -> None:
    from c4engine.rules.scores import win_now
    wins = replace(small_set, positions=tuple(p for p in small_set.positions
                                              if p.best == win_now(p.stones, STANDARD.cells))[:4])
    assert wins.positions
    agent = PythonAgent("mcts:50", "openspiel")
    try:
        assert all(g.perfect for g in grade_sets(agent, [wins]))
    finally:
        agent.close()


def test_pons_files_are_imported_once_into_a_set_that_keeps_their_classes(small_set: GradeSet,
                                                                          tmp_path: Path) -> None:
    late = [p for p in small_set.positions if p.label == "L3_R1"]
    pons = tmp_path / "Test_L3_R1"  # Pons' form: the moves and the position's score
    pons.write_text("".join(f"{p.moves} {p.best}\n" for p in late))
    result = CliRunner().invoke(grade_command, ["import", str(tmp_path / "pons.set"), str(pons)])
    assert result.exit_code == 0, result.output
    imported = read_set(tmp_path / "pons.set")
    assert [(p.moves, p.scores, p.label, p.kind) for p in imported.positions] == \
        [(p.moves, p.scores, "L3_R1", "pons") for p in late]


def test_an_output_that_cannot_be_written_is_a_clear_error(set_file: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder"
    built = CliRunner().invoke(grade_command, ["build", str(missing / "x.set"), "--per-class", "1"])
    assert built.exit_code == 1 and f"cannot write {missing / 'x.set'}" in built.output
    graded = CliRunner().invoke(grade_command, ["run", str(set_file), "--random", "1", "--html", str(missing / "r.html")])
    assert graded.exit_code == 1 and "cannot write" in graded.output


def test_an_agent_drawing_from_global_randomness_gets_the_same_grades_twice(small_set: GradeSet) -> None:
    played = []
    for _ in range(2):
        agent = python_agent("at_random")
        try:
            played.append([g.played for g in grade_sets(agent, [small_set])])
        finally:
            agent.close()
    assert played[0] == played[1] and len(set(played[0])) > 3


def test_a_board_past_nine_columns_is_refused_for_sets(tmp_path: Path) -> None:
    result = CliRunner().invoke(grade_command, ["build", str(tmp_path / "wide.set"), "--board", "10x8"])
    assert result.exit_code == 2 and "9 columns" in result.output
    assert not (tmp_path / "wide.set").exists()


def test_played_games_in_pgn_are_graded_for_one_player(tmp_path: Path) -> None:
    games = tmp_path / "games.pgn"
    games.write_text('[White "Ann"]\n[Black "Bob"]\n[Result "1-0"]\n\n1. 4 5 2. 4 5 3. 4 5 4. 4 1-0\n')
    result = CliRunner().invoke(grade_command, ["run", "--games", str(games), "--player", "Ann", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [p["moves"] for p in document["positions"]] == ["", "45", "4545", "454545"]
    assert document["positions"][-1]["perfect"] and document["agent"] == "Ann"


@pytest.mark.parametrize(("mode", "says"), [
    ("crash", "the engine failed"),
    ("stall", "no move in time"),
    ("illegal", "illegal move"),
])
def test_a_bad_engine_fails_every_position_and_grading_goes_on(small_set: GradeSet, mode: str, says: str) -> None:
    import sys
    from c4engine.engine.limits import Limit
    from c4engine.grading.agents import EngineAgent
    few = replace(small_set, positions=small_set.positions[:2])
    command = f"{sys.executable} {TESTS / 'engines' / 'misbehaving_engine.py'} {mode}"
    agent = EngineAgent(command, [], Limit(time=0.05), STANDARD)
    try:
        grades = grade_sets(agent, [few])
    finally:
        agent.close()
    assert len(grades) == 2 and all(says in g.failure for g in grades), [g.failure for g in grades]
