"""The adapters' libraries are extras: the core install never imports them, and an
adapter whose library is missing says which extra installs it."""

from __future__ import annotations

import subprocess
import sys

LIBRARIES = ("pyspiel", "open_spiel", "pettingzoo", "gymnasium", "pygame")


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_package_and_the_library_free_adapters_import_no_library() -> None:
    code = ("import sys, c4engine, c4engine.integrations.player, c4engine.integrations.planes, "
            "c4engine.integrations.pettingzoo, c4engine.integrations.kaggle_agents; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {LIBRARIES!r}))")
    out = run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_missing_library_names_its_extra() -> None:
    for module, library, extra in (("openspiel", "pyspiel", "openspiel"), ("gymnasium", "gymnasium", "gymnasium")):
        out = run(f"import sys; sys.modules[{library!r}] = None; import c4engine.integrations.{module}")
        assert out.returncode != 0
        assert f"needs {library}: pip install 'c4engine[{extra}]'" in out.stderr, out.stderr
