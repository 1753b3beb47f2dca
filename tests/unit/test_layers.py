"""The layers hold: Chainlit only in chainlit_app/, the core never reaches up into a door, and the
CLI's heavy libraries load only when a subcommand runs."""

from __future__ import annotations

import ast
import re
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


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# The checkout's folders and the installed packages they are (pyproject.toml maps them).
WEB_DOOR, SERVER = "glm1m.chainlit_app", "glm1m.server"


def test_everything_imports_the_server_and_the_web_door_under_glm1m() -> None:
    """`import server` or `import chainlit_app` works only with the checkout on sys.path, and there
    it would load a second copy of a module beside the glm1m.* one; installed, neither exists."""
    old_names = ("server", "chainlit_app")
    offenders = {str(p.relative_to(ROOT)): sorted(m for m in imports_of(p) if top(m) in old_names)
                 for p in sources("glm1m", "server", "chainlit_app", "bench", "tests", "data")}
    assert {path: found for path, found in offenders.items() if found} == {}


# Starlette is the HTTP toolkit Chainlit is built on; the router's front uses it as an HTTP relay
# (a catch-all route, a streamed answer that stops when the caller leaves), no page of any kind.
HTTP_RELAYS = {"server/router_front.py": {"starlette"}}


def test_only_chainlit_app_imports_the_ui_framework() -> None:
    def ui(path: Path) -> list[str]:
        relay = HTTP_RELAYS.get(str(path.relative_to(ROOT)), set())
        return sorted(m for m in imports_of(path) if top(m) in UI_LIBRARIES and top(m) not in relay)

    offenders = {str(p.relative_to(ROOT)): ui(p) for p in sources("glm1m", "server", "bench")}
    assert {path: found for path, found in offenders.items() if found} == {}


def test_the_core_and_the_server_never_import_the_web_door() -> None:
    offenders = {str(p.relative_to(ROOT)) for p in sources("glm1m", "server")
                 if any(within(m, WEB_DOOR) for m in imports_of(p))}
    assert offenders == set()


def test_server_uses_only_the_cores_errors_settings_and_catalog() -> None:
    """server/ sits below glm1m's core: it may share the error hierarchy, the one settings object
    and the catalog the errors are said from, nothing else (the CLI in glm1m/cli calls down into
    server/, never the reverse). And glm1m.affinity, a leaf: the key that picks a request's server
    behind a router, which glm1m's client sends and the router's front adds (one derivation)."""
    allowed = {"glm1m.errors", "glm1m.settings", "glm1m.catalog", "glm1m.affinity"}
    used = {m for p in sources("server") for m in imports_of(p)
            if top(m) == "glm1m" and not within(m, SERVER)}
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


# A table format's own modules: its source, its output, and the registry that names them all.
TABLE_CLASSES = {"CsvSource", "XlsxSource", "TableSource"}
TABLE_MODULES = {"glm1m/translation/table.py", "glm1m/translation/csv_output.py",
                 "glm1m/translation/xlsx.py", "glm1m/translation/xlsx_output.py"}


def names_in(node: ast.AST) -> set[str]:
    return ({n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)})


def test_nothing_outside_a_table_format_asks_which_format_a_table_is() -> None:
    """A new table format is one module and one line in translation/formats.py: the job, the CLI
    and the app's flows call the TableSource interface, and never branch on a source's class."""
    offenders = []
    for path in sources("glm1m", "chainlit_app", "server", "bench"):
        where = path.relative_to(ROOT).as_posix()
        if where in TABLE_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2
                    and names_in(node.args[1]) & TABLE_CLASSES):
                offenders.append(f"{where}:{node.lineno}")
    assert offenders == []


def test_each_file_suffix_glm1m_reads_is_written_once_in_its_registry() -> None:
    """The upload checks, the upload sorting, the CLI and the flows read the two registries (the
    documents' and the tables'); none keeps a list of suffixes of its own."""
    from glm1m.documents.formats import FORMATS as DOCUMENTS
    from glm1m.translation.formats import FORMATS as TABLES

    suffixes = {s for f in DOCUMENTS for s in f.suffixes} | set(TABLES)
    written: dict[str, list[str]] = {}
    for path in sources("glm1m", "chainlit_app", "server"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    node.value.lower() in suffixes:
                written.setdefault(node.value.lower(), []).append(path.relative_to(ROOT).as_posix())
    assert {s: places for s, places in written.items() if len(places) > 1} == {}
    assert set(written) == suffixes
    registries = {"glm1m.documents.formats", "glm1m.translation.formats"}
    for door in ("uploads.py", "upload_guard.py"):
        assert imports_of(ROOT / "chainlit_app" / door) >= registries, door


CJK = re.compile(r"[\u4e00-\u9fff]")


def test_sentences_in_two_languages_live_only_in_the_catalog() -> None:
    """A sentence a person reads is said from glm1m/catalog by its id and fields; nothing renders
    English and reads it back to say it in Chinese (the regex tables errors_zh.py and
    sentences_zh.py were that: rewording a core sentence silently dropped its Chinese), and no
    module keeps an (English, Chinese) pair or a table from English words to Chinese of its own
    (the page's STAGES_ZH was one: rewording a stage lost its Chinese), which would drift from the
    catalog."""
    modules = sources("glm1m", "chainlit_app", "server")
    assert [p.name for p in modules if p.stem.endswith("_zh")] == []
    assert [str(p.relative_to(ROOT)) for p in modules
            if any(m.split(".")[-1].endswith("_zh") for m in imports_of(p))] == []
    pairs = []
    for path in modules:
        if path.is_relative_to(ROOT / "glm1m" / "catalog"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            texts = [e.value for e in getattr(node, "elts", []) if isinstance(e, ast.Constant)
                     and isinstance(e.value, str)] if isinstance(node, ast.Tuple) else []
            if len(texts) == 2 and re.search(r"[A-Za-z]{2}", texts[0]) and CJK.search(texts[1]):
                pairs.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Dict) and any(  # English words -> Chinese (STAGES_ZH was one)
                    isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                    and re.search(r"[A-Za-z]{2}", str(k.value)) and CJK.search(str(v.value))
                    for k, v in zip(node.keys, node.values, strict=True)):
                pairs.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert pairs == []


def test_the_architecture_page_names_every_module() -> None:
    """docs/architecture.md says what each module owns: a module it does not name is one a reader
    of the page cannot find (an outside review found shelf.py, through_shelf.py and prompt_ids.py
    missing)."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = [str(p.relative_to(ROOT)) for p in sources("glm1m", "server", "chainlit_app")
               if p.name != "__init__.py" and f"`{p.name}`" not in page and f"{p.stem}`" not in page
               and f"/{p.name}`" not in page]
    assert unnamed == []


def test_the_cli_says_a_commands_error_in_one_place() -> None:
    """cli/main.py's `run` says every UserFacingError a command ends on, with its class's exit
    code (issue 35): 2 for bad input, 1 for a server that did not start or stopped (StartFailed).
    No other CLI module catches a UserFacingError or any subclass."""
    import glm1m.errors as errors

    classes = [name for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, errors.UserFacingError)]
    handlers = {p.name: sum(len(re.findall(rf"except \(?[\w, ]*\b{name}\b", p.read_text(encoding="utf-8")))
                            for name in classes)
                for p in (ROOT / "glm1m" / "cli").glob("*.py")}
    assert {name: n for name, n in handlers.items() if n} == {"main.py": 1}
