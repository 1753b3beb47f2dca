"""A Chainlit client over its own socket.io protocol, as the web page speaks it."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import socketio


@dataclass(eq=False)
class Event:
    name: str
    data: Any


@dataclass
class ChainlitSession:
    """One browser tab's worth of Chainlit: connect, send messages, read what comes back."""

    url: str
    cookies: str | None = None
    thread_id: str | None = None
    origin: str | None = None  # the Origin header a browser would send (None: as scripts do)
    events: list[Event] = field(default_factory=list)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def connect(self) -> None:
        self.sio = socketio.AsyncClient(reconnection=False)
        self.sio.on("*", self._record)
        self.sio.on("ask", self._on_ask)
        self.session_id = str(uuid.uuid4())
        auth = {"clientType": "webapp", "sessionId": self.session_id, "threadId": self.thread_id,
                "userEnv": json.dumps({}), "chatProfile": None}
        headers = {"Cookie": self.cookies} if self.cookies else {}
        if self.origin:
            headers["Origin"] = self.origin
        await self.sio.connect(self.url, socketio_path="/ws/socket.io", auth=auth, headers=headers,
                               transports=["websocket"], wait_timeout=30)
        await self.sio.emit("connection_successful")

    async def close(self) -> None:
        await self.sio.disconnect()

    # How to answer AskActionMessage prompts: gets the offered actions, returns the chosen one.
    choose_action = staticmethod(lambda actions: actions[0] if actions else None)

    async def _on_ask(self, data: Any) -> Any:
        await self._record("ask", data)
        keys = data["spec"].get("keys") or []
        offered = [e.data for e in self.events if e.name == "action" and e.data.get("id") in keys]
        return self.choose_action(offered)

    async def upload(self, path, mime: str = "text/csv") -> dict:
        """Upload a file the way the paperclip does; returns the reference to send with a message."""
        async with httpx.AsyncClient(headers={"Cookie": self.cookies} if self.cookies else {}) as http:
            reply = await http.post(f"{self.url}/project/file", params={"session_id": self.session_id},
                                    files={"file": (path.name, path.read_bytes(), mime)}, timeout=60)
        reply.raise_for_status()
        return {"id": reply.json()["id"]}

    async def download(self, element: dict) -> bytes:
        async with httpx.AsyncClient(headers={"Cookie": self.cookies} if self.cookies else {}) as http:
            reply = await http.get(f"{self.url}/project/file/{element['chainlitKey']}",
                                   params={"session_id": self.session_id}, timeout=60)
        reply.raise_for_status()
        return reply.content

    async def _record(self, name: str, data: Any = None) -> None:
        async with self._changed:
            self.events.append(Event(name, data))
            self._changed.notify_all()

    async def send(self, text: str, file_refs: list[dict] | None = None, command: str | None = None) -> str:
        """`command`: one the app offers in the composer (set_commands), chosen with the message."""
        message_id = str(uuid.uuid4())
        message = {"id": message_id, "name": "User", "type": "user_message", "output": text,
                   "createdAt": "", "threadId": self.thread_id or ""}
        if command is not None:
            message["command"] = command
        await self.sio.emit("client_message", {"message": message, "fileReferences": file_refs or []})
        return message_id

    async def click(self, action: dict, timeout: float = 120.0) -> int:
        """Click an action button as the page does (Chainlit's /project/action, answered when its
        callback is done); returns the event mark taken before."""
        start = self.mark()
        async with httpx.AsyncClient(headers={"Cookie": self.cookies} if self.cookies else {}) as http:
            reply = await http.post(f"{self.url}/project/action", timeout=timeout,
                                    json={"sessionId": self.session_id, "action": action})
        reply.raise_for_status()
        return start

    def actions(self, start: int = 0) -> list[dict]:
        """The action buttons the app sent since `start`."""
        return [e.data for e in self.events[start:] if e.name == "action"]

    async def edit(self, message_id: str, text: str, timeout: float = 120.0) -> int:
        """Edit an earlier message as the page's pencil does, and wait until the app has answered
        it again; returns the event mark taken before."""
        return await self._until_task_done(lambda: self.sio.emit("edit_message", {"message": {
            "id": message_id, "name": "User", "type": "user_message", "output": text,
            "createdAt": "", "threadId": self.thread_id or ""}}), timeout)

    async def stop(self) -> None:
        await self.sio.emit("stop")

    async def wait_for(self, predicate, timeout: float = 120.0, start: int = 0) -> Event:
        """Wait for the first event from index `start` on that satisfies `predicate`."""
        async def find() -> Event:
            async with self._changed:
                while True:
                    for event in self.events[start:]:
                        if predicate(event):
                            return event
                    await self._changed.wait()
        return await asyncio.wait_for(find(), timeout)

    def index(self, event: Event) -> int:
        return next(i for i, e in enumerate(self.events) if e is event)

    def mark(self) -> int:
        return len(self.events)

    def messages(self, start: int = 0) -> list[dict]:
        """Final states of messages (new_message then update_message), by id, in order of appearance."""
        latest: dict[str, dict] = {}
        for event in self.events[start:]:
            if event.name in ("new_message", "update_message") and isinstance(event.data, dict):
                latest[event.data["id"]] = {**latest.get(event.data["id"], {}), **event.data}
        return list(latest.values())

    def tokens_for(self, message_id: str, start: int = 0) -> list[str]:
        """The pieces streamed into one message: Chainlit carries the first in stream_start."""
        pieces = []
        for e in self.events[start:]:
            if e.name == "stream_start" and e.data.get("id") == message_id:
                pieces.append(e.data["output"])
            elif e.name == "stream_token" and e.data.get("id") == message_id:
                pieces.append(e.data["token"])
        return pieces

    async def started(self, timeout: float = 120.0) -> None:
        """Wait until on_chat_start has finished (its run step is updated at the end)."""
        await self.wait_for(lambda e: e.name == "update_message"
                            and e.data.get("name") == "on_chat_start", timeout)
        await self.wait_for(lambda e: e.name == "task_end", timeout, self.mark() - 1)

    async def change_settings(self, values: dict, timeout: float = 30.0) -> None:
        """Submit the settings panel; Chainlit runs on_settings_update as a task."""
        await self._until_task_done(lambda: self.sio.emit("chat_settings_change", values), timeout)

    async def _until_task_done(self, action, timeout: float) -> int:
        start = self.mark()
        await action()
        began = await self.wait_for(lambda e: e.name == "task_start", timeout, start)
        await self.wait_for(lambda e: e.name == "task_end", timeout, self.index(began))
        return start

    async def ask(self, text: str, timeout: float = 120.0, file_refs: list[dict] | None = None,
                  command: str | None = None) -> int:
        """Send `text` and wait until the app's handler has finished; returns the event mark
        taken before sending, to read what this message produced."""
        return await self._until_task_done(lambda: self.send(text, file_refs, command), timeout)

    def answers(self, start: int = 0) -> list[dict]:
        return [m for m in self.messages(start) if m.get("type") == "assistant_message"]
