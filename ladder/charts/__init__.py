"""Charts of the ladder's pages, drawn on the server as inline SVG (nothing from a CDN, no script).

`svg.py` renders plain data (standard library only, no Django); `selectors.py` reads that data
from the database; `pages.py` puts the two together for the views, marked safe for templates.
"""
