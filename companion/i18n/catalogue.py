"""Loading the translations: ``de.po`` read and compiled in memory with Babel at start.

Why not a committed ``.mo``: a binary file next to its source goes stale the moment someone edits
the ``.po`` and forgets to compile; compiling ~400 messages takes a few milliseconds, so the app
does it itself and ``pip install -e .`` (or a plain checkout) always runs the catalogue it ships.
"""

from __future__ import annotations

import gettext
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from companion.text import Msg

HERE = Path(__file__).resolve().parent
# Each language as it names itself (what the switch on the page shows).
LANGUAGES = {"en": "English", "de": "Deutsch"}
DEFAULT_LANGUAGE = "en"


def po_path(lang: str, folder: Path = HERE) -> Path:
    return folder / f"{lang}.po"


def read_catalog(lang: str, folder: Path = HERE) -> Catalog:
    with po_path(lang, folder).open("rb") as f:
        return read_po(f, locale=lang)


@dataclass(frozen=True)
class Catalogue:
    """One language: ``gettext`` for the server's texts, ``js`` for the page's own strings."""

    lang: str
    translations: gettext.NullTranslations = field(default_factory=gettext.NullTranslations)
    js: dict[str, str | list[str]] = field(default_factory=dict)

    def gettext(self, text: str) -> str:
        return self.translations.gettext(text)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.translations.ngettext(singular, plural, n)

    def say(self, message: Msg | str) -> str:
        """A ``Msg`` in this language; a plain string (a name, a device's text) as it is."""
        return message.render(self.gettext) if isinstance(message, Msg) else str(message)


def compile_catalog(catalog: Catalog, lang: str) -> Catalogue:
    """The ``Catalogue`` of a parsed ``.po``: fuzzy or empty entries fall back to English."""
    buffer = BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    js: dict[str, str | list[str]] = {}
    for message in catalog:
        if not message.id or message.fuzzy or not _translated(message.string):
            continue
        if any(path.endswith(".js") for path, _ in message.locations):
            if isinstance(message.id, tuple | list):
                js[message.id[0]] = list(message.string)
            else:
                js[message.id] = message.string
    return Catalogue(lang, Translations(buffer), js)


def _translated(string: str | tuple | list) -> bool:
    return all(string) if isinstance(string, tuple | list) else bool(string)


def load_catalogues(folder: Path = HERE) -> dict[str, Catalogue]:
    """Every language of ``LANGUAGES``; English needs no file (its texts are the message ids)."""
    out = {DEFAULT_LANGUAGE: Catalogue(DEFAULT_LANGUAGE)}
    for lang in LANGUAGES:
        if lang != DEFAULT_LANGUAGE:
            out[lang] = compile_catalog(read_catalog(lang, folder), lang)
    return out
