"""The challenge page's form: one of your versions, opponents (the examples and your own
versions ticked, any other bot written as `owner/bot`), the ruleset, seating and length."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.rules import RULESETS
from ladder.challenges.models import Challenge
from ladder.challenges.selectors import Choice
from ladder.challenges.services import MAX_OPPONENTS


class ChallengeForm(forms.Form):
    version = forms.ChoiceField(label="Your bot")
    picks = forms.MultipleChoiceField(
        label="Opponents",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The example bots, and your own valid versions.",
    )
    others = forms.CharField(
        label="Other opponents",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="Any bot on the ladder, one a line, as owner/bot (it plays its ladder "
        f"version). 1 to {MAX_OPPONENTS} opponents in all.",
    )
    ruleset = forms.ChoiceField(
        choices=[(name, name) for name in sorted(RULESETS)], initial="modern"
    )
    seating = forms.ChoiceField(
        choices=[
            (Challenge.Seating.RANDOM, "at random"),
            (Challenge.Seating.ORDERED, "yours in seat 0, then the opponents as listed"),
        ],
        widget=forms.RadioSelect,
        initial=Challenge.Seating.RANDOM,
    )
    max_hands = forms.IntegerField(
        label="Hands",
        required=False,
        min_value=1,
        max_value=30,
        help_text="At most this many hands, for a quick game (empty: the ruleset's 30).",
    )

    def __init__(self, *args: Any, own: list[Choice], examples: list[Choice], **kwargs: Any):
        super().__init__(*args, **kwargs)
        # "bot id:version number", what a challenge is asked with.
        self.versions = [f"{c.version.bot_id}:{c.version.number}" for c in own]
        version, picks = self.fields["version"], self.fields["picks"]
        assert isinstance(version, forms.ChoiceField) and isinstance(picks, forms.ChoiceField)
        version.choices = [(value, c.spec) for value, c in zip(self.versions, own, strict=True)]
        picks.choices = [(c.spec, c.spec) for c in examples + own]

    def opponent_texts(self) -> list[str]:
        """Every opponent as written: the ticked ones, then the typed ones."""
        typed = [line.strip() for line in self.cleaned_data.get("others", "").splitlines()]
        return list(self.cleaned_data.get("picks", [])) + [line for line in typed if line]
