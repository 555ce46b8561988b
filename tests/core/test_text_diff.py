"""The description diff: what changed, in unified order, down to the characters, quiet stretches folded."""

from __future__ import annotations

import random

from recall_gui.core.inspect.text_diff import DiffLine, changed_ranges, diff_lines, split_lines, unified_text


def rebuild(lines: tuple[DiffLine, ...], side: str) -> list[str]:
    """One side of the diff back as lines; folded stretches stand in as placeholders."""
    out: list[str] = []
    for line in lines:
        if line.kind == "folded":
            out.extend(["<folded>"] * line.folded)
        elif line.kind in ("same", side):
            out.append(line.text)
    return out


def marked_and_unmarked(line: DiffLine) -> tuple[str, str]:
    inside = [any(start <= i < end for start, end in line.changed) for i in range(len(line.text))]
    marked = "".join(ch for ch, flag in zip(line.text, inside, strict=True) if flag)
    unmarked = "".join(ch for ch, flag in zip(line.text, inside, strict=True) if not flag)
    return marked, unmarked


def test_equal_texts_have_no_diff() -> None:
    assert diff_lines("same\ntext\n", "same\ntext\n") == ()


def test_an_added_line_is_added_and_the_rest_is_context() -> None:
    lines = diff_lines("a\nb\n", "a\nb\nc\n")
    assert [(line.kind, line.text) for line in lines] == [
        ("same", "a"),
        ("same", "b"),
        ("added", "c"),
        ("same", ""),
    ]
    assert [line.new_number for line in lines] == [1, 2, 3, 4]
    assert [line.old_number for line in lines] == [1, 2, None, 3]


def test_a_trailing_newline_is_a_difference() -> None:
    lines = diff_lines("text\n", "text")
    assert [(line.kind, line.text) for line in lines] == [("same", "text"), ("removed", "")]


def test_a_changed_word_is_marked_inside_its_line() -> None:
    removed, added = diff_lines(
        "Search the notes database for passwords.", "Search the archive database for passwords."
    )
    assert (removed.kind, added.kind) == ("removed", "added")
    assert marked_and_unmarked(removed) == ("notes", "Search the  database for passwords.")
    assert marked_and_unmarked(added) == ("archive", "Search the  database for passwords.")


def test_neighbouring_changed_words_are_one_mark() -> None:
    removed, added = diff_lines(
        "Team notes: accounts, passwords, cities", "Team notes: accounts, passwords and travel"
    )
    assert [removed.text[s:e] for s, e in removed.changed] == [", cities"]
    assert [added.text[s:e] for s, e in added.changed] == ["and travel"]


def test_rewritten_lines_are_not_marked_character_by_character() -> None:
    assert changed_ranges("The capital of France is Paris.", "zzzz 1234 qqqq") == ((), ())


def test_long_unchanged_stretches_fold_around_the_change() -> None:
    old = "\n".join(f"line {n}" for n in range(1, 41))
    new = old.replace("line 20", "line twenty")
    lines = diff_lines(old, new, context=2)
    kinds = [line.kind for line in lines]
    assert kinds == ["folded", "same", "same", "removed", "added", "same", "same", "folded"]
    assert (lines[0].folded, lines[-1].folded) == (17, 18)
    assert unified_text(lines).splitlines() == [
        "@@ 17 unchanged lines @@",
        "  line 18",
        "  line 19",
        "- line 20",
        "+ line twenty",
        "  line 21",
        "  line 22",
        "@@ 18 unchanged lines @@",
    ]


def test_two_changes_far_apart_keep_a_fold_between_them() -> None:
    old = "\n".join(f"l{n}" for n in range(30))
    new = old.replace("l2\n", "L2\n").replace("l27", "L27")
    lines = diff_lines(old, new, context=1)
    folds = [line.folded for line in lines if line.kind == "folded"]
    assert folds == [1, 22, 1]


def test_any_diff_rebuilds_both_texts() -> None:
    """Property: the diff's old side (plus folded lines) is the old text, its new side the new text."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "", "delta", "Name: notes", "  Embedding: x"]
    for _ in range(300):
        old_lines = [rng.choice(words) for _ in range(rng.randint(0, 12))]
        new_lines = list(old_lines)
        for _ in range(rng.randint(0, 4)):
            action = rng.choice(["insert", "delete", "change"])
            if action == "insert" or not new_lines:
                new_lines.insert(rng.randint(0, len(new_lines)), rng.choice(words))
            elif action == "delete":
                del new_lines[rng.randrange(len(new_lines))]
            else:
                new_lines[rng.randrange(len(new_lines))] += "!"
        old, new = "\n".join(old_lines), "\n".join(new_lines)
        lines = diff_lines(old, new, context=rng.randint(0, 3))
        if old == new:
            assert lines == ()
            continue
        a, b = split_lines(old), split_lines(new)
        folded_old = rebuild(lines, "removed")
        assert len(folded_old) == len(a)
        assert all(x in ("<folded>", y) for x, y in zip(folded_old, a, strict=True))
        # Folded lines are unchanged ones, so the new side has them too, at the same places.
        folded_new = rebuild(lines, "added")
        assert len(folded_new) == len(b)
        assert all(x in ("<folded>", y) for x, y in zip(folded_new, b, strict=True))
        for line in lines:
            for start, end in line.changed:
                assert 0 <= start < end <= len(line.text)
