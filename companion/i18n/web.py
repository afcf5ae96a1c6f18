"""Each phone in its own language: the choice, the templates, the JSON answers and the stream.

A phone's language is the one it chose with the switch on the page (the ``lang`` cookie, kept a
year), else the best match of its browser's ``Accept-Language``, else English. The rules engine and
the table hand out ``Msg`` objects and snapshots whose translatable parts are ``<key>_msg``
fields; they are said in the phone's language only here, at the edge: ``Msg`` values in a JSON
answer are rendered by the app's JSON provider, and ``localize`` says each ``text_msg`` of a
snapshot as its ``text`` (the ``_msg`` field stays: an API client may want the message id).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from flask import Flask, Response, abort, g, has_request_context, request
from flask.json.provider import DefaultJSONProvider

from companion.text import Msg

from .catalogue import DEFAULT_LANGUAGE, LANGUAGES, Catalogue

COOKIE = "lang"
SUFFIX = "_msg"


def choose_language(cookie: str | None, accept_language, languages=LANGUAGES) -> str:
    """The switch's choice if it is one we speak, else the browser's best match, else English."""
    if cookie in languages:
        return cookie
    return accept_language.best_match(list(languages), default=DEFAULT_LANGUAGE)


def localize(data: Any, catalogue: Catalogue) -> Any:
    """A copy of ``data`` with every ``<key>_msg`` said as ``<key>`` and every ``Msg`` as text."""
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            if key.endswith(SUFFIX):
                out[key] = value
                base = key[: -len(SUFFIX)]
                if base not in data:
                    out[base] = _said(value, catalogue)
            elif key + SUFFIX in data:
                out[key] = _said(data[key + SUFFIX], catalogue)
            else:
                out[key] = localize(value, catalogue)
        return out
    if isinstance(data, list | tuple):
        return [localize(v, catalogue) for v in data]
    if isinstance(data, Msg):
        return catalogue.say(data)
    return data


def _said(value: Any, catalogue: Catalogue) -> Any:
    """A ``_msg`` field's value said: one message (its JSON form) or a list of them."""
    if isinstance(value, list):
        return [_said(v, catalogue) for v in value]
    if isinstance(value, dict) and "msg" in value:
        return catalogue.say(Msg.from_json(value))
    return value


class Localizer:
    """The catalogues, the current phone's one, and a small cache for the live stream.

    Every update is sent to every phone; with the cache it is said once per language, not once
    per phone (the hub hands the same dict to every subscriber).
    """

    def __init__(self, catalogues: dict[str, Catalogue], cache_size: int = 8):
        self.catalogues = catalogues
        self._cache: OrderedDict[tuple[int, str], tuple[Any, str]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def current(self) -> Catalogue:
        """The catalogue of the phone that sent this request (English outside a request)."""
        lang = g.get("lang") if has_request_context() else None
        return self.catalogues[lang or DEFAULT_LANGUAGE]

    def say(self, message: Msg | str) -> str:
        return self.current().say(message)

    def json_for(self, data: dict, catalogue: Catalogue) -> str:
        """``data`` localized and as compact JSON, cached by identity for the stream."""
        key = (id(data), catalogue.lang)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] is data:
                return hit[1]
        text = json.dumps(localize(data, catalogue), separators=(",", ":"))
        with self._lock:
            self._cache[key] = (data, text)  # keeps data alive, so its id is not reused
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return text


class LocalizingJSONProvider(DefaultJSONProvider):
    """``jsonify`` in the phone's language: ``Msg`` values and ``_msg`` fields are said in it."""

    localizer: Localizer | None = None

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if self.localizer is not None:
            obj = localize(obj, self.localizer.current())
        return super().dumps(obj, **kwargs)


def install(app: Flask, localizer: Localizer) -> None:
    """Language choice per request, ``_()`` in templates, localized JSON, the JS catalogue."""
    provider = LocalizingJSONProvider(app)
    provider.localizer = localizer
    provider.sort_keys = app.json.sort_keys
    app.json = provider

    @app.before_request
    def pick_language() -> None:
        g.lang = choose_language(request.cookies.get(COOKIE), request.accept_languages,
                                 localizer.catalogues)

    @app.after_request
    def say_which(response: Response) -> Response:
        response.headers["Content-Language"] = g.get("lang", DEFAULT_LANGUAGE)
        response.vary.update(("Accept-Language", "Cookie"))
        return response

    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.install_gettext_callables(
        lambda text: localizer.current().gettext(text),
        lambda singular, plural, n: localizer.current().ngettext(singular, plural, n),
        newstyle=True,
    )

    @app.context_processor
    def language_context() -> dict:
        return {"lang": localizer.current().lang, "languages": LANGUAGES}

    @app.get("/i18n/<lang>.js")
    def js_catalogue(lang: str):
        """The page's own strings in ``lang``: a script (not inline, so a strict CSP allows it)."""
        catalogue = localizer.catalogues.get(lang)
        if catalogue is None:
            abort(404)
        body = json.dumps({"lang": lang, "messages": catalogue.js}, ensure_ascii=False,
                          sort_keys=True)
        response = Response(f"window.CT_I18N = {body};\n", mimetype="text/javascript")
        response.cache_control.max_age = 300
        return response
