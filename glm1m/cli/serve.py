"""`glm1m serve`: start `vllm serve` for GLM-4-9B-Chat-1M (or the demo model) with flags sized for
the GPUs found, and keep it running until Ctrl-C."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.cli.exposure import LOOPBACK, OPEN_ENDPOINTS, OPEN_ROUTES
from glm1m.cli.output import fail, say
from glm1m.cli.plan import add_layout_arg
from glm1m.errors import PlanError, StartFailed
from glm1m.server.flags import last_value
from glm1m.server.launch import DEFAULT_MODEL, ServeOptions
from glm1m.server.profile import PROFILES
from glm1m.server.replicas import Stack
from glm1m.settings import Settings


def add_command(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="start vllm serve for GLM-4-9B-Chat-1M")
    add_serve_args(serve)
    serve.set_defaults(run=cmd_serve)


def add_serve_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None,
                        help=f"local path or hub id (default: $MODEL, else {DEFAULT_MODEL}; "
                             f"the demo model when the machine has no GPU)")
    parser.add_argument("--demo", action="store_true", help="serve the tiny random-weight demo model")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address vLLM listens on; anything but loopback needs --expose")
    parser.add_argument("--expose", action="store_true",
                        help=f"allow --host other than loopback (every route but {OPEN_ENDPOINTS} "
                             "needs the key, sent in clear over plain HTTP)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-model-len", type=int, default=None,
                        help="default 1048576 on a GPU, 32768 on CPU")
    parser.add_argument("--api-key", default=None,
                        help=f"key vLLM requires on every route but {OPEN_ENDPOINTS} "
                             "(default: $GLM1M_API_KEY, else one generated "
                             "into the data dir, where the UI finds it)")
    parser.add_argument("--profile", choices=PROFILES, default="auto",
                        help="auto: size context, memory, fp8 and layout from the GPUs found "
                             "(glm1m plan); fp8kv: the same with the KV cache in fp8 (twice the tokens; "
                             "on an H200 no faster than auto's bf16 with 256-token blocks; its quality "
                             "cost is not measured); none: "
                             "vLLM's defaults")
    parser.add_argument("--gpus", type=int, default=1,
                        help="GPUs to use: data parallel when one GPU holds a full request, else "
                             "tensor parallel (see glm1m plan --gpus N)")
    parser.add_argument("--replicas", type=int, default=1,
                        help="model servers on this machine, --gpus GPUs each, behind vLLM's router "
                             "on --port (replica i on PORT+10+i); see docs/serving.md")
    add_layout_arg(parser)
    parser.add_argument("--kv-disk", default=None, metavar="DIR",
                        help="keep KV blocks in files under DIR too, so a restarted server loads "
                             "documents back instead of reading them again (GPU only; default: "
                             "$GLM1M_KV_DISK_DIR, empty = off; pruned to GLM1M_KV_DISK_GIB, "
                             "default 160, before each start; see docs/serving.md)")
    parser.add_argument("vllm_args", nargs=argparse.REMAINDER,
                        help="after --: extra flags passed to vllm serve as they are")


def serve_options(args: argparse.Namespace, settings: Settings | None = None) -> ServeOptions:
    """Raises PlanError (one sentence) when the GPUs cannot hold what was asked. With a disk tier
    it also prunes the tier's folder to its cap, which must happen before vLLM starts."""
    from glm1m.keys import server_api_key
    from glm1m.server import launch, profile
    from glm1m.server.disk_tier import prune
    from glm1m.server.gpus import detect_gpus
    from glm1m.server.plan import GIB

    settings = settings or Settings()
    check_exposure(args.host, args.expose)
    detected = detect_gpus()
    gpu = bool(detected)
    model = args.model or settings.serve_model
    # Without a GPU and without a model named, the only thing that can run is the demo model.
    demo = args.demo or (not gpu and model is None)
    extra = [a for a in args.vllm_args if a != "--"]
    options = launch.resolve(launch.ServeOptions(
        model=model or DEFAULT_MODEL, demo=demo, host=args.host, port=args.port,
        max_model_len=args.max_model_len, api_key=args.api_key or server_api_key(settings),
        gpu=gpu, extra_args=extra), settings)
    disk_dir = args.kv_disk or settings.kv_disk_dir
    if not gpu:
        if disk_dir:
            raise PlanError(key="kv_disk_no_gpu")
        return options
    if args.gpus > len(detected):
        raise PlanError(key="gpus_too_many", gpus=args.gpus, listed=len(detected))
    disk = None
    if disk_dir:
        disk = profile.disk_tier_for(args.profile, options.model, detected, args.gpus,
                                     args.max_model_len, Path(disk_dir), int(settings.kv_disk_gib * GIB),
                                     args.layout, user_cpu_gib=user_cpu_gib(extra))
    flags = profile.profile_flags(args.profile, options.model, detected, args.gpus, args.max_model_len,
                                  args.layout, disk=disk)
    if disk is not None:
        say(disk.said())
        say(prune(disk.root, disk.cap_bytes).said())
    return replace(options, profile_flags=flags)


