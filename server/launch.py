"""Start `vllm serve` for GLM-4-9B-Chat-1M (or the demo model) and wait until it really answers."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.errors import StartFailed
from glm1m.server import cpu, disk_tier, port_holder, process, shm
from glm1m.server.flags import last_value
from glm1m.server.gpus import detect_gpus
from glm1m.settings import Settings

# This package's own folder (glm1m.server: server/ of a checkout, site-packages/glm1m/server/ when
# installed): the route guard, the tool parser and the chat template vLLM loads by path lie in it.
PACKAGE_DIR = Path(__file__).resolve().parent


def source_checkout(package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The source checkout glm1m runs from (an editable install maps glm1m.server to its server/
    folder), where `make setup` builds the demo model and .venv-server; None when glm1m is
    installed: this module then lies inside the glm1m package (site-packages/glm1m/server/), and
    nothing around site-packages is taken for a checkout."""
    root = package_dir.parent
    if (root / "__init__.py").exists() or not (root / "pyproject.toml").is_file():
        return None
    return root


# An installed glm1m has no checkout and keeps its runtime files in the data dir.
CHECKOUT = source_checkout()
DEFAULT_MODEL = "THUDM/glm-4-9b-chat-1m-hf"  # the HF-format checkpoint (GlmForCausalLM)
SERVED_NAME = "glm-4-9b-chat-1m"
DEMO_BUILDER = CHECKOUT / "data" / "make_demo_model.py" if CHECKOUT else None
GPU_MAX_MODEL_LEN = 1_048_576
# On CPU the demo model's KV cache lives in VLLM_CPU_KVCACHE_SPACE GiB; 32K tokens keeps
# prompts realistic while a 1 GiB cache still holds many of them.
CPU_MAX_MODEL_LEN = 32_768
CPU_KV_CACHE_GIB = "1"
# The demo model is served in float32 whatever its config says: vllm-cpu 0.32.0's bfloat16
# attention died of SIGILL on an Intel Xeon with AMX (server/cpu.py), and at the demo's size
# float32 costs nothing. A --dtype after `--` is the user's choice and replaces it.
DEMO_DTYPE = "float32"
# The ASGI middleware that puts every route but /health, /ping and /metrics behind the key; vLLM
# imports it from MIDDLEWARE_DIR, which holds nothing else.
MIDDLEWARE_DIR = PACKAGE_DIR / "middleware"
ROUTE_GUARD = "glm1m_route_guard.RouteGuard"
READY_TIMEOUT_S = 900.0  # a cold GPU start with CUDA graphs and torch.compile takes minutes
# GLM-4's function calls as OpenAI tool_calls (server/tool_parser_glm4.py says where the format comes
# from): vLLM loads the parser by its path and renders tools with the template beside it.
TOOL_PARSER_PLUGIN = PACKAGE_DIR / "tool_parser_glm4.py"
TOOL_PARSER = "glm4"
TOOLS_CHAT_TEMPLATE = PACKAGE_DIR / "glm4_chat_template.jinja"
USER_TOOL_FLAGS = ("--tool-call-parser", "--tool-parser-plugin", "--enable-auto-tool-choice",
                   "--no-enable-auto-tool-choice")


@dataclass(frozen=True)
class ServeOptions:
    model: str = DEFAULT_MODEL
    demo: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    max_model_len: int | None = None
    api_key: str | None = None
    gpu: bool = False
    extra_args: list[str] = field(default_factory=list)
    # On a GPU: the profile's flags (server/profile.py); they carry --max-model-len themselves.
    profile_flags: list[str] = field(default_factory=list)
    # CUDA_VISIBLE_DEVICES of one replica of `glm1m serve --replicas` (None: every GPU it sees).
    devices: str | None = None

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"


def in_checkout() -> bool:
    return DEMO_BUILDER is not None and DEMO_BUILDER.exists()


def demo_model_dir(settings: Settings) -> Path:
    if CHECKOUT is not None and in_checkout():
        return CHECKOUT / "data" / "demo-model"
    return settings.data_dir / "demo-model"


def resolve(options: ServeOptions, settings: Settings) -> ServeOptions:
    """Fill in what depends on the machine: the model for --demo and the context length."""
    model = str(demo_model_dir(settings)) if options.demo else options.model
    max_len = options.max_model_len or (GPU_MAX_MODEL_LEN if options.gpu else CPU_MAX_MODEL_LEN)
    return replace(options, model=model, max_model_len=max_len)


