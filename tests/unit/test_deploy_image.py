"""deploy/Dockerfile, checked without a Docker engine: hadolint, then its structure."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DBT_PROJECT = ["dbt_project.yml", "profiles.yml", "models", "macros", "data-tests", "snapshots"]


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in _instructions(DOCKERFILE.read_text()):
        if instruction[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def _global_args() -> dict[str, str]:
    """ARG defaults declared before the first FROM."""
    args = {}
    for kind, rest in _instructions(DOCKERFILE.read_text()):
        if kind == "ARG" and "=" in rest:
            name, _, value = rest.partition("=")
            args[name] = value
        if kind == "FROM":
            break
    return args


def test_hadolint_passes_the_dockerfile():
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), "--no-color", str(DOCKERFILE)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_is_multi_stage_on_a_pinned_python_base():
    stages = _stages()
    assert len(stages) >= 2
    froms = [stage[0][1] for stage in stages]
    base = _global_args()["PYTHON_IMAGE"]
    assert re.fullmatch(r"python:3\.11\.\d+-slim(-\w+)?(@sha256:[0-9a-f]{64})?", base), base
    assert all(f.split()[0] == "${PYTHON_IMAGE}" for f in froms), froms
    assert "--from=builder" in " ".join(rest for kind, rest in stages[-1] if kind == "COPY")


def test_final_stage_runs_as_a_numeric_non_root_user():
    users = [rest for kind, rest in _stages()[-1] if kind == "USER"]
    assert users, "the final stage sets no USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    assert user.isdigit(), "numeric, so Kubernetes runAsNonRoot can verify it"


def test_final_stage_installs_no_compilers():
    final = " ".join(rest for _, rest in _stages()[-1])
    for tool in (
        "gcc",
        "build-essential",
        "g++",
        "clang",
        "make ",
        "pip install",
    ):
        assert tool not in final, f"{tool!r} in the runtime stage"
    # the one system package the runtime needs: git, for the working clones
    installed = re.findall(r"apt-get install ((?:-\S+\s+)*)([\w.+\- ]+?)(?:&&|$)", final)
    packages = {name for _, names in installed for name in names.split()}
    assert packages <= {"git"}, f"runtime stage installs {packages - {'git'}}"


def test_final_stage_carries_the_dbt_project_and_works_from_it():
    final = _stages()[-1]
    copied = " ".join(rest for kind, rest in final if kind == "COPY")
    for item in DBT_PROJECT:
        assert item in copied, f"{item} not copied into the image"
        assert (ROOT / item).exists()
    workdir = [rest for kind, rest in final if kind == "WORKDIR"][-1]
    assert "deploy/local/loop.sh" in copied
    env = " ".join(rest for kind, rest in final if kind == "ENV")
    assert f"DBT_PROFILES_DIR={workdir}" in env
    assert "RELORE_HOME=/var/lib/relore" in env
    assert any(kind == "VOLUME" and "/var/lib/relore" in rest for kind, rest in final)
    assert any(kind == "HEALTHCHECK" and "/healthz" in rest for kind, rest in final)


def test_every_copied_path_exists_in_a_checkout():
    """A COPY of a path a fresh clone lacks (an empty, untracked folder) fails the build."""
    for stage in _stages():
        for kind, rest in stage:
            if kind != "COPY" or "--from=" in rest:
                continue
            sources = [w for w in rest.split() if not w.startswith("--")][:-1]
            for source in sources:
                path = ROOT / source
                assert path.exists(), f"COPY {source}: not in the repository"
                if path.is_dir():
                    assert any(path.iterdir()), f"COPY {source}: empty (git keeps no empty folder)"


def test_builder_installs_the_extras_whose_console_scripts_the_image_runs():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    scripts = pyproject["project"]["scripts"]
    assert {"relore", "relored"} <= set(scripts)
    builder = " ".join(rest for kind, rest in _stages()[0] if kind == "RUN")
    extras = re.search(r"\.\[([a-z,]+)\]", builder)
    assert extras and {"extract", "serve", "dbt"} <= set(extras.group(1).split(","))
    for script in ("relored", "relore", "dbt"):
        assert f"/opt/venv/bin/{script}" in builder, f"the build does not smoke-test {script}"
    for package_dir in pyproject["tool"]["setuptools"]["package-dir"].values():
        assert f"COPY {package_dir}/" in DOCKERFILE.read_text()


def test_default_command_serves_on_all_interfaces():
    cmd = [rest for kind, rest in _stages()[-1] if kind == "CMD"][-1]
    argv = json.loads(cmd)  # exec form: signals reach relored, not a shell
    assert argv[:2] == ["relored", "serve"] and "0.0.0.0" in argv
