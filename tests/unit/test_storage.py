"""Element files on disk and the owner-only route that serves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from chainlit.auth import get_current_user
from chainlit.user import PersistedUser
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.testclient import TestClient

from glm1m.chainlit_app.storage import LocalStorage, UnsafeObjectKey, file_router, mount_first

ALICE_KEY = "alice-id/element-1/report 1.pdf"


@pytest.fixture
def storage(tmp_path: Path) -> LocalStorage:
    return LocalStorage(tmp_path / "files")


@pytest.mark.parametrize("key", [
    "../outside", "u/../../outside", "/etc/passwd", "u/e/\0.txt", "u//e", "u/e/", "", ".", "u/./e",
])
async def test_keys_that_could_leave_the_folder_are_refused(storage: LocalStorage, tmp_path: Path,
                                                            key: str) -> None:
    with pytest.raises(UnsafeObjectKey):
        await storage.upload_file(key, b"x")
    with pytest.raises(UnsafeObjectKey):
        await storage.get_read_url(key)
    with pytest.raises(UnsafeObjectKey):
        await storage.delete_file(key)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["files"]
    assert not any((tmp_path / "files").iterdir())


async def test_a_symlink_out_of_the_folder_is_not_followed(storage: LocalStorage,
                                                           tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "files" / "u").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeObjectKey):
        await storage.upload_file("u/secret.txt", b"x")
    assert not (tmp_path / "elsewhere" / "secret.txt").exists()


async def test_bytes_round_trip_and_the_url_names_the_route(storage: LocalStorage,
                                                            tmp_path: Path) -> None:
    uploaded = await storage.upload_file(ALICE_KEY, b"%PDF-1.7 \x00\xff", mime="application/pdf")
    assert uploaded == {"object_key": ALICE_KEY,
                        "url": "/glm1m/files/alice-id/element-1/report%201.pdf"}
    assert (tmp_path / "files" / ALICE_KEY).read_bytes() == b"%PDF-1.7 \x00\xff"
    await storage.upload_file("u/e/note.txt", "naïve")  # Chainlit may hand over str content
    assert (tmp_path / "files" / "u/e/note.txt").read_text(encoding="utf-8") == "naïve"
    assert await storage.delete_file(ALICE_KEY) is True
    assert await storage.delete_file(ALICE_KEY) is False
    assert not (tmp_path / "files" / "alice-id").exists()  # emptied folders go too


async def owner_of(key: str) -> str | None:
    return {ALICE_KEY: "alice", "alice-id/element-2/page.html": "alice"}.get(key)


def user(identifier: str) -> PersistedUser:
    return PersistedUser(id=f"{identifier}-id", identifier=identifier, createdAt="2025-01-01")


@pytest.fixture
async def client(storage: LocalStorage) -> TestClient:
    await storage.upload_file(ALICE_KEY, b"%PDF-1.7")
    await storage.upload_file("alice-id/element-2/page.html", b"<script>alert(1)</script>")
    app = FastAPI()

    # Chainlit's server ends with this catch-all (its HTML page), registered at import.
    @app.get("/{full_path:path}")
    async def page(full_path: str) -> HTMLResponse:
        return HTMLResponse("<html>chainlit</html>")

    mount_first(app, file_router(storage, owner_of))
    return TestClient(app)


def log_in(client: TestClient, who: PersistedUser | None) -> None:
    """Stand in for Chainlit's cookie check, the dependency the route declares."""
    client.app.dependency_overrides[get_current_user] = lambda: who  # type: ignore[attr-defined]


def test_the_owner_gets_the_file_despite_chainlits_catch_all(client: TestClient) -> None:
    log_in(client, user("alice"))
    response = client.get("/glm1m/files/alice-id/element-1/report%201.pdf")
    assert response.status_code == 200 and response.content == b"%PDF-1.7"
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"].startswith("inline")


def test_another_user_gets_404_like_a_file_that_does_not_exist(client: TestClient) -> None:
    log_in(client, user("bob"))
    taken = client.get("/glm1m/files/alice-id/element-1/report%201.pdf")
    missing = client.get("/glm1m/files/bob-id/element-9/x.pdf")
    assert taken.status_code == missing.status_code == 404
    assert taken.content == missing.content


def test_nobody_logged_in_gets_401(client: TestClient) -> None:
    log_in(client, None)
    assert client.get("/glm1m/files/alice-id/element-1/report%201.pdf").status_code == 401


async def test_traversal_in_the_url_is_not_served(storage: LocalStorage, tmp_path: Path) -> None:
    # The owner check passes for every key here, so only the store's own path guard stands
    # between the URL and a file beside the store.
    (tmp_path / "secret").write_bytes(b"not for the web")
    await storage.upload_file(ALICE_KEY, b"%PDF-1.7")  # alice-id/ exists, so ../.. resolves

    async def owns_everything(key: str) -> str:
        return "alice"

    app = FastAPI()
    mount_first(app, file_router(storage, owns_everything))
    client = TestClient(app)
    log_in(client, user("alice"))
    # Encoded slashes keep it one segment, so the HTTP client does not fold the dots away first.
    response = client.get("/glm1m/files/alice-id/%2e%2e%2f%2e%2e%2fsecret")
    assert response.status_code == 404 and b"not for the web" not in response.content


def test_html_is_a_download_never_a_page(client: TestClient) -> None:
    log_in(client, user("alice"))
    response = client.get("/glm1m/files/alice-id/element-2/page.html")
    assert response.status_code == 200
    assert response.headers["content-disposition"].startswith("attachment")
    assert response.headers["x-content-type-options"] == "nosniff"
