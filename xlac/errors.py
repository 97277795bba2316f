"""Errors xlac raises for misuse, each naming the user's source line.

>>> try:
...     raise_with_location(TypeError, "bad input")
... except TypeError as e:
...     "bad input" in str(e)
True
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where the user's code called into xlac."""

    file: str
    line: int
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(__import__("numpy").__file__)) + os.sep   # NumPy's dispatch code
_SKIPPED_PREFIXES = (_PACKAGE_DIR, _NUMPY_DIR, os.path.dirname(os.__file__) + os.sep + "contextlib", "<frozen")
_USER_FILES_IN_PACKAGE = (_PACKAGE_DIR + "__main__.py",)     # the demo is user code


_AT = "\n  at "          # what joins a message and the user's line it names (see located)
_skipped_files: dict[str, bool] = {}      # file name -> whether user_frame skips its frames (a pure function of it)


def _is_skipped(filename: str) -> bool:
    skipped = _skipped_files.get(filename)
    if skipped is None:
        path = filename if filename.startswith("<") else os.path.abspath(filename)   # xlac imported as a/../xlac
        skipped = _skipped_files[filename] = path.startswith(_SKIPPED_PREFIXES) and path not in _USER_FILES_IN_PACKAGE
    return skipped


def user_frame(skip: int = 1):
    """The innermost frame outside the xlac package (and NumPy's dispatch code), or None."""
    frame = sys._getframe(skip)
    while frame is not None:
        if not _is_skipped(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def raised_at(error: BaseException) -> SourceLocation | None:
    """The user's line that raised ``error`` (the innermost frame of its traceback outside xlac), or None
    where its message names the line already (see :func:`located`).

    >>> try:
    ...     {}["key"]
    ... except KeyError as e:
    ...     raised_at(e).line
    2
    """
    if _AT in str(error):
        return None
    location, entry = None, error.__traceback__
    while entry is not None:
        code = entry.tb_frame.f_code
        if not _is_skipped(code.co_filename):
            location = SourceLocation(code.co_filename, entry.tb_lineno, code.co_name)
        entry = entry.tb_next
    return location


# (code, line, its SourceLocation) of the last call: the nodes of one line of user code, traced one after
# another, share one location object (the key is all a location is made of).
_last_location: tuple = (None, 0, None)


def frame_location(frame) -> SourceLocation | None:
    """The file, line and function a frame is at (None for no frame)."""
    global _last_location
    if frame is None:
        return None
    code, line = frame.f_code, frame.f_lineno
    last_code, last_line, location = _last_location
    if code is not last_code or line != last_line:
        location = SourceLocation(code.co_filename, line, code.co_name)
        _last_location = (code, line, location)
    return location


def user_location(skip: int = 1) -> SourceLocation | None:
    """The innermost frame outside the xlac package: the user's line that called into xlac."""
    return frame_location(user_frame(skip + 1))


def located(message: str, location: SourceLocation | None = None) -> str:
    """``message`` followed by the user's file:line."""
    location = location or user_location(2)
    if location is None:
        return message
    return f"{message}{_AT}{location.file}:{location.line} (in {location.function})"


def raise_with_location(exc_type: type[Exception], message: str, location: SourceLocation | None = None):
    raise exc_type(located(message, location or user_location(2)))


class TracerConversionError(TypeError):
    """A traced value was used where Python needs a concrete one (``if x > 0:``, ``int(x)``)."""


class ValueNeeded(TracerConversionError):
    """A Python int argument of a compiled function was used where Python needs an int (a shape, ``range``):
    ``xlac.compile`` traces again with its value part of the signature. ``value``: the graph input it is;
    ``leaf``: which argument leaf, set by the trace that has that input."""

    def __init__(self, message: str, value):
        super().__init__(message)
        self.value, self.leaf = value, None


class UnsupportedError(NotImplementedError):
    """A NumPy feature xlac does not implement."""


class RebindingError(TypeError):
    """A traced function left a traced value outside its arguments where xlac cannot write it back
    (appended to a list, inside a tuple, or under a transform); see ``xlac.rebinding``."""
