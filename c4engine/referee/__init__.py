"""The referee: tools that judge engines through the protocol, never through the search.

- :mod:`.cli`, :mod:`.config`, :mod:`.openings`, :mod:`.players`, :mod:`.game`,
  :mod:`.tally`, :mod:`.workers`: ``c4engine match``, split by concern;
- :mod:`.stats`: Elo, LOS, pentanomial counts and the SPRT;
- :mod:`.pgn`: games as cutechess writes them for ``cfour``;
- :mod:`.strength`: ``c4engine strength``, moves judged against exact scores.

Every engine is driven through :mod:`c4engine.engine`, so any engine that speaks
the protocol can be refereed.
"""
