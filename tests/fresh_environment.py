"""The environment of a process started as a user's would be, from a test."""

from __future__ import annotations

import os

# What a test or the Kaggle bundle's main.py (which sets NUMBA_CPU_NAME for Kaggle's
# process) may have set in the test process, and what conftest puts on PYTHONPATH.
SETTINGS_PREFIXES = ("NUMBA_", "C4ENGINE_")
PATH_NAMES = ("PYTHONPATH", "PYTHONHOME")


def fresh_environment() -> dict[str, str]:
    """This process's environment without the checkout on the path and without any
    numba or c4engine setting: a child that must start as a fresh install does (the
    portable kernel is not used under NUMBA_CPU_NAME) is not steered by what ran
    before it in the same pytest session."""
    return {name: value for name, value in os.environ.items()
            if name not in PATH_NAMES and not name.startswith(SETTINGS_PREFIXES)}
