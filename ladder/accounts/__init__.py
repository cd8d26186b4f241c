"""Accounts: signing up and API tokens (users are Django's own `auth.User`)."""
