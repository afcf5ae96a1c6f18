"""Every text a player can read, kept in step with the catalogues (run as a module).

Python: the first argument of ``Msg(...)`` and of the refusal types (``RulesError`` and kin,
``TableError``...), which must be string literals. Templates: ``_("...")``. The page's scripts:
``t("...")`` and ``tn("one", "many", n)``. The command rewrites ``de.po`` with every message found,
keeping the translations it had (an English text that changed comes back empty, to be
translated again) and dropping the ones no longer used; ``--check`` only reports what is missing.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import write_po

from .catalogue import DEFAULT_LANGUAGE, HERE, LANGUAGES, po_path, read_catalog

ROOT = HERE.parents[1]  # the folder holding the companion and firmware packages
SOURCES = ("companion", "firmware")

REFUSALS = (
    "Msg", "RulesError", "MalformedEvent", "UnknownPlayer", "WrongStage", "OutOfTurn",
    "NotOnOffer", "NotEnough", "LimitReached", "NothingToUndo", "TableError", "SeqConflict",
    "KeyReused", "BadInput", "NeedsConfirmation", "StaleReading",
    "within",  # RulesError.within(template, ...): a refusal placed in a larger message
)


def extract_python(fileobj, keywords, comment_tags, options) -> Iterator[tuple]:
    """Every ``Msg("...")``-like call, however deeply nested (Babel's own Python extractor skips
    a call inside another call's arguments, e.g. ``Msg("builds {tiles}", tiles=[Msg(...)])``)."""
    tree = ast.parse(fileobj.read())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        first = node.args[0]
        if name in keywords and isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield node.lineno, name, (first.value,), []


_JS_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_JS_CALL = re.compile(r"(?<![\w.$])(tn?)\(\s*" + _JS_STRING + r"(?:\s*,\s*" + _JS_STRING + ")?")


def extract_javascript(fileobj, keywords, comment_tags, options) -> Iterator[tuple]:
    """``t("...")`` and ``tn("one", "many", n)`` calls with double-quoted texts, nested or not."""
    text = fileobj.read().decode("utf-8")
    for match in _JS_CALL.finditer(text):
        name, first, second = match.groups()
        lineno = text.count("\n", 0, match.start()) + 1
        if name == "tn" and second is not None:
            yield lineno, name, (_js_unescape(first), _js_unescape(second)), []
        elif name == "t":
            yield lineno, name, (_js_unescape(first),), []


def _js_unescape(text: str) -> str:
    return re.sub(r'\\(["\\/])', r"\1", text)


# Per kind of source file: (file pattern, extraction method, the calls that mark a text).
METHODS = [
    ("**.py", extract_python, dict.fromkeys(REFUSALS)),
    ("**/templates/**.html", "jinja2.ext:babel_extract",
     {"_": None, "gettext": None, "ngettext": (1, 2)}),
    ("**/static/**.js", extract_javascript, {"t": None, "tn": (1, 2)}),
]


def extract(root: Path = ROOT) -> Catalog:
    """Every translatable message in the sources, with where it is used."""
    catalog = Catalog(locale=None, project="cubetower", fuzzy=False)
    for package in SOURCES:
        folder = root / package
        if not folder.is_dir():
            continue
        for pattern, method, keywords in METHODS:
            found = extract_from_dir(
                folder, [(pattern, method)], keywords=keywords,
                comment_tags=("TRANSLATORS:",), strip_comment_tags=True,
            )
            for filename, lineno, message, comments, context in found:
                if isinstance(message, tuple) and len(message) == 1:
                    message = message[0]
                if not message or (isinstance(message, tuple) and not all(message)):
                    continue
                location = (f"{package}/{filename}", lineno)
                catalog.add(message, None, [location], auto_comments=comments, context=context)
    return catalog


def missing(template: Catalog, translated: Catalog) -> list[str]:
    """Message ids of ``template`` without a finished (non-empty, not fuzzy) translation."""
    out = []
    for message in template:
        if not message.id:
            continue
        have = translated.get(message.id, context=message.context)
        string = have.string if have else None
        done = bool(string) and (all(string) if isinstance(string, tuple | list) else True)
        if not done or have.fuzzy:
            out.append(message.id if isinstance(message.id, str) else message.id[0])
    return out


def update(lang: str, template: Catalog, folder: Path = HERE) -> Catalog:
    """``lang``'s catalogue with exactly the messages of ``template``, translations kept."""
    catalog = read_catalog(lang, folder) if po_path(lang, folder).exists() else Catalog(
        locale=lang, project="cubetower")
    catalog.update(template, no_fuzzy_matching=True)
    catalog.obsolete.clear()
    with po_path(lang, folder).open("wb") as f:
        write_po(f, catalog, width=100, sort_output=False, ignore_obsolete=True)
    return catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.i18n.extract",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a message has no translation")
    args = parser.parse_args(argv)
    template = extract()
    status = 0
    for lang in LANGUAGES:
        if lang == DEFAULT_LANGUAGE:
            continue
        catalog = read_catalog(lang) if args.check else update(lang, template)
        gaps = missing(template, catalog)
        for msgid in gaps:
            print(f"{lang}: not translated: {msgid!r}")
        print(f"{lang}: {len(template) - len(gaps)} of {len(template)} messages translated")
        status = status or (1 if gaps else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
