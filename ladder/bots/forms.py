"""HTML forms of bots: a new bot (its name), a new version (its file)."""

from __future__ import annotations

from django import forms

from bots.runner.botfiles import upload_limit


class BotCreateForm(forms.Form):
    name = forms.CharField(max_length=64, label="Bot name")


class BotUploadForm(forms.Form):
    file = forms.FileField(
        label="Bot file",
        # What bots.runner.botfiles.source_from_upload accepts, said as it does it.
        help_text="A source file under any name ending in .py, .js, .cpp, .rs or .java (it runs "
        "as its language's entry file: my_bot.py as bot.py; a Java file's class must be Bot), a "
        "static Linux executable under any name, or a .zip archive with its entry file (bot.py, "
        "bot.js, bot.cpp, Cargo.toml or main.rs, Bot.java, bot) at its top. C++, Rust and Java "
        "are compiled when they are checked.",
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
