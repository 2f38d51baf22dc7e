"""The code lens: ``map``, ``defs``, ``refs`` offline over the caller's own tree.

Importing this package loads nothing but these numbers; tree-sitter is imported by a
provider on first use, so the daemon verbs never load it.
"""

# Rows per page: the contract's (``contract/limits.py``).
from relore.contract.limits import DEFS_CAP, MAP_CAP, REFS_CAP

__all__ = ["DEFS_CAP", "MAP_CAP", "REFS_CAP"]
