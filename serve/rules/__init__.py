"""Rule serving: which of a project's human-authored rules an agent's change needs.

``text`` (the one tokenizer), ``bm25`` (ranking), ``choose`` (the seven steps, pure),
``sessions`` (what a session has already been sent; the served-events log), ``routes``
(``GET /api/v1/rules``).
"""