def user_cpu_gib(vllm_args: list[str]) -> float | None:
    """The --kv-offloading-size given after --, which vLLM takes over glm1m's (the last one wins)."""
    value = last_value(vllm_args, "--kv-offloading-size")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise PlanError(key="kv_offloading_size_bad", value=value) from None


def check_exposure(host: str, expose: bool) -> None:
    if host in LOOPBACK:
        return
    if not expose:
        raise PlanError(key="server_exposed", host=host, open=OPEN_ENDPOINTS)
    say(said("cli_serve_listening", host=host, open=OPEN_ENDPOINTS))


def cmd_serve(args: argparse.Namespace) -> int:
    import subprocess

    from glm1m.server import exit_reason, launch, process, shm

    settings = Settings()
    shm_before = shm.regions()  # what is in /dev/shm now is another server's; see give_back_shm
    options = serve_options(args, settings)
    if args.replicas > 1:
        return serve_replicas(args, options, settings, shm_before)
    log = settings.log_dir / f"vllm-{options.port}.log"
    try:
        settings.log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return fail(StartFailed(key="logs_unwritable", folder=settings.log_dir, reason=error.strerror))
    say(said("cli_starting", command=" ".join(launch.vllm_command(options, launch.vllm_python(settings)))))
    server: subprocess.Popen | None = None
    try:
        # vLLM writes its log to a file, which is shown here as it grows: when it fails, the
        # sentence that says why is read from that file (server/exit_reason.py).
        server = launch.start(options, settings, log_path=str(log), echo=True)
        launch.wait_ready(server, options, str(log))
        record_served(options, args, settings)
        say(said("cli_server_ready", url=options.base_url, log=log))
        # Only Ctrl-C, SIGTERM or SIGHUP (KeyboardInterrupt below) stop it on purpose; vLLM exits
        # 0 when its engine died, so any exit here is a failure, said with its cause.
        code = server.wait()
        say(exit_reason.exited_said(said("what_model_server"), code, str(log), said("when_serving")))
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if server is not None:
            process.stop(server)
            give_back_shm(shm_before, [server.pid])


def give_back_shm(before: frozenset[Path], stopped_groups: list[int]) -> None:
    """Remove the /dev/shm KV regions that glm1m's stopped vLLM left (a force-killed engine never
    unlinks its own: server/shm.py) and say so; another server's stay."""
    from glm1m.server import shm

    removed = shm.remove_left_behind(before, stopped_groups)
    if removed.paths:
        say(removed.said())


def plan_replicas(args: argparse.Namespace, options: ServeOptions, settings: Settings) -> Stack:
    """Raises PlanError when the GPUs cannot hold --replicas x --gpus."""
    from glm1m.server import replicas
    from glm1m.server.gpus import detect_gpus

    detected = len(detect_gpus()) if options.gpu else 0
    return replicas.plan_stack(options, args.replicas, args.gpus, detected, settings)


def ready_line(stack: Stack) -> Said:
    return said("cli_replicas_ready", url=stack.router.base_url, replicas=len(stack.servers),
                first=stack.servers[0].base_url)


def serve_replicas(args: argparse.Namespace, options: ServeOptions, settings: Settings,
                   shm_before: frozenset[Path]) -> int:
    """N servers and the router in front; Ctrl-C (or SIGTERM) stops all of them by PID, then
    removes the /dev/shm regions they left that were not there before (shm_before)."""
    import subprocess

    from glm1m.server import replicas

    procs: list[subprocess.Popen] = []
    if options.host not in LOOPBACK:
        say(said("cli_replicas_exposed", host=options.host, open=OPEN_ROUTES))
    try:
        stack = plan_replicas(args, options, settings)
        settings.log_dir.mkdir(parents=True, exist_ok=True)
        procs = replicas.start_stack(stack, settings, settings.log_dir, say)
        record_served(stack.servers[0], args, settings)
        say(ready_line(stack))
        return replicas.supervise(procs, stack, settings, settings.log_dir, say, shm_before)
    except OSError as error:
        return fail(StartFailed(key="logs_unwritable", folder=settings.log_dir, reason=error.strerror))
    except KeyboardInterrupt:
        return 0
    finally:
        replicas.stop_stack(procs)
        give_back_shm(shm_before, [p.pid for p in procs])


def record_served(options: ServeOptions, args: argparse.Namespace, settings: Settings) -> None:
    """What was started, for the app's prefill estimate (glm1m/serving.py); it never stops a start."""
    from glm1m.server import launch
    from glm1m.server.gpus import detect_gpus
    from glm1m.serving import Served, record

    cmd = launch.vllm_command(options, "python")
    gpus = detect_gpus() if options.gpu else []
    served = Served(model=options.model, gpu=gpus[0].name if gpus else "cpu",
                    gpus=args.gpus if gpus else 0,
                    tensor_parallel=int(last_value(cmd, "--tensor-parallel-size") or 1),
                    layout=args.layout, profile=args.profile,
                    max_model_len=int(last_value(cmd, "--max-model-len") or options.max_model_len or 0))
    try:
        record(settings, served)
    except OSError as error:
        say(said("cli_not_recorded", folder=settings.data_dir, reason=error.strerror))
