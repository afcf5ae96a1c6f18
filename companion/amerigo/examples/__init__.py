"""Example games as event files (one JSON event per line), shipped as package data.

``game-4p.jsonl`` and ``game-2p.jsonl`` are complete games; replay them with
``cubetower replay``. They were written by ``tests/rules/make_example_games.py``.
"""
