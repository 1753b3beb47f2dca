"""`glm1m up` (what `make run` runs): the model server, then the Chainlit UI in front of it, on
this machine; Ctrl-C stops both."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from glm1m.catalog import said
from glm1m.cli.output import fail, say
from glm1m.cli.serve import add_serve_args, record_served, serve_options
from glm1m.errors import StartFailed
from glm1m.server.launch import ServeOptions
from glm1m.settings import Settings

UI_READY_TIMEOUT_S = 120.0
UI_ROOT_FILES = ("chainlit.md", "chainlit_zh-CN.md", ".chainlit/config.toml")
UI_ROOT_FOLDERS = (".chainlit/translations", "public")
# The page Chainlit serves, without what it asks of other hosts: .chainlit/config.toml's
# custom_build names this folder of DATA_DIR/ui.
OFFLINE_FRONTEND = "offline-frontend"
# Chainlit 2.12's index.html links Google's Inter font and KaTeX's stylesheet from jsDelivr, neither
# behind a setting (its theme.json's custom_fonts replaces only the font, and latex = false leaves
# KaTeX's link). A machine without internet waited on them and drew fallbacks; glm1m turns LaTeX
# off, and the page's fonts are the system's (Chinese ones included). tests/unit/test_offline_page.py
# fails when a release's index.html links other hosts differently.
OUTSIDE_LINK = re.compile(r'[ \t]*<link\b[^>]*\bhref="https?://[^"]*"[^>]*>\n?', re.DOTALL)


def ui_package_dir() -> Path:
    """Where the glm1m.chainlit_app package lies (chainlit_app/ of a checkout installed with -e,
    site-packages/glm1m/chainlit_app/ otherwise); found, not imported: the core never imports the
    web door."""
    spec = importlib.util.find_spec("glm1m.chainlit_app")
    if spec is None or spec.origin is None:
        raise StartFailed(key="ui_missing")
    return Path(spec.origin).parent


def ui_command(host: str, port: int) -> list[str]:
    app = ui_package_dir() / "app.py"
    return [sys.executable, "-m", "chainlit", "run", str(app), "--host", host, "--port", str(port),
            "--headless"]


def prepare_ui_root(settings: Settings) -> Path:
    """Chainlit reads .chainlit/config.toml and chainlit.md from its working directory and writes
    .files/ there: give it DATA_DIR/ui, with the config shipped in chainlit_app/ui copied in
    (again at every start, so an upgrade's config applies), never the package's own folder."""
    shipped = ui_package_dir() / "ui"
    root = settings.data_dir / "ui"
    for name in UI_ROOT_FILES:
        if (shipped / name).exists():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shipped / name, root / name)
    for folder in UI_ROOT_FOLDERS:
        shutil.copytree(shipped / folder, root / folder, dirs_exist_ok=True)
    offline_frontend(root / OFFLINE_FRONTEND)
    return root.resolve()


def offline_frontend(build: Path) -> Path:
    """Chainlit's built page in `build` (its custom_build), the index without the links to other
    hosts (OUTSIDE_LINK); its assets hard-linked where one file system allows it, else copied (Chainlit
    serves an asset only from inside the build folder, a symlink's target is not). Found, not
    imported: the core never imports Chainlit."""
    spec = importlib.util.find_spec("chainlit")
    if spec is None or spec.origin is None:
        raise StartFailed(key="ui_missing")
    dist = Path(spec.origin).parent / "frontend" / "dist"
    wanted = {path.relative_to(dist) for path in dist.rglob("*")
              if path.is_file() and path.suffix != ".map" and path.name != "index.html"}
    for old in [path for path in build.rglob("*") if path.is_file()] if build.exists() else []:
        if old.relative_to(build) not in wanted and old.name != "index.html":
            old.unlink()  # a file of an earlier Chainlit's build
    for name in wanted:
        source, target = dist / name, build / name
        if target.exists() and target.stat().st_size == source.stat().st_size:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
    index = (dist / "index.html").read_text(encoding="utf-8")
    (build / "index.html").write_text(OUTSIDE_LINK.sub("", index), encoding="utf-8")
    return build


def add_command(commands: argparse._SubParsersAction) -> None:
    up = commands.add_parser("up", help="start the model server and the Chainlit UI (make run)")
    up.add_argument("--ui-host", default="127.0.0.1")
    up.add_argument("--ui-port", type=int, default=8001)
    add_serve_args(up)
    up.set_defaults(run=cmd_up)


def ui_env(server: ServeOptions, tokenize_url: str = "") -> dict[str, str]:
    """`server`: the model server, or the router in front of replicas (then `tokenize_url` is a
    replica's: vllm-router 0.1.17 cannot pass the key on /tokenize, see server/router.py)."""
    env = dict(os.environ)
    env["GLM1M_BASE_URL"] = f"{server.base_url}/v1"
    if tokenize_url:
        env["GLM1M_TOKENIZE_URL"] = tokenize_url
        env["GLM1M_HEALTH_PATH"] = "/readiness"  # the router's: 200 while one server answers
    env["GLM1M_DEMO"] = "true" if server.demo else "false"
    if server.api_key:
        env["GLM1M_API_KEY"] = server.api_key
    return env


def start_ui(server: ServeOptions, host: str, port: int, settings: Settings,
             log_path: str, tokenize_url: str = "") -> subprocess.Popen:
    from glm1m.server import process

    process.require_free_port(host, port, said("what_ui"))
    root = prepare_ui_root(settings)
    return process.start(ui_command(host, port), env=ui_env(server, tokenize_url), cwd=str(root),
                         log_path=log_path)


def ui_answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def wait_ui(proc: subprocess.Popen, url: str, log_path: str) -> None:
    from glm1m.server import process

    process.wait_until(lambda: ui_answers(url), proc, said("what_chainlit_ui"), UI_READY_TIMEOUT_S, log_path)


def cmd_up(args: argparse.Namespace) -> int:
    from glm1m.cli.serve import give_back_shm
    from glm1m.cli.users import ensure_first_user
    from glm1m.server import launch, process, shm

    settings = Settings()
    shm_before = shm.regions()  # another server's; ours are removed after ours stop (serve.py)
    options = serve_options(args, settings)
    # The UI refuses to start without a user when login is on: ask now, not after the model loads.
    problem = ensure_first_user(settings.model_copy(update={"demo": options.demo}), sys.stdin.isatty())
    if problem:
        return fail(problem)
    try:
        settings.log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return fail(StartFailed(key="logs_unwritable", folder=settings.log_dir, reason=error.strerror))
    server_log, ui_log = str(settings.log_dir / "vllm.log"), str(settings.log_dir / "chainlit.log")
    if options.demo:
        say(said("cli_demo"))
    if args.replicas > 1:
        return up_replicas(args, options, settings, shm_before)
    say(said("cli_starting_server", log=server_log))
    children: list[subprocess.Popen] = []
    try:
        children.append(launch.start(options, settings, log_path=server_log))
        launch.wait_ready(children[0], options, server_log)
        record_served(options, args, settings)
        say(said("cli_server_ready_ui", url=options.base_url, log=ui_log))
        url = f"http://{args.ui_host}:{args.ui_port}"
        children.append(start_ui(options, args.ui_host, args.ui_port, settings, ui_log))
        wait_ui(children[1], url, ui_log)
        say(said("cli_open_both", url=url))
        return wait_any(children, server_log)
    except KeyboardInterrupt:
        say(said("cli_stopping"))
        return 0
    finally:
        for child in reversed(children):
            process.stop(child)
        if children:
            give_back_shm(shm_before, [children[0].pid])


def wait_any(children: list[subprocess.Popen], server_log: str) -> int:
    """Block until one child exits (then the finally-clause stops the other); say which and why."""
    from glm1m.server import exit_reason

    pid, status = os.wait()
    code = os.waitstatus_to_exitcode(status)
    if pid == children[0].pid:
        say(exit_reason.exited_said(said("what_model_server"), code, server_log, said("when_serving")))
        say(said("cli_stopping_ui"))
    else:
        say(said("cli_ui_exited", code=code))
    return 1


def up_replicas(args: argparse.Namespace, options: ServeOptions, settings: Settings,
                shm_before: frozenset[Path]) -> int:
    """`glm1m up --replicas N`: the replicas and the router (glm1m serve --replicas), then the UI
    talking to the router; a replica that exits is started again, the UI or the router ending
    stops everything."""
    from dataclasses import replace

    from glm1m.cli.serve import give_back_shm, plan_replicas, ready_line
    from glm1m.server import replicas

    procs: list[subprocess.Popen] = []
    ui_log = str(settings.log_dir / "chainlit.log")
    try:
        stack = plan_replicas(args, options, settings)
        procs = replicas.start_stack(stack, settings, settings.log_dir, say)
        record_served(stack.servers[0], args, settings)
        say(said("cli_ready_starting_ui", ready=ready_line(stack), log=ui_log))
        front = replace(options, host=stack.router.host, port=stack.router.port)
        url = f"http://{args.ui_host}:{args.ui_port}"
        procs.append(start_ui(front, args.ui_host, args.ui_port, settings, ui_log,
                              tokenize_url=stack.servers[0].base_url))
        wait_ui(procs[-1], url, ui_log)
        say(said("cli_open_all", url=url))
        return replicas.supervise(procs, stack, settings, settings.log_dir, say, shm_before)
    except KeyboardInterrupt:
        say(said("cli_stopping"))
        return 0
    finally:
        replicas.stop_stack(procs)
        give_back_shm(shm_before, [p.pid for p in procs])
