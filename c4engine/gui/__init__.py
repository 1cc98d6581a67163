"""The web board (``c4engine gui``): a local aiohttp server and its bundled page.

A client of the protocol only: it drives an engine process (c4engine or any
``cfour`` engine) and never imports the search.
"""
