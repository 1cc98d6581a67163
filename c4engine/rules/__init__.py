"""The rules of the game in plain Python: bitboard tricks, positions, notation, scores.

The bottom layer: it imports nothing else of c4engine, and every layer above reads
the board through it."""
