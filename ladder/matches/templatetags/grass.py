"""Template filters of the site: amounts of money written one way on every page."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def money(amount: int | None) -> str:
    """`$50,000`, `-$50,000`, or an en dash for none: the way the replay viewer writes money
    (ladder/static/ladder/replay.js `money`), so a total reads the same in every table."""
    if amount is None:
        return "\u2013"
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(int(amount)):,}"


@register.filter
def first_line(text: str) -> str:
    """The first line of `text`: the summary of a folded message (`<details>`), whose whole
    text is shown when it is opened."""
    return text.strip().split("\n", 1)[0]
