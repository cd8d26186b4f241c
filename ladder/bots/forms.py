"""HTML forms of bots: a new bot (its name), a new version (its file)."""

from __future__ import annotations

from django import forms

from bots.runner.botfiles import upload_limit


class BotCreateForm(forms.Form):
    name = forms.CharField(max_length=64, label="Bot name")


class BotUploadForm(forms.Form):
    file = forms.FileField(
        label="Bot file",
        help_text="A source file (.py, .js, .cpp, .rs, .java), a static executable named bot, "
        "or a .zip archive with its entry file (bot.py, bot.js, bot.cpp, Cargo.toml or main.rs, "
        "Bot.java, bot) at its top. C++, Rust and Java are compiled when they are checked.",
    )

    def clean_file(self) -> object:
        upload = self.cleaned_data["file"]
        # Checked before reading: a huge upload is refused without holding it in memory.
        limit = upload_limit(upload.name)
        if upload.size > limit:
            raise forms.ValidationError(
                f"{upload.name} is {upload.size} bytes; the limit is {limit}"
            )
        return upload
