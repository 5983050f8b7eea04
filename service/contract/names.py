"""Names and titles other players are shown: one normal form, and only characters a person
can see and every reader's system knows.

A name is kept in Unicode's composed form (NFC), so "Zoé" typed as one code point or as "e"
and a combining accent is one name. Refused, beside what the schemas' pattern refuses
(controls, bidirectional overrides, invisible spaces): tag characters (U+E0000-U+E007F,
invisible text inside text), private-use code points (each system draws its own glyph, or
none) and code points Unicode has not assigned (this release's Python names its version).
"""

from __future__ import annotations

import unicodedata

_TAGS = range(0xE0000, 0xE0080)
_REFUSED = {"Co": "a private-use character", "Cn": "an unassigned code point"}


def shown(text: str) -> str:
    """`text` in NFC, or ValueError naming the first character that may not be shown."""
    for position, char in enumerate(text):
        why = "a tag character" if ord(char) in _TAGS else _REFUSED.get(unicodedata.category(char))
        if why is not None:
            raise ValueError(f"character {position + 1} (U+{ord(char):04X}) is {why}")
    return unicodedata.normalize("NFC", text)
