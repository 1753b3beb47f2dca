"""The one Settings object: environment variables prefixed GLM1M_, or a .env file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import AliasChoices, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from glm1m.catalog import Said, said
from glm1m.errors import SettingsError


def one_of(*values: str) -> dict[str, Any]:
    """A text field's allowed values, as Field takes them: the pattern pydantic checks, and the
    values themselves (json_schema_extra), which the sentence saying what it expects lists."""
    return {"pattern": f"^({'|'.join(values)})$", "json_schema_extra": {CHOICES: list(values)}}


CHOICES = "choices"  # one_of's key in a field's json_schema_extra


class Settings(BaseSettings):
    # populate_by_name: code passes fields by name (Settings(base_url=...)) even where the
    # environment spells them otherwise (MODEL).
    model_config = SettingsConfigDict(env_prefix="GLM1M_", env_file=".env", extra="ignore",
                                      populate_by_name=True)

    data_dir: Path = Field(Path("var"), description="where produced files and checkpoints live")
    base_url: str = Field("http://127.0.0.1:8000/v1", description="OpenAI-compatible URL of vLLM")
    tokenize_url: str = Field(
        "", description="where /tokenize is asked when base_url is vLLM's router, which cannot "
                        "pass the key on it: one server behind it (empty: base_url's server)")
    health_path: str = Field(
        "/health", description="what is polled while a long prompt is read: /readiness behind "
                               "vLLM's router (its /health fails while any one server is down)")
    router_policy: str = Field(
        "sticky_least_loaded", **one_of("sticky_least_loaded", "cache_aware"),
        description="how `glm1m router` (and --replicas) picks a server: sticky_least_loaded by "
                    "X-Session-ID (glm1m's client sends one, the router's front adds one for other "
                    "clients), cache_aware by the prompt's prefix (docs/serving.md, \"Several "
                    "machines\")")
    api_key: str = Field("", description="API key the model server expects (empty: the one "
                                          "`glm1m serve` keeps in DATA_DIR/server-api-key)")
    model: str = Field("glm-4-9b-chat-1m", description="served model name")
    demo: bool = Field(False, description="the server runs the random-weight demo model")
    system_prompt: str = Field("You are a helpful assistant. Answer in the user's language.",
                               description="default system prompt (editable in the UI)")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="default sampling temperature")
    max_tokens: int = Field(1024, ge=1, description="default limit of new tokens per answer")
    request_timeout_s: float = Field(
        600.0, gt=0, description="timeout of a non-streamed model request, and the longest silence "
                                 "between the pieces of an answer once it has begun")
    # A 1M-token prefill took 604 s on one H200 (docs/benchmarks.md) and takes about 2.5x that on
    # an A100: an hour leaves room for the slowest GPU glm1m plans for.
    first_token_timeout_s: float = Field(
        3600.0, gt=0, description="longest wait for a streamed answer to begin (the server reads "
                                  "the whole prompt first), while its /health answers")
    wait_line_s: float = Field(60.0, gt=0, description="how often `glm1m summarize` says it is "
                                                        "still waiting for a whole document to be "
                                                        "read, where stderr is not a terminal")
    health_poll_s: float = Field(10.0, gt=0, description="how often /health is checked while "
                                                          "waiting for an answer to begin")
    translate_concurrency: int = Field(64, ge=1, description="CSV rows in flight at once")
    translate_max_tokens: int = Field(1024, ge=1, description="longest translation of one cell")
    language_question_s: int = Field(
        15, ge=0, description="on the page, a translation into the default language first says its "
                              "languages with a one-click change and starts by itself after this "
                              "many seconds (0: starts at once)")
    metrics_port: int = Field(8002, ge=0, description="app's Prometheus /metrics port on 127.0.0.1 (0: off)")
    whole_document_threshold: int = Field(
        128_000, ge=1, description="documents up to this many tokens are read whole by default")
    map_chunk_tokens: int = Field(32_000, ge=256, description="map-reduce chunk size, in tokens")
    map_concurrency: int = Field(8, ge=1, description="map-reduce chunks read at once")
    # A grid's documents asked at once (each its questions in turn): each holds its document's
    # prefix in the KV cache while its questions are asked, so the bound is documents, not cells;
    # how many fit the served KV room: docs/serving.md, "A grid's documents at once".
    grid_concurrency: int = Field(4, ge=1, description="documents of a grid asked at once")
    map_note_tokens: int = Field(512, ge=16, description="longest notes taken from one chunk")
    lookup_calls: int = Field(8, ge=1, description="lookups the model may make for one answer (look-up)")
    lookup_chars: int = Field(6000, ge=200, description="characters one lookup gives back (look-up)")
    # Was GLM1M_PDF_MAX_MB, when PDF was the one format; that name is still read (the new one
    # first, so with both set the new one counts).
    document_max_mb: float = Field(
        200.0, gt=0, validation_alias=AliasChoices("GLM1M_DOCUMENT_MAX_MB", "GLM1M_PDF_MAX_MB"),
        description="largest document (any format: PDF, DOCX, EPUB, ...) accepted, in MB")
    pdf_max_pages: int = Field(5000, ge=1, description="most pages accepted in one PDF")
    ocr: str = Field("auto", **one_of("auto", "always", "never"),
                     description="OCR of scanned pages: auto (pages without a text layer), "
                                 "always (every page), never")
    ocr_languages: str = Field("chi_sim+eng", description="Tesseract languages for OCR, joined "
                                                          "by '+' (chi_sim, chi_tra, eng, ...)")
    ocr_dpi: int = Field(150, ge=50, le=600, description="resolution pages are read at by OCR")
    ocr_workers: int = Field(0, ge=0, description="OCR processes at once (0: one per core)")
    ocr_tessdata: Path | None = Field(
        None, description="folder of Tesseract's .traineddata files (unset: TESSDATA_PREFIX, "
                          "else where the tesseract command has them)")
    # Limits on one upload's reading work (glm1m/documents/limits.py), each checked before the
    # work it bounds; a refusal names the variable that raises it.
    # A 5.5 MB DOCX of 1,899 MB took 47.7 s and 3.8 GB before failing (issue 33). MuPDF opens
    # DOCX XML at ~0.45 s and ~20 MB of memory a MB (53 MB: 23 s, 1.07 GB; MuPDF 1.28.5), while
    # pictures unpack to about their packed size: above the 200 MB upload limit, well below that.
    # XML packs 5 to 25 times (python-docx's default.docx: 25x); zeros 1,000 times.
    document_max_unpacked_mb: float = Field(
        300.0, gt=0, description="most MB a DOCX, EPUB or XPS may unpack to, by its zip "
                                 "directory, checked before anything is unpacked (zip bombs)")
    document_max_unpack_ratio: float = Field(
        100.0, gt=1, description="most times its packed size a DOCX, EPUB or XPS that unpacks to "
                                 "more than 20 MB may unpack to (zip bombs)")
    # MuPDF lays a 50,000-paragraph DOCX (13 MB of XML, 3,261 A4 pages) out in ~6 s and reads its
    # text in ~12 s more: 5,000 pages, as for a PDF, stay within a minute.
    reflow_max_pages: int = Field(
        5000, ge=1, description="most A4 pages a DOCX, EPUB, HTML, FB2 or MOBI file may lay out "
                                "to, counted from MuPDF's layout before its text is read")
    # OCR reads about 10 s a page on one core: 1,000 pages take ~10 minutes on 16 cores.
    ocr_max_pages: int = Field(
        1000, ge=1, description="most pages OCR reads in one document; one with more pages to "
                                "OCR is refused before any is read")
    # Far past what a strategy reads: 10 times the largest context glm1m serves (1,048,576
    # tokens, read whole), ~313 map-reduce chunks of GLM1M_MAP_CHUNK_TOKENS (32,000), while
    # look-up's 8 lookups of 6,000 characters read under 0.1 % of it; and what GLM1M_PDF_MAX_PAGES
    # (5,000) dense pages of 2,000 tokens hold, so it stops text files and sets, not long PDFs.
    document_max_tokens: int = Field(
        10_000_000, ge=1, description="most tokens a document (or a set of them) may have; "
                                      "counting stops once it is past them")
    reads_per_user: int = Field(
        2, ge=1, description="documents of one user read (OCR included) at once; one more is "
                             "refused until one is read (login off: all users count as one)")
    shelf_max_mb: float = Field(
        1000.0, gt=0, description="most MB of read documents (text and token counts) each user's "
                                  "shelf keeps, so the same file attached again is not read again")
    csv_max_mb: float = Field(100.0, gt=0, description="largest CSV (table or glossary) accepted "
                                                        "for upload, in MB")
    xlsx_max_mb: float = Field(100.0, gt=0, description="largest .xlsx workbook accepted for "
                                                          "upload, in MB")
    xlsx_max_unpacked_mb: float = Field(
        300.0, gt=0, description="most MB an .xlsx may unpack to (its zip directory's sizes): "
                                 "a zip bomb is refused before any part is read")
    # Writing the result loads the whole workbook: ~550 bytes a cell with openpyxl 3.1.5 (100k rows
    # of 3 columns: 215 MB, 9 s), so 300k rows of a few columns stay near a gigabyte.
    xlsx_max_rows: int = Field(300_000, ge=1, description="most rows of the sheet translated in "
                                                          "one job (its last row with a value)")
    stream_flush_s: float = Field(0.1, ge=0, description="least time between UI stream updates")
    retries: int = Field(2, ge=0, description="retries of a request on 429/503/connection errors")
    database_url: str = Field(
        "", description="SQLAlchemy async URL of the chat history (empty: SQLite file in data_dir)")
    database_migrate: bool = Field(
        True, description="create missing history tables and columns at startup")
    auth: bool | None = Field(
        None, description="require a login (unset: on, except in demo mode)")
    local_history: bool = Field(
        True, description="with login off and the page on loopback: keep chats, files and the "
                          "shelf for one local user, without a password")
    users_file: Path | None = Field(
        None, description="users written by `glm1m users add` (default: data_dir/users.json)")
    users: str = Field(
        "", description="more users: 'name=scrypt:...' separated by commas (see accounts.py)")
    login_failures_per_name: int = Field(
        5, ge=1, description="wrong passwords for one name within login_window_s before its "
                             "logins are refused until the oldest ages out")
    login_failures_per_address: int = Field(
        20, ge=1, description="wrong passwords from one address (IPv6: one /64) within "
                              "login_window_s before its logins are refused")
    login_window_s: float = Field(900.0, gt=0, description="how long a wrong password counts")
    allowed_origins: str = Field(
        "", description="web origins besides the app's own that may use it, comma-separated "
                        "(e.g. https://intranet.example; '*': any page, as Chainlit's default)")
    allowed_hosts: str = Field(
        "", description="host names the app answers under besides loopback, IP addresses and "
                        "its --host, comma-separated (e.g. gpu-box,glm.example; '.example.com': "
                        "it and its subdomains; '*': any name, no guard against DNS rebinding)")

    serve_model: str | None = Field(
        None, validation_alias=AliasChoices("GLM1M_SERVE_MODEL", "MODEL"),
        description="checkpoint `glm1m serve` starts: a local path or hub id ($MODEL, as "
                    "`MODEL=... make run` sets it)")
    kv_disk_dir: str = Field(
        "", description="folder of the KV tier on disk that `glm1m serve` gives vLLM on a GPU, "
                        "so a restarted server loads documents back (empty: off; --kv-disk)")
    # Two full-length bf16 documents (80 GiB each; four in fp8, about twenty of 128K tokens): a
    # cap below 80 GiB could keep no 1M-token document at all. Pruned to it before each start.
    kv_disk_gib: float = Field(160.0, gt=0, description="most GiB the disk tier's folder keeps "
                                                         "(least recently used blocks go first)")
    vllm_python: Path | None = Field(
        None, description="python of the environment that has vLLM (default: the checkout's "
                          ".venv-server, else this python)")
    # The locale's variables, as POSIX ranks them, after glm1m's own: LANG=zh_CN.UTF-8 is enough.
    lang: str = Field(
        "", validation_alias=AliasChoices("GLM1M_LANG", "LC_ALL", "LC_MESSAGES", "LANG"),
        description="the language the CLI speaks: zh (or a zh_CN locale) reads Simplified Chinese, "
                    "anything else English (default: the locale, LC_ALL / LC_MESSAGES / LANG)")

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def server_root(self) -> str:
        """vLLM's own endpoints (/tokenize, /metrics, /health) sit beside /v1, not under it."""
        return self.base_url.rstrip("/").removesuffix("/v1")

    @property
    def tokenize_root(self) -> str:
        return self.tokenize_url.rstrip("/").removesuffix("/v1") or self.server_root

    @property
    def auth_required(self) -> bool:
        """The demo model is a throwaway: it runs open unless GLM1M_AUTH says otherwise."""
        return self.auth if self.auth is not None else not self.demo

    @property
    def users_path(self) -> Path:
        return self.users_file or self.data_dir / "users.json"


