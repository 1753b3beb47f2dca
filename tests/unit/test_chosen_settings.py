"""The ⚙ choices kept per user (chainlit_app/chosen_settings.py): what is read back is what was
chosen, a damaged or tampered file is no choice at all, and nobody's choices are kept for nobody."""

from __future__ import annotations

import json
from pathlib import Path

from glm1m.chainlit_app.chosen_settings import Chosen, chosen_path, load, save
from glm1m.settings import Settings


def settings_in(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path)


def test_a_users_choices_come_back_and_another_users_do_not(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    chosen = Chosen(system_prompt="Answer tersely.", temperature=0.0, max_tokens=512,
                    target_language="日本語", source_language="Deutsch", bilingual=True,
                    start_at_once=True)
    save(settings, "local", chosen)
    assert load(settings, "local") == chosen
    assert load(settings, "alice") == Chosen()


def test_with_nobody_logged_in_nothing_is_written(tmp_path: Path) -> None:
    save(settings_in(tmp_path), None, Chosen(target_language="English"))
    assert load(settings_in(tmp_path), None) == Chosen()
    assert not (tmp_path / "chosen_settings").exists()


def test_values_out_of_range_or_of_the_wrong_kind_are_not_choices(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    path = chosen_path(settings, "local")
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"temperature": 9, "max_tokens": "lots", "target_language": "Klingon",
                                "source_language": "English", "system_prompt": "  ",
                                "start_at_once": "yes"}), encoding="utf-8")
    assert load(settings, "local") == Chosen(source_language="English")
    path.write_text("{not json", encoding="utf-8")
    assert load(settings, "local") == Chosen()
    path.write_text("[1, 2]", encoding="utf-8")
    assert load(settings, "local") == Chosen()


def test_a_default_target_left_as_it_was_is_not_kept_as_a_choice(tmp_path: Path) -> None:
    """The panel sends every value on any change: changing only the temperature must not turn the
    page's default target into the user's choice, or a later Chinese table on an English page
    would go into Simplified Chinese again (translation/written_in.py would no longer be asked)."""
    from glm1m.chainlit_app.settings_panel import chosen_of, chosen_target

    values = {"system_prompt": "", "temperature": 0.3, "max_tokens": 512, "target_language": "简体中文",
              "source_language": "(detect)", "bilingual": False}
    assert chosen_target(values, "en") is None
    assert chosen_of(values, settings_in(tmp_path), "en") == Chosen(temperature=0.3, max_tokens=512)
    assert chosen_target({**values, "target_language": "日本語"}, "en") == "日本語"
    assert chosen_target(values, "zh") == "简体中文"  # a Chinese page's default is English
