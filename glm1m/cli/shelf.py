"""`glm1m shelf list`: the documents kept read (name, pages or sections, tokens, added);
`glm1m shelf rm NAME_OR_HASH_PREFIX`: delete one. Both act on the shelf of an app without login,
or a user's with --user (the shelf the page and `glm1m summarize --user` read through).
Exit 0 when done, 2 with one line on stderr when nothing (or more than one document) matches.
"""

from __future__ import annotations

import argparse

from glm1m.catalog import said
from glm1m.cli.output import say
from glm1m.settings import Settings
from glm1m.sizes import mb


def add_command(commands: argparse._SubParsersAction) -> None:
    shelf = commands.add_parser("shelf", help="list or delete the documents kept read (the shelf)")
    actions = shelf.add_subparsers(dest="shelf_command", required=True)
    listing = actions.add_parser("list", help="the documents on the shelf, latest first")
    remove = actions.add_parser("rm", help="delete a document from the shelf (its kept text and "
                                           "counts; chats that cited it keep their text)")
    remove.add_argument("name", metavar="NAME_OR_HASH_PREFIX",
                        help="the name it was first attached with, or its hash's first digits")
    for parser in (listing, remove):
        parser.add_argument("--user", default=None,
                            help="a login name: that user's shelf (default: the one shelf of an "
                                 "app without login)")
    listing.set_defaults(run=cmd_shelf_list)
    remove.set_defaults(run=cmd_shelf_rm)


def cmd_shelf_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from glm1m.documents.shelf import Shelf

    settings = Settings()
    shelf = Shelf.of(settings.data_dir, settings.shelf_max_mb, args.user)
    entries = shelf.entries()
    table = Table(title=f"Shelf ({mb(shelf.used_bytes()):,.1f} of {mb(shelf.max_bytes):,.0f} MB)")
    for column in ("name", "pages or sections", "tokens", "added", "hash"):
        table.add_column(column, justify="right" if column in ("pages or sections", "tokens") else "left")
    for e in entries:
        tokens = ", ".join(f"{n:,}" + (f" ({k})" if len(e.tokens) > 1 else "")
                           for k, n in e.tokens.items()) or "not counted"
        table.add_row(e.name, f"{e.locations:,} {e.unit}", tokens, added_words(e.added), e.sha256[:12])
    if not entries:
        say(said("cli_shelf_empty"))
        return 0
    Console(width=160).print(table)
    return 0


def cmd_shelf_rm(args: argparse.Namespace) -> int:
    from glm1m.documents.shelf import Shelf

    settings = Settings()
    removed = Shelf.of(settings.data_dir, settings.shelf_max_mb, args.user).remove(args.name)
    say(said("cli_shelf_removed", name=removed.name, hash=removed.sha256[:12], mb=mb(removed.bytes)))
    return 0


def added_words(when: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(when)) if when else "?"
