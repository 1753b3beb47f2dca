"""The ⚙ panel's system prompt: in the page's language unless the operator set one."""

from __future__ import annotations

from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.chainlit_app.settings_panel import system_prompt, widgets
from glm1m.settings import Settings


def test_the_default_system_prompt_follows_the_page_language() -> None:
    settings = Settings()
    assert system_prompt(settings, EN) == Settings.model_fields["system_prompt"].default
    chinese = system_prompt(settings, ZH)
    assert "用户" in chinese and not any("a" <= c.lower() <= "z" for c in chinese)
    panel = {w.id: w for w in widgets(ZH, settings, "English")}
    assert panel["system_prompt"].initial == chinese


def test_an_operator_system_prompt_is_kept_in_both_languages(monkeypatch) -> None:
    monkeypatch.setenv("GLM1M_SYSTEM_PROMPT", "Answer as a lawyer would.")
    settings = Settings()
    assert system_prompt(settings, ZH) == system_prompt(settings, EN) == "Answer as a lawyer would."
