"""`glm1m serve --replicas N` on one box: N model servers (one per GPU group; on the CPU demo, N
demo servers) on ports of their own, and vLLM's router in front of them on the usual port.

Port layout, from the port asked for (8000 by default), so the shipped Prometheus config
(server/monitoring/prometheus.yml) knows where everything is:
    PORT        the router (what the app and the CLI talk to)
    PORT + 3    the router's own Prometheus /metrics
    PORT + 10+i replica i (its /metrics, /health and /tokenize)
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.errors import PlanError
from glm1m.server import launch, process, router, shm
from glm1m.server.launch import ServeOptions
from glm1m.server.router import RouterOptions
from glm1m.settings import Settings

REPLICA_PORT_OFFSET = 10
ROUTER_METRICS_OFFSET = 3


@dataclass(frozen=True)
class Stack:
    servers: tuple[ServeOptions, ...]
    router: RouterOptions


def replica_ports(port: int, replicas: int) -> list[int]:
    return [port + REPLICA_PORT_OFFSET + i for i in range(replicas)]


def gpu_groups(replicas: int, gpus_per_replica: int, detected: int) -> list[str | None]:
    """CUDA_VISIBLE_DEVICES of each replica: consecutive groups of GPUs (None on CPU)."""
    if detected == 0:
        return [None] * replicas
    if replicas * gpus_per_replica > detected:
        raise PlanError(key="replicas_gpus", replicas=replicas, each=gpus_per_replica,
                        needed=replicas * gpus_per_replica, listed=detected)
    return [",".join(str(r * gpus_per_replica + g) for g in range(gpus_per_replica))
            for r in range(replicas)]


def plan_stack(options: ServeOptions, replicas: int, gpus_per_replica: int, detected: int,
               settings: Settings) -> Stack:
    """`options` is what one `glm1m serve` would start; each replica gets its own port and GPUs."""
    if replicas < 2:
        raise PlanError(key="replicas_two")
    groups = gpu_groups(replicas, gpus_per_replica, detected)
    extra = list(options.extra_args)
    if settings.router_policy in router.RENDERS and router.SCALE_OUT_FLAG not in extra:
        extra.append(router.SCALE_OUT_FLAG)  # the router has each replica render every prompt
    servers = tuple(replace(options, host="127.0.0.1", port=port, devices=group, extra_args=extra)
                    for port, group in zip(replica_ports(options.port, replicas), groups,
                                           strict=True))
    front = router.router_options([s.base_url for s in servers], settings, host=options.host,
                                  port=options.port,
                                  metrics_port=options.port + ROUTER_METRICS_OFFSET,
                                  api_key=options.api_key or "")
    return Stack(servers, front)


def start_stack(stack: Stack, settings: Settings, log_dir: Path,
                say: Callable[[Said], None]) -> list[subprocess.Popen]:
    """Start every replica at once (each takes its own minute to load), wait for them all, then
    the router. The processes are returned as they start, in `started`, so a failure half-way
    still lets the caller stop what runs: pass the same list to stop_stack in a finally."""
    started: list[subprocess.Popen] = []
    try:
        return _start(stack, settings, log_dir, say, started)
    except BaseException:
        stop_stack(started)
        raise


def _start(stack: Stack, settings: Settings, log_dir: Path, say: Callable[[Said], None],
           started: list[subprocess.Popen]) -> list[subprocess.Popen]:
    # Replicas listen on loopback: only the router, on the host asked for, faces the network.
    for port in [s.port for s in stack.servers] + [stack.router.port, stack.router.metrics_port]:
        launch.require_port("127.0.0.1", port, said("what_replica_or_router"))
    # Each replica's disk tier puts its CPU tier in /dev/shm: all of them must fit at once.
    shm.require_room(sum(shm.region_bytes(launch.vllm_command(s, "python")) for s in stack.servers),
                     servers=len(stack.servers))
    logs = [str(log_dir / f"vllm-{i}.log") for i in range(len(stack.servers))]
    for options, log in zip(stack.servers, logs, strict=True):
        say(said("replica_starting", url=options.base_url, log=log))
        started.append(launch.start(options, settings, log_path=log))
    for proc, options, log in zip(started, stack.servers, logs, strict=True):
        launch.wait_ready(proc, options, log)
    router_log = str(log_dir / "router.log")
    say(said("replicas_ready", replicas=len(stack.servers), log=router_log))
    started.append(router.start(stack.router, router_log))
    router.wait_ready(started[-1], stack.router, router_log)
    return started


def stop_stack(procs: list[subprocess.Popen]) -> None:
    """SIGTERM to the router first (it takes no new requests), then to every replica, and only
    then wait for each: N replicas stop in one grace period, not in N of them."""
    for proc in reversed(procs):
        process.terminate(proc)
    for proc in reversed(procs):
        process.stop(proc)


def supervise(procs: list[subprocess.Popen], stack: Stack, settings: Settings, log_dir: Path,
              say: Callable[[Said], None], shm_before: frozenset[Path] | None = None) -> int:
    """Block until the router, or a process the caller appended after it (the UI), exits: 1, and
    the caller stops the rest. A replica that exits is started again in its place (in
    `procs`, so the caller's stop_stack stops the new one): the router takes it out of rotation
    after HEALTH_FAILURES failed checks and back in once it answers /health again. With
    shm_before (shm.regions() from before any replica started), the /dev/shm region a killed
    replica left is removed before it starts again, which would otherwise hold a second one."""
    import os

    replicas = len(stack.servers)
    while True:
        pid, status = os.wait()
        index = next((i for i, p in enumerate(procs) if p.pid == pid), None)
        if index is None:
            continue  # a child this function did not start (none in glm1m's CLI)
        procs[index].returncode = os.waitstatus_to_exitcode(status)
        if index >= replicas:
            return 1
        process.stop(procs[index], grace_s=0)  # its engine process, left in its group
        if shm_before is not None:
            removed = shm.remove_left_behind(shm_before, [procs[index].pid])
            if removed.paths:
                say(removed.said())
        options = stack.servers[index]
        say(said("replica_restarting", url=options.base_url, code=procs[index].returncode))
        procs[index] = launch.start(options, settings, log_path=str(log_dir / f"vllm-{index}.log"))
