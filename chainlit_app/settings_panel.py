"""The ⚙ panel: the settings a user may change in a chat, each with a short help line under it
(Chainlit's `description`, drawn beneath the widget) in the page's language."""

from __future__ import annotations

from typing import Any

from chainlit.input_widget import InputWidget, Select, Slider, Switch, TextInput

from glm1m.chainlit_app.chosen_settings import Chosen
from glm1m.chainlit_app.i18n import default_target, t, target_words
from glm1m.chainlit_app.session import LANGUAGES
from glm1m.settings import Settings


def system_prompt(settings: Settings, lang: str) -> str:
    """The chat's system prompt: GLM1M_SYSTEM_PROMPT when the operator set one, else the default in
    the page's language (a Chinese page showed an English one in its panel)."""
    if "system_prompt" in settings.model_fields_set:
        return settings.system_prompt
    return t(lang, "default_system_prompt")


def languages(lang: str) -> dict[str, str]:
    """The languages offered, {name on the page: value kept}: named in the page's language, as the
    sentences that follow name them ("翻译成英文"), not each in its own (the person choosing reads
    the page's language; one looking for their own language's name is a language switcher's case)."""
    return {target_words(lang, value): value for value in LANGUAGES}


def widgets(lang: str, settings: Settings, target: str, chosen: Chosen | None = None) -> list[InputWidget]:
    """The panel's widgets, showing what the user chose before (`chosen`) over the defaults; their
    ids are the keys on_settings_update reads."""
    auto = t(lang, "auto_source")
    chosen = chosen or Chosen()
    return [
        TextInput(id="system_prompt", label=t(lang, "label_system_prompt"),
                  initial=chosen.system_prompt or system_prompt(settings, lang),
                  multiline=True, description=t(lang, "help_system_prompt")),
        Slider(id="temperature", label=t(lang, "label_temperature"),
               initial=settings.temperature if chosen.temperature is None else chosen.temperature,
               min=0, max=2, step=0.1, description=t(lang, "help_temperature")),
        Slider(id="max_tokens", label=t(lang, "label_max_tokens"),
               initial=chosen.max_tokens or settings.max_tokens,
               min=16, max=8192, step=16, description=t(lang, "help_max_tokens")),
        Select(id="target_language", label=t(lang, "label_target"), items=languages(lang),
               initial_value=target, description=t(lang, "help_target")),
        Select(id="source_language", label=t(lang, "label_source"),
               items={auto: auto, **languages(lang)},
               initial_value=chosen.source_language or auto, description=t(lang, "help_source")),
        Switch(id="bilingual", label=t(lang, "label_bilingual"), initial=bool(chosen.bilingual),
               description=t(lang, "help_bilingual")),
        Switch(id="start_at_once", label=t(lang, "label_start_at_once"),
               initial=bool(chosen.start_at_once), description=t(lang, "help_start_at_once")),
    ]


def chosen_target(values: dict[str, Any], lang: str) -> str | None:
    """The panel's target when it is not the page's default. The panel always sends one, so a
    default left as it was is no choice: a later table already in that language still goes into
    the other (translation/written_in.py), also after the user changed only the temperature."""
    target = values.get("target_language") or None
    return None if target == default_target(lang) else target


def chosen_of(values: dict[str, Any], settings: Settings, lang: str) -> Chosen:
    """The panel's values as choices to keep: a system prompt equal to the page's default is
    not one, nor is the default target or the automatic source language."""
    prompt = str(values.get("system_prompt") or "")
    source = values.get("source_language")
    changed = prompt.strip() and prompt != system_prompt(settings, lang)
    return Chosen(system_prompt=prompt if changed else None,
                  temperature=float(values["temperature"]), max_tokens=int(values["max_tokens"]),
                  target_language=chosen_target(values, lang),
                  source_language=source if source in LANGUAGES else None,
                  bilingual=bool(values.get("bilingual")) or None,
                  start_at_once=bool(values.get("start_at_once")) or None)
