"""Running bots: loading their files, the OS sandbox, and playing matches."""
