"""The persistent cache's folder: one file per compiled executable, checked on the way in and out.

An entry is ``<key>.xlacexe``: a header (magic, entry format, the key it was written for, the payload's
length and SHA-256) and the payload, the executable as jaxlib serialized it. A truncated, corrupt or
foreign file is never handed out: ``load`` warns once and reports it as a corrupt entry. A writer writes a
temporary file in the same folder and renames it over the entry (``os.replace`` is atomic), so two
processes writing one key leave one whole entry. Each hit touches the entry's time; when the folder
grows past ``max_bytes`` the least recently used entries go first.

>>> import tempfile
>>> cache = PersistentCache(tempfile.mkdtemp())
>>> cache.store("ab" * 32, b"executable bytes")
>>> cache.load("ab" * 32)
(b'executable bytes', 'hit')
>>> cache.load("cd" * 32)
(None, 'no entry')
"""
from __future__ import annotations

import hashlib
import os
import struct
import uuid
import warnings
from dataclasses import dataclass

from xlac.config import config

__all__ = ["CacheEntry", "PersistentCache", "configured_cache"]

_MAGIC = b"XLACEXE\n"
_FORMAT = 1
# magic, entry format, key (32 bytes), payload length, payload SHA-256 (32 bytes)
_HEADER = struct.Struct("<8sI32sQ32s")
_SUFFIX = ".xlacexe"
_TEMPORARY_SUFFIX = ".tmp"


@dataclass(frozen=True)
class CacheEntry:
    """One file of the cache folder: its path, size in bytes and time of last use (seconds since the epoch)."""

    path: str
    size: int
    last_used: float


class PersistentCache:
    """Executables by key (64 hex digits) in ``folder``, at most ``max_bytes`` in all (``None``: no limit).

    >>> import tempfile
    >>> cache = PersistentCache(tempfile.mkdtemp(), max_bytes=1000)
    >>> cache.store("0" * 64, bytes(600)); cache.store("1" * 64, bytes(600))   # the first is evicted
    >>> [os.path.basename(e.path)[:4] for e in cache.entries()]
    ['1111']
    """

    def __init__(self, folder: str, max_bytes: int | None = None):
        self.folder = os.path.abspath(os.path.expanduser(folder))
        self.max_bytes = max_bytes

    def path_of(self, key: str) -> str:
        """The file holding ``key``'s entry."""
        return os.path.join(self.folder, key + _SUFFIX)

    def load(self, key: str) -> tuple[bytes | None, str]:
        """``(payload, "hit")``, or ``(None, why)`` with why ``"no entry"`` or ``"corrupt entry"`` (after one
        warning naming the file and what is wrong with it)."""
        path = self.path_of(key)
        try:
            with open(path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            return None, "no entry"
        except OSError as error:
            _warn(f"could not read the persistent cache entry {path} ({error}); compiling instead")
            return None, "corrupt entry"
        payload, problem = _unpack(data, key)
        if problem is not None:
            _warn(f"ignoring the persistent cache entry {path}: {problem}; compiling again")
            return None, "corrupt entry"
        try:
            os.utime(path)              # least recently used goes first: this one was just used
        except OSError:
            pass
        return payload, "hit"

    def store(self, key: str, payload: bytes) -> None:
        """Write ``key``'s entry whole (a temporary file renamed over it), then evict the least recently used
        entries past ``max_bytes``. A folder that cannot be written is a warning, never an error."""
        data = _pack(key, payload)
        if self.max_bytes is not None and len(data) > self.max_bytes:
            _warn(f"the executable ({len(data):,} bytes) is larger than the persistent cache's limit "
                  f"({self.max_bytes:,} bytes, XLAC_CACHE_MAX_BYTES); it is not cached")
            return
        temporary = os.path.join(self.folder, f"{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}{_TEMPORARY_SUFFIX}")
        try:
            os.makedirs(self.folder, exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(data)
            os.replace(temporary, self.path_of(key))
        except OSError as error:
            _remove(temporary)
            _warn(f"could not write to the persistent cache folder {self.folder} ({error}); "
                  "the executable is not cached")
            return
        self.evict(keep=self.path_of(key))

    def entries(self) -> list[CacheEntry]:
        """The entries, least recently used first."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        entries = []
        for name in names:
            if name.endswith(_SUFFIX):
                path = os.path.join(self.folder, name)
                try:
                    stat = os.stat(path)
                except OSError:
                    continue            # evicted or replaced by another process meanwhile
                entries.append(CacheEntry(path, stat.st_size, stat.st_mtime))
        return sorted(entries, key=lambda entry: entry.last_used)

    def size(self) -> int:
        """Bytes held by the entries."""
        return sum(entry.size for entry in self.entries())

    def evict(self, keep: str | None = None) -> None:
        """Remove the least recently used entries (never ``keep``) until the cache holds at most
        ``max_bytes``."""
        if self.max_bytes is None:
            return
        entries = self.entries()
        total = sum(entry.size for entry in entries)
        for entry in entries:
            if total <= self.max_bytes:
                break
            if entry.path != keep:
                _remove(entry.path)
                total -= entry.size

    def clear(self) -> int:
        """Remove every entry (and temporary files left by interrupted writers); the number of entries
        removed."""
        removed = 0
        try:
            names = os.listdir(self.folder)
        except OSError:
            return 0
        for name in names:
            if name.endswith(_SUFFIX) or name.endswith(_TEMPORARY_SUFFIX):
                removed += _remove(os.path.join(self.folder, name)) and name.endswith(_SUFFIX)
        return removed


def configured_cache() -> PersistentCache | None:
    """The cache ``xlac.config`` asks for (``cache_dir``; ``cache_max_bytes``, ``0`` or ``None`` for no
    limit), or None when it is off.

    >>> isinstance(configured_cache(), (PersistentCache, type(None)))
    True
    """
    if not config.cache_dir:
        return None
    return PersistentCache(config.cache_dir, config.cache_max_bytes or None)


def _pack(key: str, payload: bytes) -> bytes:
    header = _HEADER.pack(_MAGIC, _FORMAT, bytes.fromhex(key), len(payload), hashlib.sha256(payload).digest())
    return header + payload


def _unpack(data: bytes, key: str) -> tuple[bytes | None, str | None]:
    """``(payload, None)`` for a sound entry of ``key``, else ``(None, what is wrong)``."""
    if len(data) < _HEADER.size:
        return None, f"truncated ({len(data)} bytes, shorter than its header)"
    magic, entry_format, entry_key, length, checksum = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return None, "not an xlac cache entry"
    if entry_format != _FORMAT:
        return None, f"written in entry format {entry_format}, this xlac reads format {_FORMAT}"
    if entry_key.hex() != key:
        return None, "written for another key"
    payload = data[_HEADER.size:]
    if len(payload) != length:
        return None, f"truncated ({len(payload)} of {length} payload bytes)"
    if hashlib.sha256(payload).digest() != checksum:
        return None, "checksum mismatch"
    return payload, None


def _remove(path: str) -> bool:
    try:
        os.remove(path)
        return True
    except OSError:
        return False


def _warn(message: str) -> None:
    warnings.warn(f"xlac: {message}", RuntimeWarning, stacklevel=3)
