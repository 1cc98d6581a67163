"""``c4engine review`` and ``c4engine.review()``: exact verdicts on every move of a game.

An engine process searches the positions of the game that
:class:`~c4engine.reviewer.verdicts.GameJudge` asks for (each position's value, and
every column of a position whose move was not kept), capped at ``movetime``
per search: with c4engine that is the opening book, then the exact solver, so
the scores are exact unless the cap hits first.  :mod:`.verdicts`
turns the scores into marks, so the web board, which drives its own engine the
same way, gives the same verdicts.

- :mod:`.games`: the games to review, read from PGN or digits (or given to the
  Python API), and the judge of each;
- :mod:`.driver`: the engine process that runs the judge's searches;
- :mod:`.report`: what a review writes: the annotated PGN, the players' table,
  the progress line, the JSON document;
- :mod:`.command`: the ``c4engine review`` command;
- :mod:`.verdicts`: scores into marks (kept, slower, mistake, blunder), the
  players' summaries; :mod:`.verdict_text` words them (PGN comments, JSON).
"""
