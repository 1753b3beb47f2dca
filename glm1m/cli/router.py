"""`glm1m router`: vLLM's router (vllm-router) in front of model servers started anywhere with
`glm1m serve`, on one endpoint the app and the CLI use as they would one server."""

from __future__ import annotations

import argparse

from glm1m.catalog import said
from glm1m.cli.exposure import LOOPBACK, OPEN_ROUTES
from glm1m.cli.output import say
from glm1m.settings import Settings


def add_command(commands: argparse._SubParsersAction) -> None:
    router = commands.add_parser("router", help="start vLLM's router in front of several model servers")
    router.add_argument("--backend", action="append", required=True, metavar="URL",
                        help="a server started with `glm1m serve` (http://HOST:PORT); repeat it "
                             "for each server")
    router.add_argument("--host", default="127.0.0.1",
                        help="address the router listens on; anything but loopback needs --expose")
    router.add_argument("--expose", action="store_true",
                        help=f"allow --host other than loopback ({OPEN_ROUTES} answer anyone)")
    router.add_argument("--port", type=int, default=8000)
    router.add_argument("--metrics-port", type=int, default=None,
                        help="the router's own Prometheus /metrics on 127.0.0.1 (default PORT+3)")
    router.add_argument("--policy", choices=("sticky_least_loaded", "cache_aware"), default=None,
                        help="sticky_least_loaded (default: $GLM1M_ROUTER_POLICY, else this): a "
                             "document per X-Session-ID, spread evenly (a request without one "
                             "gets a key from its prompt's opening); cache_aware: by the prompt's "
                             "prefix (documents spread only while others are in flight)")
    router.add_argument("--api-key", default=None,
                        help="the servers' key, to check that a request goes through (default: "
                             "$GLM1M_API_KEY, else the one in the data dir); the router only "
                             "forwards each caller's own key")
    router.set_defaults(run=cmd_router)


def check_exposure(host: str, expose: bool) -> None:
    from glm1m.errors import PlanError

    if host in LOOPBACK:
        return
    if not expose:
        raise PlanError(key="router_exposed", host=host, open=OPEN_ROUTES)
    say(said("cli_router_listening", host=host, open=OPEN_ROUTES))


def cmd_router(args: argparse.Namespace) -> int:
    from glm1m.keys import server_api_key
    from glm1m.server import process, router

    settings = Settings()
    check_exposure(args.host, args.expose)
    options = router.router_options(args.backend, settings, host=args.host, port=args.port,
                                    metrics_port=args.metrics_port, policy=args.policy,
                                    api_key=args.api_key or server_api_key(settings, create=False))
    say(said("cli_starting", command=" ".join(router.front_command(options))))
    proc = None
    try:
        proc = router.start(options)
        router.wait_ready(proc, options)
        say(said("cli_router_ready", url=options.base_url, backends=list(options.backends)))
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if proc is not None:
            process.stop(proc)