def machine_has_gpu() -> bool:
    return bool(detect_gpus())


def vllm_python(settings: Settings) -> str:
    """GLM1M_VLLM_PYTHON, else the checkout's .venv-server (make setup), else this python."""
    if settings.vllm_python:
        return str(settings.vllm_python)
    venv = CHECKOUT / ".venv-server" / "bin" / "python" if CHECKOUT else None
    return str(venv) if venv is not None and venv.exists() else sys.executable


def vllm_command(options: ServeOptions, python: str) -> list[str]:
    """The exact command line: `vllm serve MODEL ...` through the CLI's module, run by the python of
    vLLM's environment (the `vllm` script of that environment may not be on PATH). It is the CLI
    and not vllm.entrypoints.openai.api_server because only the CLI starts --api-server-count
    servers (the API-server module runs one, whatever the flag says). vllm-cpu's CLI asks
    importlib.metadata for "vllm": server/install.sh registers that name."""
    cmd = [
        python, "-m", "vllm.entrypoints.cli.main", "serve", options.model,
        "--served-model-name", SERVED_NAME, "--host", options.host, "--port", str(options.port),
    ]
    if options.api_key:
        # vLLM's own key check covers /v1 only; this one covers every route (see its docstring).
        cmd += ["--middleware", ROUTE_GUARD]
    if options.profile_flags:
        cmd += options.profile_flags
    else:
        cmd += ["--max-model-len", str(options.max_model_len)]
    if not options.gpu:
        cmd.append("--enforce-eager")  # vllm-cpu: no CUDA graphs; skips a slow compile step
    if options.demo and last_value(options.extra_args, "--dtype") is None:
        cmd += ["--dtype", DEMO_DTYPE]  # vLLM warns of a flag given twice: once is enough
    return cmd + tool_flags(options) + list(options.extra_args)


def tool_flags(options: ServeOptions) -> list[str]:
    """GLM-4's tool parser and tools template, for GLM-4-9B-Chat(-1M) and the demo model; the user's
    own tool flags (or chat template) after `--` replace them."""
    if not (options.demo or "glm-4-9b-chat" in options.model.lower()):
        return []
    given = {part.split("=", 1)[0] for part in options.extra_args}
    flags = []
    if not given & set(USER_TOOL_FLAGS):
        flags += ["--tool-parser-plugin", str(TOOL_PARSER_PLUGIN), "--tool-call-parser", TOOL_PARSER,
                  "--enable-auto-tool-choice"]
    if "--chat-template" not in given and TOOLS_CHAT_TEMPLATE.exists():
        flags += ["--chat-template", str(TOOLS_CHAT_TEMPLATE)]
    return flags


def vllm_env(options: ServeOptions) -> dict[str, str]:
    env = dict(os.environ)
    if not options.gpu:
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", CPU_KV_CACHE_GIB)
    if options.devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = options.devices
    if options.api_key:
        # vLLM reads its key from here too. Not on the command line: `ps` shows that to every user
        # of the machine, and `glm1m serve` prints it; a key starting with "-" also broke argparse.
        env["VLLM_API_KEY"] = options.api_key
        # The route guard's folder, not the checkout: vLLM's environment must not see glm1m's
        # packages (nor, for an installed glm1m, the site-packages it lives in).
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(MIDDLEWARE_DIR), env.get("PYTHONPATH")]))
    env.setdefault("HF_HUB_OFFLINE", "1" if options.demo else env.get("HF_HUB_OFFLINE", "0"))
    if disk_tier.wants_fixed_hash_seed(options.profile_flags + options.extra_args):
        # The disk tier's file names are prefix hashes seeded from os.urandom unless this is set:
        # without it a restarted server finds none of its files (server/disk_tier.py). A user's
        # own value is kept; it must only stay the same from one start to the next.
        env.setdefault("PYTHONHASHSEED", disk_tier.HASH_SEED)
    return env


def ensure_demo_model(settings: Settings) -> None:
    """The demo weights are built, never committed: build them on first use (a few seconds)."""
    folder = demo_model_dir(settings)
    if (folder / "model.safetensors").exists():
        return
    if DEMO_BUILDER is None or not in_checkout():
        raise StartFailed(key="demo_model_missing", folder=folder)
    subprocess.run([vllm_python(settings), str(DEMO_BUILDER), str(folder)], check=True)