class Locale(BaseSettings):
    """Settings.lang alone, read the same way: the language to say a bad GLM1M_* value in."""
    model_config = Settings.model_config
    lang: str = Field("", validation_alias=Settings.model_fields["lang"].validation_alias)


@lru_cache
def get_settings() -> Settings:
    return Settings()


def load_settings() -> Settings:
    """Settings(), with a bad value raised as one SettingsError sentence, not pydantic's report."""
    try:
        return Settings()
    except ValidationError as error:
        raise settings_error(error) from None


def settings_error(error: ValidationError) -> SettingsError:
    """pydantic's ValidationError for Settings as a SettingsError: per bad value, one sentence
    naming the variable (or the command's option) that gave it, the value and what is expected."""
    sentences = []
    for problem in error.errors():
        name = str(problem["loc"][0]) if problem["loc"] else ""
        field = Settings.model_fields.get(name) or _field_of_alias(name)
        given = problem.get("input")
        if field is None:  # not a field of ours: pydantic's own words, still one line
            sentences.append(said("settings_unknown", name=name, msg=problem["msg"]))
        elif isinstance(given, str):  # the environment and .env hold text only
            default = field.default
            unset = said("settings_default", value=_number(default)) if default not in (None, "") else ""
            sentences.append(said("settings_bad_env", variable=_variable(name, field), given=repr(given),
                                  expects=_expects(field), unset=unset))
        else:  # a typed value: a command passed one of its options
            sentences.append(said("settings_bad_option", option=name.replace("_", "-"), given=given,
                                  expects=_expects(field)))
    joined = sentences[-1]
    for sentence in reversed(sentences[:-1]):
        joined = said("settings_and", first=sentence, rest=joined)
    return SettingsError.of(joined)


