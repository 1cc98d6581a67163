"""MkDocs hook: the command-line reference, generated from click at build time.

``reference/cli.md`` holds the marker ``<!-- cli-reference -->``; this hook puts
in its place the ``--help`` text of ``c4engine`` and of every subcommand, as the
user sees it, walking the commands as click does (``list_commands`` and
``get_command``), so that the subcommands imported on first use appear too.
The page cannot drift from the code: it is the code's own help.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

MARKER = "<!-- cli-reference -->"
PROGRAM = "c4engine"


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (MkDocs' signature)
    if MARKER not in markdown:
        return markdown
    from c4engine.cli import cli

    return markdown.replace(MARKER, "\n".join(command_sections(cli)))


def command_sections(root: click.Command) -> Iterator[str]:
    """A heading and the help text of ``root`` and of each command below it, depth first."""
    for path, command, context in walk(root, click.Context(root, info_name=PROGRAM)):
        level = "#" * min(2 + len(path), 4)
        yield f"{level} `{' '.join((PROGRAM, *path))}`\n"
        yield f"```text\n{command.get_help(context).rstrip()}\n```\n"


def walk(command: click.Command, context: click.Context,
         path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    yield path, command, context
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            child = command.get_command(context, name)
            if child is not None and not child.hidden:
                yield from walk(child, click.Context(child, info_name=name, parent=context), (*path, name))
