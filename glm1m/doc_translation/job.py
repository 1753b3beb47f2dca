"""A document's translation from file to file: cut into sections, the glossary asked once (or
read back), each section asked with its document part, checkpointed as it finishes, and the
output written in the input's format, also when stopped (the unfinished sections in the
original and marked), so a rerun continues from the sections still missing.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from glm1m.catalog import EN, Said, render, said
from glm1m.counting import OnTokens, complete_counting
from glm1m.doc_translation.consistency import Consistency, measure
from glm1m.doc_translation.formats import open_layout
from glm1m.doc_translation.glossary import Glossary, glossary_path, merge, parse_glossary, write_glossary
from glm1m.doc_translation.prompt import DocumentPrompt, document_part, structured_glossary
from glm1m.doc_translation.sections import Layout, Section
from glm1m.doc_translation.windows import Windows, plan_windows
from glm1m.documents.ocr import OcrOptions
from glm1m.documents.prompt_ids import KeptIds, appended_ids
from glm1m.errors import ContextTooLong, UserFacingError
from glm1m.llm import ChatParams, Llm, Message
from glm1m.progress import OnProgress, Progress, Stage, Tally, ignore, unit_said
from glm1m.translation.checkpoint import Checkpoint, fingerprint_of
from glm1m.translation.fanout import Result
from glm1m.translation.job import check_output, checkpoint_path
from glm1m.translation.lock import job_lock
from glm1m.translation.table import read_glossary

OnNote = Callable[[Said], None]


# The default window: on an H100, 16K-token windows (and the glossary pass over them) took 1.51x
# the time of sections sent alone, 32K ones 2.06x (docs/benchmarks.md, issue 37's target: 1.5x).
WINDOW_TOKENS = 16_384


@dataclass(frozen=True)
class DocJob:
    target_language: str
    source_language: str | None = None
    glossary: Glossary = ()  # the user's (--glossary): wins over the model's
    concurrency: int = 64
    max_tokens: int = 1024  # longest translation of one section
    # At most this many tokens of the document beside each section (windows); 0: the whole
    # document while it fits; None: WINDOW_TOKENS. Each generated token attends to the whole
    # prefix: a 287K-token document translated whole took >= 9.5x its sections alone (H200).
    context_tokens: int | None = None
    retries: int = 4
    lang: str = EN  # the language of the marks and lines, not the target
    bilingual: bool = False  # PDF: original and translated pages alternating
    ocr: OcrOptions | None = None  # PDF: how scanned pages are read (None: OcrOptions())

    @property
    def window_limit(self) -> int:
        """Most tokens of the document beside a section; 0 for the whole document."""
        return WINDOW_TOKENS if self.context_tokens is None else self.context_tokens


@dataclass(frozen=True)
class DocSummary:
    total: int
    translated: int
    failed: int
    output: Path
    stopped: bool
    resumed: int
    consistency: Consistency
    glossary: Path
    notes: tuple[Said, ...] = field(default=())  # what writing could not keep

    @property
    def not_reached(self) -> int:
        return self.total - self.translated - self.failed

    @property
    def complete(self) -> bool:
        return self.translated == self.total

    def line(self, lang: str = EN) -> str:
        resumed = said("summary_resumed", resumed=self.resumed,
                       new=self.translated - self.resumed) if self.resumed else ""
        failed = said("doc_tr_failed", failed=self.failed) if self.failed else ""
        left = said("summary_not_reached", count=self.not_reached) if self.not_reached else ""
        return render(lang, "summary_line", translated=self.translated, total=self.total,
                      unit=unit_said("sections", 0), resumed=resumed, failed=failed, not_reached=left,
                      output=self.output)


async def run_document(path: Path, job: DocJob, llm: Llm, output: Path,
                       on_progress: OnProgress = ignore, on_note: OnNote = lambda note: None
                       ) -> DocSummary:
    """Translate the document at `path` into `output` (same format). Cancelling it still writes
    the output, the finished sections translated and the rest in the original and marked."""
    check_output(output, path)
    with job_lock(output, path.name):
        layout = await asyncio.to_thread(open_layout, path, job.bilingual, job.ocr)
        for note in layout.notes:
            on_note(note)
        windows = await plan_windows(layout.sections, llm, job.max_tokens, job.window_limit)
        if len(windows.groups) > 1:
            on_note(said("doc_tr_windows_default" if job.context_tokens is None else "doc_tr_windows_chosen",
                         limit=job.window_limit, count=len(windows.groups))
                    if windows.limited else
                    said("doc_tr_windows", tokens=windows.tokens, context=windows.context,
                         count=len(windows.groups)))
        glossary = merge(job.glossary, await model_glossary(layout, windows, job, llm, output, on_note))
        prompts = [DocumentPrompt(job.target_language, job.source_language,
                                  document_part([layout.sections[i] for i in group]), glossary)
                   for group in windows.groups]
        settings: dict[str, object] = {"to": job.target_language, "from": job.source_language,
                                       "glossary": glossary, "max_tokens": job.max_tokens,
                                       "windows": windows.groups}
        key = fingerprint_of(hashlib.sha256(path.read_bytes()), settings)
        return await translate_sections(layout, [prompts[windows.of(s.index)] for s in layout.sections],
                                        job, llm, output, key, glossary, on_progress)


async def model_glossary(layout: Layout, windows: Windows, job: DocJob, llm: Llm, output: Path,
                         on_note: OnNote) -> Glossary:
    """The glossary beside the output when there is one (an earlier run's, or the user's edit of
    it), else asked of the model once per window and written there."""
    written = glossary_path(output)
    if written.exists():
        on_note(said("doc_tr_glossary_reused", path=written))
        return read_glossary(written) if written.stat().st_size else ()
    params = ChatParams(temperature=0.0, max_tokens=max(job.max_tokens, 512), extra=structured_glossary())
    problems: list[str] = []
    limit = asyncio.Semaphore(job.concurrency)

    async def of_window(group: tuple[int, ...]) -> Glossary:
        prompt = DocumentPrompt(job.target_language, job.source_language,
                                document_part([layout.sections[i] for i in group]))
        try:
            async with limit:
                return parse_glossary(await llm.complete(prompt.glossary_messages(), params,
                                                         retries=job.retries))
        except UserFacingError as error:  # the glossary helps; it is no reason to stop
            problems.append(error.in_language(job.lang))
            return ()

    # The windows at once (in order when merged: an earlier window's term wins): one after
    # another, the glossary of a document of many windows took a decode of every window in turn.
    found = await asyncio.gather(*(of_window(group) for group in windows.groups))
    problem = problems[-1] if problems else ""
    glossary = merge((), *found)
    if not glossary:
        on_note(said("doc_tr_glossary_none", reason=problem or render(job.lang, "doc_tr_empty_answer")))
    await asyncio.to_thread(write_glossary, written, glossary)
    on_note(said("doc_tr_glossary_written", count=len(glossary), path=written))
    return glossary


async def ask_section(text: str, prompt: DocumentPrompt, kept: KeptIds, job: DocJob, llm: Llm,
                      on_tokens: OnTokens) -> str:
    """The translation of `text` (a section, or its plain fallback) with its document part, sent as
    token ids where the server gives them (the part tokenized once per document: `kept`)."""
    # Not one_shot: the document part is sent again with every section, and a long one is worth
    # keeping in the server's host KV tier between them.
    params = ChatParams(temperature=0.0, max_tokens=job.max_tokens)
    section: list[Message] = [{"role": "user", "content": text}]
    ids = await appended_ids(llm, prompt.shared(), section, kept)
    return await complete_counting(llm, prompt.shared() + section, params, on_tokens,
                                   retries=job.retries, ids=ids.ids if ids is not None else None)


async def translate_section(section: Section, prompt: DocumentPrompt, kept: KeptIds, layout: Layout,
                            job: DocJob, llm: Llm, on_tokens: OnTokens) -> Result:
    """One section's result: its translation, or why it stays in the original."""
    try:
        answer = await ask_section(section.text, prompt, kept, job, llm, on_tokens)
        if answer.strip() and not layout.kept(section, answer) and section.fallback is not None:
            plain = await ask_section(section.fallback, prompt, kept, job, llm, on_tokens)
            return Result(section.index, layout.fell_back(section, plain))
    except ContextTooLong:
        return Result(section.index, None, render(job.lang, "doc_tr_section_too_long",
                                                  chars=len(section.text), context=await llm.max_model_len()))
    except UserFacingError as error:
        return Result(section.index, None, error.in_language(job.lang))
    if not answer.strip():
        return Result(section.index, None, render(job.lang, "doc_tr_empty_answer"))
    if not layout.kept(section, answer):
        return Result(section.index, None, render(job.lang, "doc_tr_structure_lost"))
    return Result(section.index, answer.strip("\n"))


