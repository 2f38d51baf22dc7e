"""Every verb of ``relore``, declared once: its name, help, parameters (names, kinds,
limits, help, how the command line spells them) and route. From these declarations alone
come ``relore``'s argparse parser (``client/definition.py``), its MCP tools' input schemas
(``client/mcp_server.py``), the daemon's request parsing (``serve/inputs.parse``) and the
OpenAPI document's parameters (``serve/openapi.py``). Adding a parameter is one ``Param``
here (``tests/unit/test_verb_declaration.py``). Stdlib only; ``shape.py`` says what a
declaration is made of.
"""

from __future__ import annotations

from relore.contract.verbs.clone_verbs import COPIES, GREP, SYMBOL, WHY
from relore.contract.verbs.index_verbs import INFLIGHT, PRECEDENT, RULES, SEARCH, STATUS, THREAD
from relore.contract.verbs.shape import KINDS, Param, Verb, json_schema, said
from relore.contract.verbs.tree_verbs import DEFS, MAP, MCP, REFS

__all__ = ["KINDS", "VERBS", "Param", "Verb", "json_schema", "said"]

# Every verb in the order ``relore --help`` lists them. Each surface reads this at the time
# it builds (a test swaps a declaration in and sees it on all four).
VERBS = {
    verb.name: verb
    for verb in (
        SEARCH, PRECEDENT, STATUS, RULES, THREAD, INFLIGHT, WHY, SYMBOL, GREP, COPIES,
        MAP, DEFS, REFS, MCP,
    )
}  # fmt: skip