def start(options: ServeOptions, settings: Settings, log_path: str | None = None,
          echo: bool = False) -> subprocess.Popen:
    """Start vLLM (see process.start: from the main thread, and it ends when this process does);
    its output goes to `log_path`, and with `echo` to this terminal too."""
    # Another server on the port would answer our readiness probe while ours fails to bind.
    require_port(options.host, options.port, said("what_model_server"))
    # With the disk tier, vLLM's CPU tier is a file in /dev/shm (server/shm.py): a tmpfs without
    # room for it is said here in one sentence, before vLLM starts.
    shm.require_room(shm.region_bytes(vllm_command(options, "python")))
    if not options.gpu:
        cpu.require_dtype_that_runs(vllm_command(options, "python"), options.model)
    python = vllm_python(settings)
    require_vllm(python)
    if options.demo:
        ensure_demo_model(settings)
    return process.start(vllm_command(options, python), env=vllm_env(options), log_path=log_path,
                         cpus=None if options.gpu else server_cpus(), echo=echo)


def require_port(host: str, port: int, what: str | Said) -> None:
    """process.require_free_port, naming the vLLM of glm1m's that holds the port when one does:
    one left by a glm1m that was killed before it stopped its server (older glm1m did not end it
    with itself), or started by another `glm1m serve` still running."""
    try:
        process.require_free_port(host, port, what)
    except StartFailed:
        held_by = own_vllm_on(port)
        if held_by is None:
            raise
        starter = port_holder.parent_of(held_by)
        if starter is not None and is_glm1m(port_holder.command_line(starter)):
            raise StartFailed(key="port_held_by_glm1m", port=port, host=host, pid=starter,
                              what=what) from None
        raise StartFailed(key="port_held_by_vllm", port=port, host=host, pid=held_by,
                          served=SERVED_NAME, what=what) from None


def is_glm1m(cmd: list[str]) -> bool:
    """`python -m glm1m.cli ...` or the `glm1m` script, as `vllm serve`'s parent process."""
    return any(part == "glm1m.cli" or Path(part).name == "glm1m" for part in cmd)


def own_vllm_on(port: int) -> int | None:
    """The PID to stop of a `vllm serve` of SERVED_NAME listening on `port`, as glm1m starts it."""
    for pid in port_holder.listeners(port):
        cmd = port_holder.command_line(pid)
        runs_vllm = any(part.startswith("vllm.entrypoints") or Path(part).name == "vllm" for part in cmd)
        if runs_vllm and last_value(cmd, "--served-model-name") == SERVED_NAME:
            return pid
    return None


def require_vllm(python: str) -> None:
    """vLLM's CLI asks importlib.metadata for the distribution "vllm" before it reads a flag, and
    vllm-cpu installs as "vllm-cpu": without the name (server/install.sh registers it) or without
    vLLM, `vllm serve` dies with a traceback; this says so in one sentence first."""
    found = subprocess.run([python, "-c", "import importlib.metadata as m; m.version('vllm')"],
                           capture_output=True)
    if found.returncode != 0:
        raise StartFailed(key="vllm_missing", python=python)


def server_cpus() -> set[int] | None:
    """CPU cores for vllm-cpu: all but one. Its engine and API processes busy-poll every core
    they can get; measured on a 2-core VM, that stalled the UI, the browser and even a
    `python -c pass` for seconds. Pinned to one core, the other stays free for them."""
    cores = sorted(os.sched_getaffinity(0))
    return set(cores[:-1]) if len(cores) >= 2 else None


def answers_one_token(options: ServeOptions) -> bool:
    """Ready means a real completion works: vLLM can pass /health and die on its first request."""
    import httpx  # here, not at the top: `glm1m --help` imports this module

    headers = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
    try:
        health = httpx.get(f"{options.base_url}/health", timeout=5)
        if health.status_code != 200:
            return False
        reply = httpx.post(f"{options.base_url}/v1/completions", headers=headers, timeout=120, json={
            "model": SERVED_NAME, "prompt": "hello", "max_tokens": 1,
        })
    except httpx.HTTPError:
        return False
    return reply.status_code == 200 and bool(reply.json().get("choices"))


def wait_ready(proc: subprocess.Popen, options: ServeOptions, log_path: str | None = None,
               timeout_s: float = READY_TIMEOUT_S) -> None:
    process.wait_until(lambda: answers_one_token(options), proc, said("what_model_server"),
                       timeout_s, log_path)
