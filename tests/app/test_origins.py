"""Only the app's own pages may drive it: a page elsewhere can neither open its socket nor send it
files, while the app's own page and non-browser clients (no Origin header) work as before."""

from __future__ import annotations

import httpx
import pytest
import socketio

pytestmark = pytest.mark.app
EVIL = "http://evil.example"


async def test_another_pages_socket_and_uploads_are_refused_and_the_apps_own_work(app, healthy_proxy) -> None:
    tab = app.session(origin=app.url)  # the app's own page, open in the user's browser
    await tab.connect()
    await tab.started()
    with pytest.raises(socketio.exceptions.ConnectionError):
        await app.session(origin=EVIL).connect()  # logged in, where login is on: still refused
    script = app.session()  # no Origin header, as non-browser clients send
    await script.connect()
    await script.started()
    await script.close()

    planted = {"file": ("planted.csv", b"id,text\n1,hello\n", "text/csv")}
    cookies = {"Cookie": tab.cookies} if tab.cookies else {}
    async with httpx.AsyncClient(base_url=app.url, timeout=30, headers=cookies) as http:
        evil = await http.post("/project/file", params={"session_id": tab.session_id},
                               files=planted, headers={"Origin": EVIL})
        own = await http.post("/project/file", params={"session_id": tab.session_id},
                              files=planted, headers={"Origin": app.url})
    assert evil.status_code == 403 and "access-control-allow-origin" not in evil.headers
    assert evil.json()["detail"] == (f"A page at {EVIL} may not use this app; if it should, add its "
                                     f"origin to GLM1M_ALLOWED_ORIGINS.")
    assert own.status_code == 200 and own.json()["id"]
    await tab.close()
