"""``c4engine grade``: exact grades for any agent on any board.

- :mod:`.sets`: the set files (positions with every column's exact score) and
  Pons' test files, read and checked;
- :mod:`.build`: how a set is made, from a seed;
- :mod:`.metrics`: perfect, good, mistake, with Wilson intervals, by set,
  class and phase;
- :mod:`.agents`: the agents asked for moves (a Python function in a child
  process, an engine process, a seeded random mover) and their failures;
  :mod:`.child` is the child process;
- :mod:`.runner`: an agent graded on sets, or the moves of played games (read
  as ``c4engine review`` reads them);
- :mod:`.report`: the terminal table and the JSON document;
  :mod:`.html` the offline HTML report;
- :mod:`.command`: the ``c4engine grade`` commands.
"""
