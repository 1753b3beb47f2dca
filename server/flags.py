"""Reading a `vllm serve` command line as vLLM's argparse will: the last value of a flag wins,
whether glm1m's profile or the user's flags after `--` gave it."""

from __future__ import annotations

import json


def last_value(cmd: list[str], *names: str) -> str | None:
    """The value of the last `NAME VALUE` or `NAME=VALUE` of any of `names`."""
    found = None
    for i, part in enumerate(cmd):
        if part in names and i + 1 < len(cmd):
            found = cmd[i + 1]
        elif "=" in part and part.split("=", 1)[0] in names:
            found = part.split("=", 1)[1]
    return found


def kv_extra_config(cmd: list[str]) -> dict:
    """The kv_connector_extra_config of the last --kv-transfer-config; {} when there is none or it
    is not JSON (vLLM then refuses it with its own message)."""
    config = last_value(cmd, "--kv-transfer-config")
    if config is None:
        return {}
    try:
        extra = json.loads(config).get("kv_connector_extra_config") or {}
    except (ValueError, AttributeError):
        return {}
    return extra if isinstance(extra, dict) else {}
