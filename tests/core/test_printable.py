"""Control characters from outside are escaped wherever text is printed or logged."""

from __future__ import annotations

from recall_gui.core.base.control_chars import printable


def test_controls_bidi_overrides_and_surrogates_are_escaped_and_the_rest_kept() -> None:
    assert (
        printable("notes\x1b[31m red\x07\r\nnext\tcol\x7f\x9b")
        == "notes\\x1b[31m red\\x07\\r\\nnext\\tcol\\u007f\\u009b"
    )
    assert printable("abc\u202eevil\u2066") == "abc\\u202eevil\\u2066"
    assert printable("lone \ud800") == "lone \\ud800"
    kept = "Café 東京 👩‍💻 naïve – “quoted”"  # a zero-width joiner inside the emoji is kept
    assert printable(kept) == kept


def test_json_passed_through_printable_lines_stays_json_with_the_same_values() -> None:
    import json

    from recall_gui.core.base.control_chars import printable_lines

    value = {"id": "a\x1b[2J\r\n\x00\x7f\x9b\u202e\ud800 Café", "list": ["\u2066x", 1.5]}
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, indent=2)):
        shown = printable_lines(text)
        assert json.loads(shown) == value
        assert shown.count("\n") == text.count("\n")  # the lines JSON was given, and no other
        assert not any(c in shown for c in "\x1b\r\x00\x7f\x9b\u202e\u2066\ud800")
        assert "Café" in shown


def test_printable_lines_keeps_the_line_breaks_given_and_escapes_a_lone_carriage_return() -> None:
    from recall_gui.core.base.control_chars import printable_lines

    csv_text = 'id,content\r\na,"two\nlines"\r\nb,over\rwritten\x1b]0;title\x07\r\n'
    assert printable_lines(csv_text) == (
        'id,content\r\na,"two\nlines"\r\nb,over\\rwritten\\x1b]0;title\\x07\r\n'
    )
