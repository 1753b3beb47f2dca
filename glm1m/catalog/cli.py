"""The command line's own lines for a person, on stderr (glm1m/cli/): what it is doing, waiting
for, and has done. (English, Chinese) per id; see glm1m/catalog/__init__.py for the convention.
What stdout carries (an answer, a plan's flags, extracted text) is data and is not here."""

from __future__ import annotations

CLI: dict[str, tuple[str | tuple[str, str], str]] = {
    "cli_stopped": ("stopped.", "已停止。"),
    # What serves, and what an estimate of its prefill rests on (glm1m/serving.py).
    "on_cpu_server": ("this CPU server", "这台 CPU 服务器"),
    "on_one_gpu": ("one {gpu}", "一块 {gpu}"),
    "on_gpus": ("{count}× {gpu}", "{count} 块 {gpu}"),
    "basis_seen": (("from {count} prompt read on this server", "from {count} prompts read on this server"),
                   "根据此服务器已读过的 {count} 个提示"),
    "basis_gpu": ("for {where}", "按{where}"),
    # Before a whole document's answer (serving.PrefillClock.describe_wait).
    "wait_no_estimate": ("no estimate yet for this server", "此服务器还没有估计"),
    "wait_about_minutes": ("about {minutes:.0f} minutes (an estimate {basis})",
                           "约 {minutes:.0f} 分钟（{basis}估计）"),
    "wait_about_seconds": ("about {seconds} s (an estimate {basis})", "约 {seconds} 秒（{basis}估计）"),
    "wait_what_document": ("document", "篇文档"),
    "wait_what_set": ("set of documents", "组文档"),
    "wait_read_before": (
        "This server read this {what} before ({before}): if it still holds it, the answer starts in "
        "seconds; reading all {tokens:,} tokens again would take {when}.",
        "此服务器之前读过这{what}（{before}）：如果它仍保留着，回答几秒内就会开始；"
        "否则重新读取全部 {tokens:,} 个词元所需时间：{when}。"),
    "wait_first_answer": (
        "Until the first answer starts: {when}; the model reads all {tokens:,} tokens first, and "
        "follow-up questions reuse that work and start fast.",
        "到回答开始前：{when}；模型要先读完全部 {tokens:,} 个词元，之后的追问会复用这些计算，很快就会开始。"),
    # The line that moves while the server reads (glm1m/cli/waiting.py).
    "wl_reading": ("still reading {name} ({tokens:,} tokens): {clock} so far",
                   "仍在读取 {name}（{tokens:,} 个词元）：已用 {clock}"),
    "wl_again": (
        "asking {name} again ({tokens:,} tokens): {clock} so far; this server read it before, so the "
        "answer starts in seconds if it still holds it",
        "再次询问 {name}（{tokens:,} 个词元）："
        "已用 {clock}；此服务器之前读过它，如果仍保留着，回答几秒内就会开始"),
    "wl_no_estimate": ("{head}; no estimate yet for this server.", "{head}；此服务器还没有估计。"),
    "wl_left": ("{head}, about {left} left (an estimate {basis}).", "{head}，约剩 {left}（{basis}估计）。"),
    "wl_left_else": ("{head}, else about {left} left (an estimate {basis}).",
                     "{head}，否则约剩 {left}（{basis}估计）。"),
    "wl_past": (
        "{head}, longer than the {estimate} estimated {basis}; the server still answers its health "
        "check, so it is still reading.",
        "{head}，已超过{basis}估计的 {estimate}；服务器仍在响应健康检查，所以仍在读取。"),
    # glm1m summarize (glm1m/cli/summarize.py, waiting.py).
    "cli_on_shelf": ("{name}: on the shelf since {when}, not read again.",
                     "{name}：自 {when} 起已在文档架上，不再重复读取。"),
    "cli_budget": ("{held}, {tokens:,} tokens — {fraction:.1%} of the served {context:,}-token context.",
                   "{held}，{tokens:,} 个词元——占所部署 {context:,} 词元上下文的 {fraction:.1%}。"),
    "cli_set_held": ("{count} documents, {held}", "{count} 个文档，{held}"),
    "cli_both": ("{one} and {other}", "{one}和{other}"),
    "cli_no_pages": ("no pages", "没有页面"),
    "cli_read": ("{name}: {budget} Strategy: {strategy}.", "{name}：{budget}读取方式：{strategy}。"),
    "cli_strategy_whole": ("whole", "整篇"),
    "cli_strategy_map_reduce": ("map-reduce", "分段（map-reduce）"),
    "cli_strategy_look_up": ("look-up", "查找"),
    "cli_cited": ("cited: {places}", "引用：{places}"),
    "cli_cited_sep": ("; ", "；"),
    # glm1m shelf, glm1m users, and the first user `glm1m up` asks for (glm1m/cli/shelf.py, users.py).
    "cli_shelf_empty": ("the shelf is empty: documents read by `glm1m summarize` or the page are kept here.",
                        "文档架是空的：`glm1m summarize` 或网页读取过的文档会保存在这里。"),
    "cli_shelf_removed": ("removed {name} ({hash}, {mb:,.1f} MB) from the shelf.",
                          "已从文档架删除 {name}（{hash}，{mb:,.1f} MB）。"),
    "cli_user_added": ("added {name} in {path}", "已在 {path} 中添加 {name}"),
    "cli_user_changed": ("changed the password of {name} in {path}", "已在 {path} 中修改 {name} 的密码"),
    "cli_user_removed": (
        "removed {name} from {path}; their sessions have ended (their chats stay in the history database)",
        "已从 {path} 中删除 {name}；其会话已结束（其对话仍保留在历史数据库中）"),
    "cli_no_user_yet": (
        "login is on (the real model is served) and no user exists: run `glm1m users add NAME` first, "
        "or set GLM1M_AUTH=false.",
        "已开启登录（部署的是真实模型），但还没有任何用户：请先运行 `glm1m users add NAME`，"
        "或设置 GLM1M_AUTH=false。"),
    "cli_ask_name": ("User name: ", "用户名："),
    "cli_ask_password": ("Password: ", "密码："),
    "cli_ask_again": ("Again: ", "再输入一次："),
    "cli_create_first_user": ("login is on and no user exists yet; create the first one.",
                              "已开启登录，但还没有任何用户；请创建第一个用户。"),
    "cli_no_user_created": ("no user was created; run `glm1m users add NAME`, then start again.",
                            "没有创建用户；请运行 `glm1m users add NAME`，然后重新启动。"),
    "cli_plan_failed": ("plan: {error}", "plan：{error}"),
    "cli_host_mem": ("plan: --host-mem must be positive (got {value:g}).",
                     "plan：--host-mem 必须为正数（收到的是 {value:g}）。"),
    # glm1m serve, up and router (glm1m/cli/serve.py, up.py, router.py).
    "cli_serve_listening": (
        "listening on {host}: every route needs the API key except {open}, which answer anyone who can "
        "reach this port.",
        "正在 {host} 上监听：除 {open} 外每个路由都需要 API 密钥，这几个对任何能访问此端口的人都会应答。"),
    "cli_router_listening": (
        "listening on {host}: model routes need the key, but {open} answer anyone who can reach this port.",
        "正在 {host} 上监听：模型路由需要密钥，但 {open} 对任何能访问此端口的人都会应答。"),
    "cli_replicas_exposed": (
        "the router listens on {host}: {open} answer anyone who can reach it (the replicas stay on "
        "127.0.0.1).",
        "路由器在 {host} 上监听：{open} 对任何能访问它的人都会应答（各副本仍只在 127.0.0.1 上）。"),
    "cli_starting": ("starting: {command}", "正在启动：{command}"),
    "cli_server_ready": ("model server ready at {url}/v1 (log: {log})",
                         "模型服务器已就绪：{url}/v1（日志：{log}）"),
    "cli_router_ready": (
        "router ready at {url}/v1 in front of {backends}; point GLM1M_BASE_URL there, GLM1M_TOKENIZE_URL "
        "at one of the servers and GLM1M_HEALTH_PATH=/readiness",
        "路由器已就绪：{url}/v1，位于 {backends} 之前；请把 GLM1M_BASE_URL 指向它，把 GLM1M_TOKENIZE_URL "
        "指向其中一个服务器，并设置 GLM1M_HEALTH_PATH=/readiness"),
    "cli_router_header": (
        "other OpenAI clients: send a {header} header, one value per document or conversation, to spread "
        "them and keep each one's questions on its server",
        "其他 OpenAI 客户端：请发送 {header} 请求头，每个文档或对话一个值，"
        "这样请求会被分散，且每个文档或对话的提问都留在同一个服务器上"),
    "cli_not_recorded": (
        "could not record the server in {folder} ({reason}); the UI's wait estimates will say they are "
        "for an H200.",
        "无法在 {folder} 中记录服务器（{reason}）；界面的等待估计将按 H200 给出。"),
    "cli_replicas_ready": (
        "model server ready at {url}/v1 (vLLM's router in front of {replicas} replicas; the app asks "
        "{first} for /tokenize: GLM1M_TOKENIZE_URL)",
        "模型服务器已就绪：{url}/v1（vLLM 路由器位于 {replicas} 个副本之前；应用向 {first} 请求 /tokenize："
        "GLM1M_TOKENIZE_URL）"),
    "cli_ready_starting_ui": ("{ready}; starting the UI (log: {log}) ...",
                              "{ready}；正在启动界面（日志：{log}）…"),
    "cli_demo": ("no GPU found (or --demo): serving the demo model, random weights, answers are noise",
                 "没有找到 GPU（或用了 --demo）：部署演示模型，权重是随机的，回答没有意义"),
    "cli_starting_server": ("starting the model server (log: {log}) ...",
                            "正在启动模型服务器（日志：{log}）…"),
    "cli_server_ready_ui": ("model server ready at {url}/v1; starting the UI (log: {log}) ...",
                            "模型服务器已就绪：{url}/v1；正在启动界面（日志：{log}）…"),
    "cli_open_both": ("open {url}  (Ctrl-C stops both)", "请打开 {url}（Ctrl-C 同时停止两者）"),
    "cli_open_all": ("open {url}  (Ctrl-C stops all)", "请打开 {url}（Ctrl-C 停止全部）"),
    "cli_stopping": ("stopping ...", "正在停止…"),
    "cli_stopping_ui": ("stopping the UI", "正在停止界面"),
    "cli_ui_exited": ("the UI exited (status {code}); stopping the rest",
                      "界面已退出（状态 {code}）；正在停止其余部分"),
    # glm1m translate (glm1m/cli/translate.py).
    "cli_concurrency_least": ("--concurrency and --max-tokens must be at least 1.",
                              "--concurrency 和 --max-tokens 至少为 1。"),
    "cli_translating": ("{what} into {target} → {output}", "{what}，译成 {target} → {output}"),
    "tr_stopped_all_done": ("stopped; every row is translated → {output}",
                            "已停止；所有行都已翻译 → {output}"),
    "tr_stopped_before_began": ("stopped before it began.", "在开始之前就已停止。"),
    "tr_stopped_nothing": ("stopped before any row was translated; nothing was written.",
                           "在翻译任何一行之前就已停止；没有写入任何内容。"),
    "tr_stopped_kept": (
        "stopped. {output} keeps its earlier complete translation; run the same command again to "
        "finish this run.",
        "已停止。{output} 保留着之前完整的译文；再次运行同一命令即可完成这次运行。"),
    "tr_stopped_continue": ("stopped. Finished rows are in {output}; run the same command again to continue.",
                            "已停止。已完成的行在 {output} 中；再次运行同一命令即可继续。"),
}
