"""The Kaggle submission, run as Kaggle runs it.

``c4engine connectx bundle`` writes the archive; it is unpacked into a folder of
its own and played there by kaggle-environments 1.12.0 in a virtual environment
that has it, numpy and numba but not c4engine: ``env.run(["main.py",
"negamax"])`` loads the file agent as Kaggle does (its last callable, loaded
inside its first, timed move).  It must win as the first player, not lose as
the second, and answer every move, the first included, within ``actTimeout``
(Kaggle's default, 2 s), on 7x6 and on 8x7.  The virtual environment is made
once per session; numba is pinned to this one's version, whose cache the
bundle carries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parent.parent
GAME = """
import json, sys
from kaggle_environments import make
columns, rows, inarow = map(int, sys.argv[1:4])
ours_first = sys.argv[4] == "first"
env = make("connectx", configuration={"columns": columns, "rows": rows, "inarow": inarow})
env.run(["main.py", "negamax"] if ours_first else ["negamax", "main.py"])
ours = 0 if ours_first else 1
durations = [step[ours]["duration"] for step in env.logs if step and len(step) > ours and step[ours]]
print(json.dumps({"rewards": [s.reward for s in env.state], "statuses": [s.status for s in env.state],
                  "durations": durations, "act_timeout": env.configuration.actTimeout}))
"""


def without_checkout() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "NUMBA_CPU_NAME")}


@pytest.fixture(scope="session")
def kaggle_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with kaggle-environments 1.12.0, numpy and this numba, and no c4engine."""
    import numba

    folder = tmp_path_factory.mktemp("kaggle-venv")
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "kaggle-environments==1.12.0", "numpy",
                    f"numba=={numba.__version__}"], check=True, timeout=1200, env=without_checkout())
    absent = subprocess.run([str(python), "-c", "import c4engine"], cwd=folder, capture_output=True,
                            env=without_checkout())
    assert absent.returncode != 0, "c4engine must not be importable in the Kaggle venv"
    return python


def unpacked_bundle(folder: Path, board: str) -> tuple[Path, int]:
    """The bundle for ``board``, as the command writes it, unpacked into ``folder``; its size."""
    archive = folder / "submission.tar.gz"
    subprocess.run([sys.executable, "-m", "c4engine", "connectx", "bundle", "--out", str(archive), "--board", board],
                   check=True, timeout=1200, capture_output=True)
    with tarfile.open(archive) as bundle:
        assert bundle.getnames()[0] == "main.py"
        bundle.extractall(folder / "agent", filter="data")
    return folder / "agent", archive.stat().st_size


@pytest.mark.parametrize("board", ["7x6", "8x7"])
def test_the_bundle_wins_first_and_holds_second_within_act_timeout(
        board: str, kaggle_python: Path, tmp_path: Path) -> None:
    agent, size = unpacked_bundle(tmp_path, board)
    assert size < 100 * 1000 * 1000  # Kaggle's limit for a simulation submission
    assert (agent / "book" / "12-ply-dist.dat").is_file() == (board == "7x6")
    columns, rows = board.split("x")
    for order in ("first", "second"):
        done = subprocess.run([str(kaggle_python), "-c", GAME, columns, rows, "4", order], cwd=agent,
                              capture_output=True, text=True, timeout=900, env=without_checkout())
        assert done.returncode == 0, done.stderr[-3000:]
        game = json.loads(done.stdout.strip().splitlines()[-1])
        ours = 0 if order == "first" else 1
        assert game["statuses"] == ["DONE", "DONE"], game
        assert game["rewards"][ours] == 1 if order == "first" else game["rewards"][ours] >= 0, game
        assert max(game["durations"]) <= game["act_timeout"], game
