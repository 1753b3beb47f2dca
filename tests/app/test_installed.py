"""`pip install .` (not -e) gives a working glm1m: the CLI runs, and the Chainlit app is found in
the installed package and keeps its runtime files in the data dir, none beside the source."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, app_env
from tests.support.service import Service, free_port

pytestmark = pytest.mark.app


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project as `pip install .` builds it (a wheel, no link to the checkout), in a folder
    of its own; its dependencies are the test venv's."""
    # Built from a copy of the sources: setuptools builds in the source folder (build/, egg-info),
    # and a build/ left there from an older tree would put stale modules in the wheel.
    source = tmp_path_factory.mktemp("source")
    for name in ("glm1m", "chainlit_app", "server"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), str(source)], check=True, timeout=600)
    return target


def env_for(site: Path, **extra: str) -> dict[str, str]:
    return app_env(PYTHONPATH=str(site), **extra)


def run(site: Path, cwd: Path, *code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *code], cwd=cwd, env=env_for(site), capture_output=True,
                          text=True, timeout=120)


def test_the_installed_cli_runs_from_anywhere(installed: Path, tmp_path: Path) -> None:
    where = run(installed, tmp_path, "-c", "import glm1m, glm1m.chainlit_app, glm1m.server; "
                "print(glm1m.__file__, glm1m.chainlit_app.__file__, glm1m.server.__file__)")
    assert where.returncode == 0, where.stderr
    assert all(path.startswith(str(installed)) for path in where.stdout.split())
    shown = run(installed, tmp_path, "-m", "glm1m.cli", "--help")
    assert shown.returncode == 0 and "summarize" in shown.stdout
    plan = run(installed, tmp_path, "-m", "glm1m.cli", "plan", "--gpu", "h200")
    assert plan.returncode == 0 and "--max-model-len" in plan.stdout
    # The shipped UI config travelled with the package.
    ui = installed / "glm1m" / "chainlit_app" / "ui"
    assert (ui / ".chainlit" / "config.toml").is_file()
    assert (ui / "public" / "lang.js").is_file()  # the page's <html lang>
    # ... and so did what vLLM loads by path (server/launch.py) and the monitoring config.
    server = installed / "glm1m" / "server"
    assert (server / "middleware" / "glm1m_route_guard.py").is_file()
    assert (server / "tool_parser_glm4.py").is_file() and (server / "glm4_chat_template.jinja").is_file()
    assert (server / "monitoring" / "prometheus.yml").is_file()


def test_the_installed_glm1m_is_one_namespace_and_no_checkout(installed: Path, tmp_path: Path) -> None:
    """Only glm1m (and its dist-info, and the `glm1m` script) lands in site-packages: nothing named
    `server` or `chainlit_app` that another package could clash with; and glm1m.server, installed,
    finds its plugins beside itself and no checkout around site-packages."""
    assert sorted(p.name for p in installed.iterdir() if not p.name.startswith("glm1m")) == ["bin"]
    assert not (installed / "server").exists() and not (installed / "chainlit_app").exists()
    for name in ("server", "chainlit_app"):
        gone = run(installed, tmp_path, "-c", f"import {name}")
        assert gone.returncode != 0 and f"No module named '{name}'" in gone.stderr
    probe = ("from glm1m.server import launch; "
             "print(launch.CHECKOUT, launch.TOOL_PARSER_PLUGIN, launch.MIDDLEWARE_DIR, sep='\\n')")
    found = run(installed, tmp_path, "-c", probe)
    assert found.returncode == 0, found.stderr
    checkout, plugin, middleware = found.stdout.splitlines()
    assert checkout == "None"
    assert Path(plugin) == installed.resolve() / "glm1m" / "server" / "tool_parser_glm4.py"
    assert Path(middleware) == installed.resolve() / "glm1m" / "server" / "middleware"


def test_the_installed_ui_starts_from_the_package_and_writes_only_to_the_data_dir(
        installed: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    probe = ("import sys, json; from glm1m.cli.up import prepare_ui_root, ui_command; "
             "from glm1m.settings import Settings; "
             "root = prepare_ui_root(Settings()); print(json.dumps([str(root), ui_command('127.0.0.1', "
             "int(sys.argv[1]))]))")
    port = free_port()
    done = subprocess.run([sys.executable, "-c", probe, str(port)], cwd=tmp_path, capture_output=True,
                          text=True, env=env_for(installed, GLM1M_DATA_DIR=str(data)), timeout=60)
    assert done.returncode == 0, done.stderr
    root, command = json.loads(done.stdout)
    assert Path(root) == (data / "ui").resolve() and command[4].startswith(str(installed))
    before = sorted(p.relative_to(installed) for p in installed.rglob("*") if "__pycache__" not in p.parts)
    ui = Service("installed-ui", command, ready=r"Your app is available at", log_dir=tmp_path,
                 env=env_for(installed, GLM1M_DATA_DIR=str(data), GLM1M_DEMO="true",
                             GLM1M_METRICS_PORT="0", GLM1M_BASE_URL="http://127.0.0.1:9/v1"),
                 cwd=root)
    try:
        ui.wait_ready(120)
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        assert page.status_code == 200 and "<html" in page.text.lower()
        # Login off on loopback: the local user, logged in as the page does it (no password).
        local = httpx.post(f"http://127.0.0.1:{port}/auth/header", timeout=30)
        assert local.status_code == 200
        project = httpx.get(f"http://127.0.0.1:{port}/project/settings?language=en-US", timeout=30,
                            cookies=local.cookies)
        assert project.status_code == 200 and project.json()["ui"]["name"] == "glm1m"
    finally:
        ui.stop()
    after = sorted(p.relative_to(installed) for p in installed.rglob("*") if "__pycache__" not in p.parts)
    assert after == before  # nothing written beside the installed source
    assert not (tmp_path / ".files").exists() and not (tmp_path / ".chainlit").exists()
    assert os.path.isfile(data / "ui" / ".chainlit" / "config.toml")
    assert os.path.isfile(data / "glm1m.db")  # the local user's history
