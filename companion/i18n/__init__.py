"""The phone app in more than one language: catalogues, each phone's choice, words on the wire.

English is the source language (the message ids are the English texts); German comes from
``de.po``, compiled in memory when the app starts (``catalogue``), so a fresh install never runs on
a stale or missing ``.mo`` file. ``web`` picks each phone's language and says messages in it;
``extract`` finds every translatable text in the code and keeps ``de.po`` up to date.
"""

from .catalogue import DEFAULT_LANGUAGE, LANGUAGES, Catalogue, load_catalogues

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "Catalogue", "load_catalogues"]
