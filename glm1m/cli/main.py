"""`glm1m` command line: serve the model, run the whole workbench, and batch work from the shell.

Each subcommand lives in its own module, which imports its heavy libraries (vLLM's client, PyMuPDF,
pandas) only when it runs, so `glm1m --help` and `glm1m plan` start fast.
"""

from __future__ import annotations

import argparse
import signal
import sys

from pydantic import ValidationError

from glm1m.cli import extract, grid, plan, router, serve, shelf, summarize, translate, up, users
from glm1m.cli.output import fail
from glm1m.errors import UserFacingError
from glm1m.settings import load_settings, settings_error


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glm1m", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve.add_command(commands)
    up.add_command(commands)
    router.add_command(commands)
    translate.add_command(commands)
    plan.add_command(commands)
    summarize.add_command(commands)
    extract.add_command(commands)
    grid.add_command(commands)
    shelf.add_command(commands)
    users.add_command(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    # SIGTERM (from a test, systemd) and SIGHUP (a terminal closing) stop children like Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.default_int_handler)
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    """The command `argv` names, run; its exit code. The one place a command's error is said."""
    try:
        # The arguments first: --help never depends on the environment (argparse prints it and
        # exits here). Then the settings, which every command reads: a bad GLM1M_* value is said
        # in one sentence (not pydantic's traceback) before anything runs, whichever command.
        args = build_parser().parse_args(argv)
        load_settings()
        return int(args.run(args))
    # What a command refuses or fails with (a bad setting among them): its sentence in the CLI's
    # language, and the exit code its class carries (2: bad input, a setting, a plan; errors.py).
    except UserFacingError as error:
        return fail(error, error.exit_code)
    except ValidationError as error:  # Settings(...) built with a value a command was given
        if error.title != "Settings":
            raise
        return fail(settings_error(error))
