"""``relore why``, in its rooms: ``lines`` (the line's text: code or not, which words),
``history`` (git walks in the clone), ``marts`` (pull requests and review comments),
``answer`` (the request, and the page built from the three).
"""
