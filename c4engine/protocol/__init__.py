"""The engine process: the line protocol of ``protocol.md``, its options and ``go`` parameters.

The server answers ``uci`` before the kernel is loaded; the backend, which runs the
search, is imported in the background."""
