"""`{% live_cards %}`: the card table the live tables' script names cards with (titles,
families, values from the engine), as a JSON script element."""

from __future__ import annotations

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString

from engine.replay_frames import cards_info

register = template.Library()


@register.simple_tag
def live_cards() -> SafeString:
    return json_script(cards_info(), "grass-cards")
