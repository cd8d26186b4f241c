"""The Grass bot ladder: a Django site (settings, urls, celery here; apps by domain below).

Apps: :mod:`ladder.bots` (bots and uploaded versions), :mod:`ladder.matches` (matches, their
seats, the Celery task that plays them), :mod:`ladder.ratings` (stored ratings and the
leaderboard, beside the pure rating maths of :mod:`ladder.ratings.elo`, which imports no Django).
Writes are in each app's ``services.py``, reads in ``selectors.py``.
"""
