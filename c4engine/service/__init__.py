"""``c4engine serve``: the solver as a web service (issue 30).

A Pons-compatible ``/solve``, a tablebase-shaped ``/api/v1/position``, ``/health``
and ``/metrics`` over aiohttp, answering from the opening books first, then from a
persistent SQLite cache of exact answers, then from the engine's own searcher run
in-process on a bounded pool of worker threads.  docs/service.md is the
contract.  The package imports aiohttp only in :mod:`.app` and :mod:`.cli`, so
that the answers, the cache and the pool can be used and tested without it.
:mod:`.client` is the other side, ``c4engine.remote(url)``: the standard library
asking any such server.
"""
