"""Every form of line protocol.md lets the engine write on standard output, as regular
expressions: the end-to-end tests and the fuzz test check each line they read
against them, so a stray or malformed line fails whichever test provoked it."""

from __future__ import annotations

import re

MOVE = r"(?:[1-9]|P@[a-z][1-9]\d?)"  # digits up to 9 columns, drops on any board
INFO_RE = re.compile(
    r"info depth (?P<depth>\d+) seldepth (?P<seldepth>\d+) multipv (?P<multipv>\d+) "
    r"score (?P<kind>cp|mate) (?P<value>-?\d+)(?: (?P<bound>lowerbound|upperbound))? nodes (?P<nodes>\d+) "
    r"nps (?P<nps>\d+) hashfull (?P<hashfull>\d+) time (?P<time>\d+) pv(?P<pv>(?: " + MOVE + r")*)")
BESTMOVE_RE = re.compile(r"bestmove (?P<move>" + MOVE + r"|\(none\))(?: ponder (?P<ponder>" + MOVE + r"))?")
ERROR_RE = re.compile(r"info string error \S.*")
DEBUG_RE = re.compile(r"info string debug depth=(None|\d+) nodes=(None|\d+) soft_ms=(None|\d+) "
                      r"hard_ms=(None|\d+) mate=(None|\d+) late_ms=\d+")

KNOWN_LINES = tuple(re.compile(p) for p in (
    r"id (name|author) \S.*",
    r"option name \S.* type (spin|check|combo|button|string)( .*)?",
    r"uciok", r"readyok",
    INFO_RE.pattern,
    ERROR_RE.pattern,
    DEBUG_RE.pattern,
    r"info string no opening book, searching without it: \S.*",
    r"info string the search is not ready yet: a quick move by the rules",
    r"info string the search is not ready yet: a move the interpreter solved \(score -?\d+\)",
    r"info string compiling the search for the \d+x\d+(k\d+)? board, new to this installation, in another "
    r"process: until it is ready a timed go is answered by the interpreter's exact solve or by the rules",
    r"info string no opening book for the \d+x\d+(k\d+)? board \(the book covers 7x6\)",
    r"info string searching the \d+x\d+(k\d+)? board without a book file: option BookFile: \S.*",
    r"info string no learned evaluation for the \d+x\d+(k\d+)? board: using the hand-written threat weights",
    r"info string evaluation ntuple: ntuple-\d+x\d+k\d+\.npz for the \d+x\d+(k\d+)? board"
    r"(, tuples beside the threat terms)?, held-out accuracy "
    r"(\d\.\d{4} on \d+ positions|not recorded \(made before c4engine train\))",
    r"info string table \d+ MB: (\d+ MB of it in 2 MB huge pages|4 kB pages, huge pages not asked for|"  # Large Pages
    r"4 kB pages, the system gives no huge pages \(transparent huge pages \w+\)|huge pages asked for, none touched yet|"
    r"4 kB pages, huge pages asked for but the system gave none \(no free 2 MB blocks\)|"
    r"huge pages asked for, the system does not say how many it gave)",
    BESTMOVE_RE.pattern,
    r"([.XO] )*[.XO]", r"1( [2-9])*", r"a( [b-z])*",                # d: the board
    r"Fen: \S+ [wb]( \S+)*", r"Side to move: (first player \(X\)|second player \(O\))",
    r"Moves: (\(none\)|" + MOVE + r"( " + MOVE + r")*)",
    r"term +X weight +X \(first\) +O weight +O \(second\)",         # eval
    r"[a-z][a-z0-9 ()-]*[a-z)] +-?\d+ +-?\d+ +-?\d+ +-?\d+", r"weighted total +-?\d+ +-?\d+",
    r"Evaluation \(side to move\): -?\d+ cp",
    r"n-tuple network: \d+ tuples of \d+ cells, each read on the mirror image too",
    r"threat terms beside it \(side to move\): -?\d+ cp",
    MOVE + r": \d+", r"", r"Nodes searched *: \d+",                # perft, bench
    r"info string perft stopped after \d+ of \d+ moves",
    r"Position +\d+/\d+ \S+ +bestmove -?\d+ nodes \d+", r"Total time \(ms\) *: \d+", r"Nodes/second *: \d+",
))


def is_known_line(line: str) -> bool:
    return any(p.fullmatch(line) for p in KNOWN_LINES)
