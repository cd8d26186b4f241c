"""Matches: a game between 2-6 bot versions, queued, played by a worker, and recorded."""
