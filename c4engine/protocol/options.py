"""The engine's UCI options: how they are announced, validated and stored.

Kept apart from the protocol loop so that the table of options (names, types,
ranges) is one piece of data that both the ``uci`` reply and ``setoption``
read, and ``protocol.md`` documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..geometry import MAX_WIDTH
from ..rules.notation import parse_int
from ..rules.variants import Variant, VariantError, VariantSet
from ..search.levels import FULL_STRENGTH, MAX_ELO, MIN_ELO
from ..search.memory import DEFAULT_HASH_MB
from .lines import MAX_LINE_BYTES

NO_PATH = "<empty>"  # Fairy-Stockfish's value for "no variants file"
STRENGTH_OPTIONS = ("Skill Level", "UCI_LimitStrength", "UCI_Elo")  # a level, or full strength


class OptionError(ValueError):
    """A ``setoption`` that names no option or gives a value out of range."""


@dataclass(frozen=True)
class Spec:
    """One option as ``uci`` announces it."""

    name: str
    kind: str  # spin, check, combo, button, string
    default: int | bool | str | None = None
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    def announce(self) -> str:
        line = f"option name {self.name} type {self.kind}"
        if self.kind == "check":
            line += f" default {'true' if self.default else 'false'}"
        elif self.kind == "spin":
            line += f" default {self.default} min {self.low} max {self.high}"
        elif self.kind == "combo":
            line = _with_choices(f"{line} default {self.default}", self.choices)
        elif self.kind == "string":
            line += f" default {self.default}"
        return line

    def parse(self, raw: str | None) -> int | bool | str | None:
        """The value a ``setoption`` gives this option, checked."""
        if self.kind == "button":
            return None
        if raw is None or raw == "":
            raise OptionError(f"option {self.name} needs a value")
        if self.kind == "string":
            return raw
        if self.kind == "spin":
            try:
                value = parse_int(raw)
            except ValueError as err:
                raise OptionError(f"option {self.name}: {err}") from None
            if not self.low <= value <= self.high:
                raise OptionError(f"option {self.name}: {value} is outside {self.low}-{self.high}")
            return value
        if self.kind == "check":
            if raw.lower() not in ("true", "false"):
                raise OptionError(f"option {self.name}: '{raw}' is not true or false")
            return raw.lower() == "true"
        for choice in self.choices:
            if raw.lower() == choice.lower():
                return choice
        raise OptionError(f"option {self.name}: '{raw}' is not one of {', '.join(self.choices)}")


def _with_choices(head: str, choices: tuple[str, ...]) -> str:
    """``head`` and `` var <choice>`` for each choice in order, up to the first that
    would take the line over the protocol's :data:`MAX_LINE_BYTES`: a variants file
    may name more games than one line holds, and a longer line would be dropped
    by the GUI, option and all.  A game left out is still accepted by name."""
    parts, size = [head], len(head.encode())
    for choice in choices:
        part = f" var {choice}"
        size += len(part.encode())
        if size > MAX_LINE_BYTES:
            break
        parts.append(part)
    return "".join(parts)


SPECS = (
    Spec("Hash", "spin", DEFAULT_HASH_MB, 2, 8192),
    Spec("Threads", "spin", 1, 1, 64),
    Spec("Clear Hash", "button"),
    Spec("Large Pages", "check", False),  # the table in 2 MB pages, mapped at once: for long searches
    Spec("Move Overhead", "spin", 30, 0, 5000),
    Spec("MultiPV", "spin", 1, 1, MAX_WIDTH),  # more lines than columns: every column
    Spec("Ponder", "check", False),
    Spec("OwnBook", "check", True),
    Spec("BookFile", "string", NO_PATH),  # a book built by `c4engine book build`
    Spec("UCI_Variant", "combo", "cfour", choices=("cfour",)),  # the choices: Options.variants
    Spec("VariantPath", "string", NO_PATH),
    Spec("Evaluation", "combo", "ntuple", choices=("learned", "ntuple", "threats", "centre")),  # search.weights.NAMES, DEFAULT
    Spec("Skill Level", "spin", FULL_STRENGTH, 0, FULL_STRENGTH),
    Spec("UCI_LimitStrength", "check", False),
    Spec("UCI_Elo", "spin", MAX_ELO, MIN_ELO, MAX_ELO),
)


def find_spec(name: str) -> Spec:
    """The option called ``name`` (UCI option names are case-insensitive)."""
    for spec in SPECS:
        if spec.name.lower() == name.lower():
            return spec
    raise OptionError(f"no option named '{name}'")


@dataclass
class Options:
    """Current option values, keyed by the option's name."""

    values: dict[str, int | bool | str | None] = field(
        default_factory=lambda: {spec.name: spec.default for spec in SPECS})
    variants: VariantSet = field(default_factory=VariantSet)

    def announce(self) -> list[str]:
        """The ``option`` lines of the ``uci`` reply; ``UCI_Variant`` lists the variants
        known now (a variants file adds its own)."""
        return [(replace(spec, choices=tuple(self.variants.names())) if spec.name == "UCI_Variant"
                 else spec).announce() for spec in SPECS]

    def __getitem__(self, name: str) -> int | bool | str | None:
        return self.values[name]

    def number(self, name: str) -> int:
        """A spin option's value."""
        value = self.values[name]
        assert isinstance(value, int), f"{name} is not a spin option"
        return value

    def text(self, name: str) -> str:
        """A combo option's value."""
        return str(self.values[name])

    def check(self, name: str, raw: str | None) -> tuple[Spec, int | bool | str | None]:
        """The option ``name`` and the value ``raw`` gives it, checked but not stored
        (so that a refused ``setoption`` changes nothing at all)."""
        spec = find_spec(name)
        if spec.name == "UCI_Variant":
            return spec, self.variant(raw).name
        return spec, spec.parse(raw)

    def variant(self, raw: str | None) -> Variant:
        """The variant a ``setoption name UCI_Variant`` names: any of :attr:`variants`,
        listed or not (``cfour-WxH`` for any board in range)."""
        if not raw:
            raise OptionError("option UCI_Variant needs a value")
        try:
            return self.variants.find(raw)
        except VariantError as err:
            raise OptionError(f"option UCI_Variant: {err}") from None

    def with_variants_file(self, path: str) -> VariantSet:
        """The variants with those of the file at ``path`` added (``<empty>``: none);
        OptionError, with nothing changed, when the file is refused."""
        if path == NO_PATH:
            return self.variants
        try:
            return self.variants.with_file(path)
        except VariantError as err:
            raise OptionError(f"option VariantPath: {err}") from None

    def store(self, name: str, value: int | bool | str | None) -> None:
        """Keep a value :meth:`check` accepted."""
        self.values[name] = value