def _field_of_alias(alias: str) -> FieldInfo | None:
    for field in Settings.model_fields.values():
        if isinstance(field.validation_alias, AliasChoices) and alias in field.validation_alias.choices:
            return field
    return None


def _variable(name: str, field: FieldInfo) -> str:
    if isinstance(field.validation_alias, AliasChoices):  # the first of its names that is set
        choices = [str(c) for c in field.validation_alias.choices]
        return next((c for c in choices if _is_set(c)), choices[0])
    return f"{Settings.model_config.get('env_prefix', '')}{name}".upper()


def _is_set(variable: str) -> bool:
    """Whether the environment or .env gives `variable`, read as Settings reads them (pydantic
    reports a bad value under an alias's first name, whichever name gave it)."""
    class One(BaseSettings):
        model_config = SettingsConfigDict(**{**Settings.model_config, "populate_by_name": False})
        value: str | None = Field(None, validation_alias=variable)
    return One().value is not None


KINDS = {int: "kind_int", float: "kind_float", bool: "kind_bool", Path: "kind_path", str: "kind_str"}


def _expects(field: FieldInfo) -> Said | str:
    """"a whole number of at least 1", "a number from 0 to 2", "one of auto, always or never"."""
    kind = said(next((key for t, key in KINDS.items() if _is(field.annotation, t)), "kind_any"))
    low: tuple[str, Any] | None = None
    high: tuple[str, Any] | None = None
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if isinstance(choices := extra.get(CHOICES), list) and choices:
        *first, last = (str(choice) for choice in choices)
        return said("expect_one_of", first=first, last=last) if first else last
    for rule in field.metadata:
        if isinstance(rule, Ge):
            low = ("bound_ge", rule.ge)
        elif isinstance(rule, Gt):
            low = ("bound_gt", rule.gt)
        elif isinstance(rule, Le):
            high = ("bound_le", rule.le)
        elif isinstance(rule, Lt):
            high = ("bound_lt", rule.lt)
    if low is not None and high is not None and (low[0], high[0]) == ("bound_ge", "bound_le"):
        return said("expect_range", kind=kind, low=_number(low[1]), high=_number(high[1]))
    bounds = [said(key, n=_number(n)) for key, n in (b for b in (low, high) if b is not None)]
    if not bounds:
        return kind
    joined = bounds[0] if len(bounds) == 1 else said("bounds_both", low=bounds[0], high=bounds[1])
    at = bounds[0].key in ("bound_ge", "bound_le")  # "of at least 1", but "greater than 0"
    return said("expect_of" if at else "expect_bounded", kind=kind, bounds=joined)


def _is(annotation: Any, kind: type) -> bool:
    return annotation is kind or kind in getattr(annotation, "__args__", ())


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
