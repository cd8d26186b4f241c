"""Bots and their uploaded versions: who owns which bot, and which version plays."""