async def translate_sections(layout: Layout, prompts: Sequence[DocumentPrompt], job: DocJob, llm: Llm,
                             output: Path, key: str, glossary: Glossary,
                             on_progress: OnProgress) -> DocSummary:
    progress_file = checkpoint_path(output)
    earlier = progress_file.exists()  # a partial output of an earlier run is ours to rewrite
    checkpoint = Checkpoint.open(progress_file, key)
    total = len(layout.sections)
    kept = sum(1 for r in checkpoint.results.values() if r.error is None)
    tally = Tally(Progress(Stage.TRANSLATING, kept, total, unit="sections", resumed=kept), on_progress)
    limit = asyncio.Semaphore(job.concurrency)
    ids = {prompt: KeptIds() for prompt in prompts}  # one document part's ids per window

    async def one(section: Section) -> None:
        async with limit:
            tally.start(section.index, len(section.text))
            prompt = prompts[section.index]
            result = await translate_section(section, prompt, ids[prompt], layout, job, llm,
                                             lambda count: tally.tokens(section.index, count))
        checkpoint.record(result)
        tally.finish(result.index, failed=result.error is not None)

    pending = [s for s in layout.sections if not checkpoint.translated(s.index)]
    for section in pending:  # an earlier run's failures are asked again, not counted twice
        checkpoint.results.pop(section.index, None)
    tasks = [asyncio.create_task(one(section)) for section in pending]
    stopped = True
    try:
        await asyncio.gather(*tasks)
        stopped = False
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        results = dict(checkpoint.results)
        translated = sum(1 for r in results.values() if r.error is None)
        notes: list[Said] = []
        if not stopped or earlier or not output.exists():  # never a stopped rerun over a finished output
            # Shielded: a second Ctrl-C while the file is written must not cut it short.
            notes = await asyncio.shield(asyncio.to_thread(write, layout, results, output, job.lang))
        checkpoint.close(remove=translated == total)
    return DocSummary(total, translated, len(results) - translated, output, stopped, kept,
                      measure(layout.sections, results, glossary), glossary_path(output), tuple(notes))


def write(layout: Layout, results: Mapping[int, Result], output: Path, lang: str) -> list[Said]:
    """The output beside its place, moved there once whole (an interrupted write leaves the old)."""
    from glm1m.files import replace_when_done

    with replace_when_done(output) as writing:
        return layout.write(results, writing, lang)
