"""The Grass bot ladder.

Only the rating maths lives here so far (:mod:`ladder.ratings`); it is plain Python with no Django
imports, so the future Django site can call it from views, tasks and management commands alike.
"""
