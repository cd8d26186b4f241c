"""HTML forms of accounts: signing up."""

from __future__ import annotations

from django import forms


class SignupForm(forms.Form):
    username = forms.CharField(max_length=150, label="Username")
    password = forms.CharField(label="Password", widget=forms.PasswordInput, strip=False)
