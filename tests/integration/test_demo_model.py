"""The demo model builder writes GLM-4's layout. Needs the server venv (it has tokenizers), so it is an
integration test: `make test-unit` runs on a fresh clone with only the app venv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from glm1m.server.launch import vllm_python
from glm1m.settings import Settings
from tests.conftest import ROOT

BUILDER = ROOT / "data" / "make_demo_model.py"


@pytest.fixture(scope="module")
def full_size(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("full-size")
    subprocess.run([vllm_python(Settings()), str(BUILDER), str(out), "--full-size"], check=True,
                   capture_output=True)
    return out


def test_full_size_has_glm4_9b_chat_1m_shapes(full_size: Path) -> None:
    config = json.loads((full_size / "config.json").read_text())
    assert config["architectures"] == ["GlmForCausalLM"]
    expected = dict(vocab_size=151552, hidden_size=4096, intermediate_size=13696,
                    num_hidden_layers=40, num_attention_heads=32, num_key_value_heads=4,
                    head_dim=128, max_position_embeddings=1048576, attention_bias=True,
                    tie_word_embeddings=False)
    assert {k: config[k] for k in expected} == expected
    rope = config.get("rope_parameters") or config
    assert rope["rope_theta"] == 1e8 and rope["partial_rotary_factor"] == 0.5
    assert not list(full_size.glob("*.safetensors"))  # config only: weights come from dummy load


def test_full_size_special_tokens_sit_at_their_real_ids(full_size: Path) -> None:
    tokenizer = json.loads((full_size / "tokenizer.json").read_text())
    ids = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    assert ids["<|endoftext|>"] == 151329 and ids["[gMASK]"] == 151331 and ids["<sop>"] == 151333
    assert (ids["<|system|>"], ids["<|user|>"], ids["<|assistant|>"], ids["<|observation|>"]) == (
        151335, 151336, 151337, 151338)
    assert max(ids.values()) == 151551  # every id the model can emit decodes
    generation = json.loads((full_size / "generation_config.json").read_text())
    assert generation["eos_token_id"] == [151329, 151336, 151338]


def test_chat_template_is_glm4s(full_size: Path) -> None:
    template = json.loads((full_size / "tokenizer_config.json").read_text())["chat_template"]
    assert template.startswith("[gMASK]<sop>")
    assert "<|{{ message['role'] }}|>\\n" in json.dumps(template).replace("\\\\", "\\")
    assert template.endswith("{% if add_generation_prompt %}<|assistant|>{% endif %}")
