"""Who can reach a server the CLI starts: the names of this machine's loopback, and what answers
without the API key on a model server's port and on a router's. `glm1m serve` says both (with
--replicas it starts a router too) and `glm1m router` the router's, so they live in neither."""

from __future__ import annotations

LOOPBACK = ("127.0.0.1", "localhost", "::1")
# What answers without the key (server/middleware/glm1m_route_guard.py guards every other route).
OPEN_ENDPOINTS = "/health, /ping and /metrics"
# What answers on the router's port without any key (measured on vllm-router 0.1.17).
OPEN_ROUTES = "/health, /readiness, /metrics, /workers, /list_workers and /add_worker"
