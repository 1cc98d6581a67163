"""The search driver in Python: the table's memory, threads, limits, stop, iterative deepening.

It calls the kernel (:mod:`c4engine.kernel`) and hands back reports and results;
the protocol process and the Python API sit above it."""
