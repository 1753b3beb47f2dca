"""The layers hold: Chainlit only in chainlit_app/, the core never reaches up into a door, and the
CLI's heavy libraries load only when a subcommand runs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

UI_LIBRARIES = ("chainlit", "fastapi", "starlette", "socketio")
HEAVY = ("pymupdf", "pandas", "openai", "langchain_text_splitters", "httpx", "rich")


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def sources(*folders: str) -> list[Path]:
    return [p for folder in folders for p in (ROOT / folder).rglob("*.py")]


def top(module: str) -> str:
    return module.split(".")[0]


def test_only_chainlit_app_imports_the_ui_framework() -> None:
    offenders = {str(p.relative_to(ROOT)): sorted(m for m in imports_of(p) if top(m) in UI_LIBRARIES)
                 for p in sources("glm1m", "server", "bench")}
    assert {path: found for path, found in offenders.items() if found} == {}


def test_the_core_and_the_server_never_import_the_web_door() -> None:
    offenders = {str(p.relative_to(ROOT)) for p in sources("glm1m", "server")
                 if any(top(m) == "chainlit_app" for m in imports_of(p))}
    assert offenders == set()


def test_server_uses_only_the_cores_errors_and_settings() -> None:
    """server/ sits below glm1m's core: it may share the error hierarchy and the one settings
    object, nothing else (the CLI in glm1m/cli calls down into server/, never the reverse)."""
    allowed = {"glm1m.errors", "glm1m.settings"}
    used = {m for p in sources("server") for m in imports_of(p) if top(m) == "glm1m"}
    assert used <= allowed


def test_files_stay_short_and_app_py_only_routes() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sources("glm1m", "server", "chainlit_app")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 360}
    assert long == {}
    assert len((ROOT / "chainlit_app" / "app.py").read_text(encoding="utf-8").splitlines()) < 200


def test_help_and_plan_load_no_heavy_library() -> None:
    """What `glm1m --help` and `glm1m plan` import, seen by the interpreter itself."""
    probe = ("import sys, runpy\n"
             "sys.argv = ['glm1m'] + sys.argv[1:]\n"
             "try:\n    runpy.run_module('glm1m.cli', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))")
    for argv, expected in ((["--help"], set()), (["plan", "--gpu", "h200"], {"rich"})):
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)
        assert done.returncode == 0, done.stderr
        loaded = {top(m) for m in ast.literal_eval(done.stdout.strip().splitlines()[-1])}
        assert loaded == expected, argv
