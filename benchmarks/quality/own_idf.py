"""run.py with each repository scored by its own idf: how a search across repositories ranked
before ``serve/lexical/idf.py`` put them on one scale (the comparison in
benchmarks/results/across-repositories.md). Takes run.py's arguments.

    .venv/bin/python benchmarks/quality/own_idf.py --home /tmp/q --skip-build --no-embed \
        --variants --slice failure --slice paraphrase --slice change --slice why
"""

import runpy
import sys
from pathlib import Path

from relore.serve.lexical import idf

idf.shared = lambda searchers, lexemes, field=None: [None for _ in searchers]
sys.argv = ["run.py", *sys.argv[1:]]
runpy.run_path(str(Path(__file__).with_name("run.py")), run_name="__main__")
