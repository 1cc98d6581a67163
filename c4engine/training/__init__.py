"""Training the evaluations: data, fits and the ``c4engine train`` pipeline.

A layer of its own, above the clients whose pieces it uses (the strength set's
positions, the book builder's progress bar, the cluster's connection) and
below the command line, which loads it only for ``c4engine train`` and
``c4engine held-out``; the engine never imports it (tests/test_layers.py).
"""
