"""The pages' text helpers: user words in messages show invisible characters as code points (as the
axes do), counts agree with their nouns, and a sentence never gets a second full stop."""

from pages.shared.text import listing, plural, sentence_end


def test_listing_shows_invisible_characters_by_code_point():
    text = listing(["evil\u202eword", "zero\u200bwidth", "line\nbreak"])
    assert "\u202e" not in text and "\u200b" not in text
    shown = text.replace("\\", "")  # what Markdown shows: the escapes drop out
    assert "evil⟨U+202E⟩word" in shown and "zero⟨U+200B⟩width" in shown and "line⏎break" in shown


def test_plural_and_sentence_end():
    assert plural(1, "word") == "1 word" and plural(2, "word") == "2 words" and plural(0, "token") == "0 tokens"
    assert plural(1, "query", "queries") == "1 query" and plural(3, "query", "queries") == "3 queries"
    assert sentence_end("first.") == "" and sentence_end("first") == "." and sentence_end("why?") == ""
