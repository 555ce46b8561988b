"""Control characters from outside are escaped wherever text is printed or logged."""

from __future__ import annotations

from recall_gui.core.base.control_chars import printable


def test_controls_bidi_overrides_and_surrogates_are_escaped_and_the_rest_kept() -> None:
    assert (
        printable("notes\x1b[31m red\x07\r\nnext\tcol\x7f\x9b")
        == "notes\\x1b[31m red\\x07\\r\\nnext\\tcol\\x7f\\x9b"
    )
    assert printable("abc\u202eevil\u2066") == "abc\\u202eevil\\u2066"
    assert printable("lone \ud800") == "lone \\ud800"
    kept = "Café 東京 👩‍💻 naïve – “quoted”"  # a zero-width joiner inside the emoji is kept
    assert printable(kept) == kept
