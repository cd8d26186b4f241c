"""Who an account counts as at a rated table: its seating circle.

A rating is worth something only if no author can buy one, and in a game with trading the
cheapest way to buy one is to seat two of one's own bots together and let one feed the other
(docs/fairplay.md). So the matchmaker and every tournament seat at most one bot of a circle at a
table: an account's circle is itself, or the accounts the site links to it (signed up from one
network within GRASS_LINK_SIGNUP_DAYS, or linked by staff). The house's accounts (the example
bots' owner) are the exception: each of their bots is a circle of its own, since their code is
the site's own and known not to collude.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Seating(models.Model):
    """An account's circle and where it signed up from. An account without a row is a circle
    of its own (accounts made before circles existed, or by `createsuperuser`)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="seating",
    )
    circle = models.PositiveBigIntegerField(db_index=True)
    """The circle's id: the smallest user id among the accounts linked together (its own id
    while it is linked to none)."""
    house = models.BooleanField(default=False)
    """The site's own account (the examples): each of its bots sits as a circle of its own."""
    signup_network = models.GenericIPAddressField(null=True, blank=True)
    """The network the account was made from, as the linking rule compares it (an IPv4 address,
    or the first address of an IPv6 /48); null when it was not made by signing up."""
    signed_up = models.DateTimeField(null=True, blank=True)
    linked_reason = models.CharField(max_length=200, blank=True)
    """Why the account was last linked (or unlinked): the rule or the staff member."""

    class Meta:
        indexes = [
            models.Index(fields=["signup_network", "signed_up"], name="seating_signup_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user} (circle {self.circle})"
