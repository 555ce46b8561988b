"""The window's dialogs: each asks or shows one thing, window-modal, and its owner acts on the answer."""
