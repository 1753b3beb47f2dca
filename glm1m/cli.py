"""`glm1m` command line: serve the model, run the whole workbench, and batch work from the shell."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from dataclasses import replace

from chainlit_app.errors import UserFacingError
from chainlit_app.keys import server_api_key
from chainlit_app.settings import Settings
from glm1m import stack
from glm1m.summarize_cli import add_summarize_command
from glm1m.translate_cli import add_translate_command
from glm1m.users_cli import add_users_command, ensure_first_user
from server.plan_cli import add_layout_arg, add_plan_command
from server import launch, process, profile
from server.gpus import detect_gpus
from server.plan import PlanError

LOG_DIR = launch.ROOT / "var" / "logs"


def add_serve_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=os.environ.get("MODEL") or None,
                        help=f"local path or hub id (default: $MODEL, else {launch.DEFAULT_MODEL}; "
                             f"the demo model when the machine has no GPU)")
    parser.add_argument("--demo", action="store_true", help="serve the tiny random-weight demo model")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address vLLM listens on; anything but loopback needs --expose")
    parser.add_argument("--expose", action="store_true",
                        help="allow --host other than loopback (vLLM's key guards only /v1)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-model-len", type=int, default=None,
                        help=f"default {launch.GPU_MAX_MODEL_LEN} on a GPU, {launch.CPU_MAX_MODEL_LEN} on CPU")
    parser.add_argument("--api-key", default=None,
                        help="key vLLM requires on /v1 (default: $GLM1M_API_KEY, else one generated "
                             "into the data dir, where the UI finds it)")
    parser.add_argument("--profile", choices=profile.PROFILES, default="auto",
                        help="auto: size context, memory, fp8 and layout from the GPUs found "
                             "(glm1m plan); none: vLLM's defaults")
    parser.add_argument("--gpus", type=int, default=1,
                        help="GPUs to use: data parallel when one GPU holds a full request, else "
                             "tensor parallel (see glm1m plan --gpus N)")
    add_layout_arg(parser)
    parser.add_argument("vllm_args", nargs=argparse.REMAINDER,
                        help="after --: extra flags passed to vllm serve as they are")


def serve_options(args: argparse.Namespace) -> launch.ServeOptions:
    """Raises PlanError (one sentence) when the GPUs cannot hold what was asked."""
    check_exposure(args.host, args.expose)
    detected = detect_gpus()
    gpu = bool(detected)
    # Without a GPU and without a model named, the only thing that can run is the demo model.
    demo = args.demo or (not gpu and args.model is None)
    extra = [a for a in args.vllm_args if a != "--"]
    options = launch.resolve(launch.ServeOptions(
        model=args.model or launch.DEFAULT_MODEL, demo=demo, host=args.host, port=args.port,
        max_model_len=args.max_model_len, api_key=args.api_key or server_api_key(Settings()),
        gpu=gpu, extra_args=extra))
    if not gpu:
        return options
    if args.gpus > len(detected):
        raise PlanError(f"--gpus {args.gpus} asks for more GPUs than nvidia-smi lists ({len(detected)}).")
    flags = profile.profile_flags(args.profile, options.model, detected, args.gpus, args.max_model_len,
                                  args.layout)
    return replace(options, profile_flags=flags)


LOOPBACK = ("127.0.0.1", "localhost", "::1")
# vLLM's --api-key middleware guards /v1 (and /v2, /inference, /cohere) only.
OPEN_ENDPOINTS = "/tokenize, /detokenize, /metrics, /health, /ping, /version and /load"


def check_exposure(host: str, expose: bool) -> None:
    if host in LOOPBACK:
        return
    if not expose:
        raise PlanError(f"--host {host} would let other machines reach the model server, where "
                        f"{OPEN_ENDPOINTS} need no key. Keep the default 127.0.0.1, or add "
                        f"--expose if a firewall or proxy guards it.")
    say(f"listening on {host}: /v1 needs the API key, but {OPEN_ENDPOINTS} answer anyone who "
        f"can reach this port.")


def say(text: str) -> None:
    print(f"glm1m: {text}", flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        options = serve_options(args)
    except (PlanError, UserFacingError) as error:  # the plan, or the server-api-key file
        say(str(error))
        return 2
    say("starting: " + " ".join(launch.vllm_command(options, launch.vllm_python())))
    server: subprocess.Popen | None = None
    try:
        server = launch.start(options)
        launch.wait_ready(server, options)
        say(f"model server ready at {options.base_url}/v1")
        return server.wait()
    except process.StartFailed as error:
        say(str(error))
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if server is not None:
            process.stop(server)


def cmd_up(args: argparse.Namespace) -> int:
    try:
        options = serve_options(args)
    except (PlanError, UserFacingError) as error:  # the plan, or the server-api-key file
        say(str(error))
        return 2
    # The UI refuses to start without a user when login is on: ask now, not after the model loads.
    problem = ensure_first_user(Settings(demo=options.demo), sys.stdin.isatty())
    if problem:
        say(problem)
        return 2
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    server_log, ui_log = str(LOG_DIR / "vllm.log"), str(LOG_DIR / "chainlit.log")
    if options.demo:
        say("no GPU found (or --demo): serving the demo model, random weights, answers are noise")
    say(f"starting the model server (log: {server_log}) ...")
    children: list[subprocess.Popen] = []
    try:
        children.append(launch.start(options, log_path=server_log))
        launch.wait_ready(children[0], options, server_log)
        say(f"model server ready at {options.base_url}/v1; starting the UI (log: {ui_log}) ...")
        url = f"http://{args.ui_host}:{args.ui_port}"
        children.append(stack.start_ui(options, args.ui_host, args.ui_port, ui_log))
        stack.wait_ui(children[1], url, ui_log)
        say(f"open {url}  (Ctrl-C stops both)")
        return wait_any(children)
    except process.StartFailed as error:
        say(str(error))
        return 1
    except KeyboardInterrupt:
        say("stopping ...")
        return 0
    finally:
        for child in reversed(children):
            process.stop(child)


def wait_any(children: list[subprocess.Popen]) -> int:
    """Block until one child exits (then the finally-clause stops the other)."""
    pid, status = os.wait()
    name = "model server" if pid == children[0].pid else "UI"
    say(f"the {name} exited (status {os.waitstatus_to_exitcode(status)}); stopping the rest")
    return 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glm1m", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="start vllm serve for GLM-4-9B-Chat-1M")
    add_serve_args(serve)
    serve.set_defaults(run=cmd_serve)
    up = commands.add_parser("up", help="start the model server and the Chainlit UI (make run)")
    up.add_argument("--ui-host", default="127.0.0.1")
    up.add_argument("--ui-port", type=int, default=8001)
    add_serve_args(up)
    up.set_defaults(run=cmd_up)
    add_translate_command(commands)
    add_plan_command(commands)
    add_summarize_command(commands)
    add_users_command(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    # SIGTERM (from a test, systemd, or a terminal closing) stops children like Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    args = build_parser().parse_args(argv)
    sys.exit(args.run(args))


if __name__ == "__main__":
    main()
