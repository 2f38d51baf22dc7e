"""The code lens: ``map``, ``defs``, ``refs`` offline over the caller's own tree.

Importing this package loads nothing but these numbers; tree-sitter is imported by a
provider on first use, so the daemon verbs never load it.
"""

# Rows per page: the contract. A caller may ask for fewer (``--limit``) and page on
# (``--offset``), never for more.
DEFS_CAP = 50
REFS_CAP = 50
MAP_CAP = 40
