"""The window's parts: each panel owns its widgets and says what happened through signals."""
