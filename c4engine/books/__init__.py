"""Opening books of our own, for any board (``c4engine book``): every reachable position
at N plies solved exactly, progress kept in SQLite, optionally on a Ray cluster.

:mod:`.positions` enumerates, :mod:`.store` keeps the build's state, :mod:`.build`
solves (here or on Ray), :mod:`.root` solves the board from a finished book, and
:mod:`.cli` is the command.  The file format and the kernel's probe are
:mod:`c4engine.kernel.built_book`.
"""
