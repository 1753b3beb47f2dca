"""One installed namespace: setuptools maps the checkout's server/ and chainlit_app/ to glm1m.server
and glm1m.chainlit_app, and an installed glm1m never takes the folders around it for a checkout.
(tests/app/test_installed.py builds the wheel and looks at what lands in site-packages.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

import glm1m.chainlit_app
import glm1m.server
from glm1m.server import launch
from tests.conftest import ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_server_and_the_web_door_are_packages_under_glm1m() -> None:
    assert SETUPTOOLS["package-dir"] == {"glm1m.server": "server", "glm1m.chainlit_app": "chainlit_app"}
    assert [p for p in SETUPTOOLS["packages"] if p != "glm1m" and not p.startswith("glm1m.")] == []
    # The editable install (make setup) imports them from the checkout's own folders.
    assert Path(glm1m.server.__file__).resolve().parent == ROOT / "server"
    assert Path(glm1m.chainlit_app.__file__).resolve().parent == ROOT / "chainlit_app"


def test_every_folder_of_the_three_is_a_listed_package() -> None:
    """A mapped folder is not discovered by `packages.find`: a new subpackage (or a folder of data
    files, like monitoring/) that is not in the list would be missing from an installed glm1m."""
    roots = {"glm1m": ROOT / "glm1m",
             **{name: ROOT / folder for name, folder in SETUPTOOLS["package-dir"].items()}}
    folders = {".".join((name, *d.relative_to(root).parts))
               for name, root in roots.items() for d in [root, *root.rglob("*")]
               if d.is_dir() and d.name != "__pycache__"
               and not any(part.startswith(".") for part in d.relative_to(root).parts)
               and any(f.is_file() for f in d.iterdir())}
    assert folders == set(SETUPTOOLS["packages"])


def test_the_checkout_is_found_above_server() -> None:
    assert launch.CHECKOUT == ROOT and launch.PACKAGE_DIR == ROOT / "server"
    assert launch.TOOL_PARSER_PLUGIN.is_file() and (launch.MIDDLEWARE_DIR / "glm1m_route_guard.py").is_file()


def test_an_installed_glm1m_takes_nothing_around_site_packages_for_a_checkout(tmp_path: Path) -> None:
    """Installed, glm1m.server lies in site-packages/glm1m/server/: the folder above it is the glm1m
    package, and what happens to lie beside site-packages (a pyproject.toml, data/, .venv-server)
    is not glm1m's."""
    site = tmp_path / "lib" / "site-packages"
    (site / "glm1m" / "server").mkdir(parents=True)
    (site / "glm1m" / "__init__.py").touch()
    for stray in (site / "pyproject.toml", site / "glm1m" / "pyproject.toml",
                  site / "data" / "make_demo_model.py", site / ".venv-server" / "bin" / "python"):
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.touch()
    assert launch.source_checkout(site / "glm1m" / "server") is None
