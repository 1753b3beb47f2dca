"""`glm1m users add NAME`: create a login for the UI, or set a new password for an existing one;
`glm1m users remove NAME`: delete one. Either ends the sessions NAME had (no restart needed).

The password is asked twice on the terminal, or read as one line from standard input with
--password-stdin (for scripts: `printf '%s\\n' "$PW" | glm1m users add alice --password-stdin`).
Exit 0 when the user is written, 2 with one line on stderr when the input is refused, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from glm1m.accounts import Accounts, PasswordHash, check_name, check_password
from glm1m.catalog import render, said
from glm1m.cli.output import fail, language, say
from glm1m.errors import UserFacingError
from glm1m.settings import Settings


def add_command(commands: argparse._SubParsersAction) -> None:
    users = commands.add_parser("users", help="manage the accounts that can log in to the UI")
    actions = users.add_subparsers(dest="users_command", required=True)
    add = actions.add_parser("add", help="add a user, or set the password of an existing one")
    add.add_argument("name", help="the login name (letters, digits, . _ @ + -; at most 64)")
    add.add_argument("--password-stdin", action="store_true",
                     help="read the password as one line from standard input")
    add.add_argument("--print", dest="print_only", action="store_true",
                     help="print NAME=HASH for GLM1M_USERS instead of writing the users file")
    add.set_defaults(run=cmd_users_add)
    remove = actions.add_parser("remove", help="remove a user; their open sessions end at once")
    remove.add_argument("name", help="the login name")
    remove.set_defaults(run=cmd_users_remove)


def cmd_users_add(args: argparse.Namespace) -> int:
    try:
        password = new_login(args.name, args.password_stdin)
        if args.print_only:
            print(f"{args.name}={PasswordHash.of(password).encode()}")
            return 0
        accounts = Accounts.from_settings(Settings())
        created = accounts.add_user(args.name, password)
    except EOFError:
        return fail(said("password_none"))
    except KeyboardInterrupt:
        return 130
    say(said("cli_user_added" if created else "cli_user_changed", name=args.name, path=accounts.path))
    return 0


def cmd_users_remove(args: argparse.Namespace) -> int:
    accounts = Accounts.from_settings(Settings())
    accounts.remove_user(args.name)
    say(said("cli_user_removed", name=args.name, path=accounts.path))
    return 0


def new_login(name: str, from_stdin: bool) -> str:
    """The password for a new login NAME, both checked; raises UserFacingError with the reason."""
    check_name(name)
    password = read_password(from_stdin)
    check_password(password)
    return password


def read_password(from_stdin: bool) -> str:
    """Raises UserFacingError when the two typed passwords differ or stdin is empty."""
    if from_stdin:
        line = sys.stdin.readline()
        if not line:
            raise UserFacingError(key="password_stdin_empty")
        return line.removesuffix("\n").removesuffix("\r")
    password = getpass.getpass(render(language(), "cli_ask_password"))
    if getpass.getpass(render(language(), "cli_ask_again")) != password:
        raise UserFacingError(key="passwords_differ")
    return password


def ensure_first_user(settings: Settings, interactive: bool) -> str | None:
    """Before `glm1m up` starts a UI that needs a login: None when someone can log in (or login
    is off), after asking for the first user at a terminal; else the sentence saying what to do.
    A malformed GLM1M_USERS or users file, or a refused name or password, is a UserFacingError
    that cli/main.py says (exit 2), before anything starts."""
    if not settings.auth_required:
        return None
    try:
        accounts = Accounts.from_settings(settings)
        if accounts.users():
            return None
        if not interactive:
            return render(language(), "cli_no_user_yet")
        say(said("cli_create_first_user"))
        name = input(render(language(), "cli_ask_name")).strip()
        accounts.add_user(name, new_login(name, False))
    except (EOFError, KeyboardInterrupt):
        return render(language(), "cli_no_user_created")
    return None
