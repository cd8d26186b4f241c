"""The Play page's form: a ruleset, the bots to play against, the person's seat, the hands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings

from engine.rules import RULESETS
from ladder.live.selectors import Opponent

OPPONENT_FIELDS = 5


class PlayForm(forms.Form):
    ruleset = forms.ChoiceField(choices=[(name, name) for name in sorted(RULESETS)])
    hands = forms.TypedChoiceField(coerce=int, help_text="The game ends after this many hands.")
    seat = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        choices=[("", "at random"), *((str(i), f"seat {i}") for i in range(6))],
        label="Your seat",
        help_text="Seats play in turn from seat 0; the dealer of the first hand is drawn.",
    )

    def __init__(self, *args: Any, opponents: Sequence[Opponent], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        most = max(settings.GRASS_PLAY_MAX_HANDS, 1)
        hands = self.fields["hands"]
        assert isinstance(hands, forms.TypedChoiceField)
        hands.choices = [(n, str(n)) for n in range(1, most + 1)]
        hands.initial = min(3, most)
        self.fields["ruleset"].initial = "modern"
        choices = [("", "nobody"), *((str(o.bot_id), o.display_name) for o in opponents)]
        for index in range(1, OPPONENT_FIELDS + 1):
            self.fields[f"opponent_{index}"] = forms.TypedChoiceField(
                coerce=int,
                empty_value=None,
                required=index == 1,
                choices=choices if index > 1 else choices[1:],
                label=f"Opponent {index}",
            )

    def clean(self) -> dict[str, Any]:
        """The seat must be one of the game's: a game of n players has seats 0 to n - 1. The
        page's script offers only those (ladder/static/ladder/play.js); this says so when a
        browser without it, or a script, asks for another."""
        cleaned = super().clean() or {}
        seat = cleaned.get("seat")
        players = len(self.opponents()) + 1
        if seat is not None and seat >= players:
            self.add_error(
                "seat",
                f"With {players - 1} opponent{'s' if players > 2 else ''} the game has "
                f"{players} seats, 0 to {players - 1}: choose one of those, or at random.",
            )
        return cleaned

    def opponents(self) -> list[int]:
        return [
            bot_id
            for index in range(1, OPPONENT_FIELDS + 1)
            if (bot_id := self.cleaned_data.get(f"opponent_{index}")) is not None
        ]
