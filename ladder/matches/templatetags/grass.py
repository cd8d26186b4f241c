"""Template filters of the site: amounts of money written one way on every page, bot names
that wrap between owner and name."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@register.filter
def money(amount: int | None) -> str:
    """`$50,000`, `-$50,000`, or an en dash for none: the way the replay viewer writes money
    (ladder/static/ladder/dom.js `money`), so a total reads the same in every table."""
    if amount is None:
        return "\u2013"
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(int(amount)):,}"


@register.filter
def first_line(text: str) -> str:
    """The first line of `text`: the summary of a folded message (`<details>`), whose whole
    text is shown when it is opened."""
    return text.strip().split("\n", 1)[0]


@register.filter
def owner_name(display_name: str) -> SafeString:
    """`owner/bot` with a line-break opportunity after the slash (`<wbr>`): in a narrow column
    a name wraps between its owner and its name ("examples/" and "strong") before any word is
    broken. Neither a username nor a bot name holds a slash, so the last one is the seam."""
    owner, slash, bot = str(display_name).rpartition("/")
    if not slash:
        return format_html("{}", display_name)
    return format_html("{}/<wbr>{}", owner, bot)
