"""Writing a small file so that a pulled plug leaves the old one or the new one, never half.

Why one helper: the table code, the colours learned from drops and the empty tray's picture are
all kept in files that a power cut may interrupt, and two writers (the watch loop keeping an
empty tray while a player presses "calibrate") may write the same file at the same moment. Each
call writes its own uniquely named partial file beside the target, flushes it to the disk, swaps
it in with one rename and flushes the folder, so the rename itself survives the power cut. The
last swap wins; no partial file is left behind when writing fails.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_durably(path: str | Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` by ``data`` in one step (``mode``: the new file's permissions).

    Raises OSError (with the partial file removed) when the folder cannot be made or written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry for the renamed file (POSIX; a no-op where folders cannot be
    opened, as on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
