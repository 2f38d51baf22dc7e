"""Answers read from the working clone ``relored clone`` keeps: ``why``, ``symbol``, ``grep``
and ``copies``. The conversation index never depends on a clone; these verbs do, and a
repository without one answers 503 with the command that makes it."""
