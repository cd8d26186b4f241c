"""The worker's side of live tables: while a match is played, what its watchers and its people
are shown (`views`), sent over the site's channel layer (Django Channels on Redis) by a thread
of the worker's own (`table.LiveTable`), and the people's answers heard back (`table`'s remote
agents). Not an app: no models, no pages; `ladder.matches.services.match_run` opens a live
table for every match it plays, and the `ladder.live` app serves the browsers' side. It
imports no app of the ladder (.importlinter)."""
