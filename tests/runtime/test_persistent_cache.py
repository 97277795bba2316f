"""The persistent compilation cache: hits across compiled functions and processes, keys that keep apart
what compiles differently, entries that are checked before loading, eviction, concurrent writers, the
``cache`` command, and the notice of a long compile."""
import logging
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from xlac import cli
from xlac.config import Config, config
from xlac.inspection.log import CompileNotice
from xlac.ir import primitives as P
from xlac.runtime import PersistentCache, get_device
from xlac.runtime.cache_key import cache_key, code_generation_flags, strip_locations
from xlac.runtime.client import compile_options
from xlac.runtime.executable import CompileError
from xlac.trace import ops

REPO = Path(xlac.__file__).resolve().parents[1]
X = np.linspace(-2.0, 2.0, 24, dtype=np.float32).reshape(4, 6)
W = np.linspace(0.5, -0.5, 18, dtype=np.float32).reshape(6, 3)


def block(x, w):
    return xnp.tanh(x @ w) * 2.0 + 1.0


def expected():
    return np.tanh(X @ W) * 2.0 + 1.0


def assert_right(out):
    """Equal to NumPy at float32's precision (bfloat16's would be off by about 1e-2)."""
    np.testing.assert_allclose(out, expected(), rtol=1e-5, atol=1e-5)


def compile_block():
    """A fresh compiled function (its own in-memory cache), its executable, and its result."""
    compiled = xlac.compile(block).lower(X, W).compile()
    return compiled, np.asarray(compiled(X, W))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setattr(config, "cache_dir", str(folder))
    monkeypatch.setattr(config, "cache_max_bytes", None)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    return folder


def entries(folder) -> list[str]:
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


# ---------------------------------------------------------------- hits and misses


def test_a_second_compile_loads_the_executable_and_writes_nothing(cache_dir):
    first, out = compile_block()
    assert first.executable.persistent_cache == "miss (no entry)"
    assert_right(out)
    (entry,) = entries(cache_dir)
    written = (cache_dir / entry).stat().st_mtime_ns
    os.utime(cache_dir / entry, ns=(written - 10**9, written - 10**9))

    second, out = compile_block()
    assert second.executable.persistent_cache == "hit"
    assert_right(out)
    assert entries(cache_dir) == [entry]
    assert (cache_dir / entry).stat().st_mtime_ns > written - 10**9      # a hit marks it recently used
    assert "tanh" in second.as_text()                                     # XLA's HLO of the loaded executable


def test_the_compile_log_says_what_the_persistent_cache_did(cache_dir, caplog, monkeypatch):
    monkeypatch.setattr(config, "log_compiles", True)
    with caplog.at_level(logging.WARNING, logger="xlac"):
        xlac.compile(block)(X, W)
        xlac.compile(block)(X, W)
        monkeypatch.setattr(config, "cache_dir", None)
        xlac.compile(block)(X, W)
    messages = [r.getMessage() for r in caplog.records if r.name == "xlac"]
    assert "because first call; persistent cache miss (no entry) in" in messages[0]
    assert "because first call; persistent cache hit in" in messages[1] and "cache_load" in messages[1]
    assert "because first call; persistent cache off in" in messages[2] and "xla_compile" in messages[2]


def test_moving_a_line_or_renaming_an_argument_still_hits(cache_dir):
    def moved(a, b):

        return xnp.tanh(a @ b) * 2.0 + 1.0
    plain, moved_text = xlac.compile(block).lower(X, W).as_text(), xlac.compile(moved).lower(X, W).as_text()
    assert plain != moved_text and strip_locations(plain) == strip_locations(moved_text)
    compile_block()
    compiled = xlac.compile(moved).lower(X, W).compile()
    assert compiled.executable.persistent_cache == "hit"
    assert_right(np.asarray(compiled(X, W)))


def test_an_autocast_entry_is_never_served_to_a_plain_call(cache_dir):
    with xlac.autocast(dtype="bfloat16"):
        cast = np.asarray(xlac.compile(block)(X, W))
    assert not np.allclose(cast, expected(), rtol=1e-5, atol=1e-5)    # bfloat16's precision
    compiled, out = compile_block()
    assert compiled.executable.persistent_cache == "miss (no entry)"
    assert_right(out)              # float32 precision: not bf16's
    assert len(entries(cache_dir)) == 2


def test_an_entry_built_with_other_xla_flags_is_never_served(cache_dir, monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true")
    compile_block()
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/xlac-test-dump-unused --xla_dump_hlo_as_text")
    compiled, out = compile_block()
    assert compiled.executable.persistent_cache == "miss (no entry)"
    assert_right(out)
    monkeypatch.delenv("XLA_FLAGS")
    assert compile_block()[0].executable.persistent_cache == "hit"     # dump flags do not change the code


def test_compiler_options_apply_to_each_compile_and_key_its_entry(cache_dir, monkeypatch):
    monkeypatch.setattr(config, "compiler_options", {})
    assert compile_block()[0].executable.persistent_cache == "miss (no entry)"
    monkeypatch.setattr(config, "compiler_options", {"xla_cpu_use_fusion_emitters": False})
    compiled, out = compile_block()
    assert compiled.executable.persistent_cache == "miss (no entry)"
    assert_right(out)
    assert len(entries(cache_dir)) == 2
    monkeypatch.setattr(config, "compiler_options", {"xla_no_such_option": 1})
    with pytest.raises(CompileError, match="No such compile option: 'xla_no_such_option'"):
        compile_block()
    monkeypatch.setattr(config, "compiler_options", [("xla_backend_optimization_level", 0)])
    with pytest.raises(TypeError, match=r"compiler_options must be a dict of XLA option names.*got \[\("):
        compile_block()


def test_a_program_xla_cannot_build_with_the_compiler_options_is_built_with_its_defaults(monkeypatch):
    monkeypatch.setattr(config, "compiler_options", {"xla_cpu_use_fusion_emitters": False})
    z = np.array([1 + 2j, 3 - 1j, -1j], np.complex64)
    with pytest.warns(RuntimeWarning, match=r"UNIMPLEMENTED: binary complex op 'maximum'.*XLA's default options"):
        got = xlac.compile(lambda a, b: ops.bind(P.max_, a, b))(z, z[::-1])     # the older emitters lack it
    np.testing.assert_array_equal(np.asarray(got), np.maximum(z, z[::-1]))


def test_the_key_covers_text_flags_and_devices():
    text = xlac.compile(block).lower(X, W).as_text()
    device, options = get_device("cpu"), compile_options()
    key = cache_key(text, [device], options)
    assert cache_key(text, [device], options) == key
    assert cache_key(text.replace("tanh", "exponential"), [device], options) != key
    assert cache_key(text, [device, device], options) != key
    assert code_generation_flags("--xla_dump_to=d --xla_force_host_platform_device_count=8 --xla_b=1 --xla_a=0") \
        == ["--xla_a=0", "--xla_b=1"]


def test_no_cache_without_a_folder(monkeypatch):
    monkeypatch.setattr(config, "cache_dir", None)
    assert compile_block()[0].executable.persistent_cache == "off"


# ---------------------------------------------------------------- bad entries


def _entry_path(cache_dir) -> Path:
    (name,) = entries(cache_dir)
    return cache_dir / name


@pytest.mark.parametrize("damage, problem", [
    (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "checksum mismatch"),
    (lambda data: data[:len(data) // 2], "truncated"),
    (lambda data: data[:40], "truncated"),
    (lambda data: b"not an entry" * 20, "not an xlac cache entry"),
])
def test_a_damaged_entry_is_recompiled_with_one_warning(cache_dir, damage, problem):
    compile_block()
    path = _entry_path(cache_dir)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.warns(RuntimeWarning, match=problem) as warned:
        compiled, out = compile_block()
    assert len([w for w in warned if "xlac" in str(w.message)]) == 1
    assert compiled.executable.persistent_cache == "miss (corrupt entry)"
    assert_right(out)
    assert compile_block()[0].executable.persistent_cache == "hit"     # rewritten whole


def test_an_entry_of_another_key_is_not_loaded(cache_dir):
    compile_block()
    path = _entry_path(cache_dir)
    other = PersistentCache(str(cache_dir))
    other.store("f" * 64, b"another program")
    os.replace(other.path_of("f" * 64), path)
    with pytest.warns(RuntimeWarning, match="written for another key"):
        compiled, out = compile_block()
    assert compiled.executable.persistent_cache == "miss (corrupt entry)"
    assert_right(out)


def test_an_entry_jaxlib_refuses_is_recompiled(cache_dir):
    compiled, _ = compile_block()
    key = Path(_entry_path(cache_dir)).name.split(".")[0]
    PersistentCache(str(cache_dir)).store(key, b"sound checksum, not an executable")
    with pytest.warns(RuntimeWarning, match="jaxlib could not load"):
        compiled, out = compile_block()
    assert compiled.executable.persistent_cache == "miss (corrupt entry)"
    assert_right(out)


def test_an_unwritable_folder_warns_and_still_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(config, "cache_dir", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="could not write"):
        compiled, out = compile_block()
    assert_right(out)


# ---------------------------------------------------------------- the store


def test_eviction_removes_the_least_recently_used_entries(tmp_path):
    cache = PersistentCache(str(tmp_path), max_bytes=None)
    keys = [c * 64 for c in "abc"]
    for age, key in zip((30, 20, 10), keys):
        cache.store(key, bytes(1000))
        past = time.time() - age
        os.utime(cache.path_of(key), (past, past))
    assert cache.load(keys[0]) == (bytes(1000), "hit")          # "a" is now the most recently used
    entry_size = os.path.getsize(cache.path_of(keys[0]))
    cache.max_bytes = 3 * entry_size
    cache.store("d" * 64, bytes(1000))
    assert cache.load(keys[1]) == (None, "no entry")            # "b": least recently used
    assert [cache.load(k)[1] for k in (keys[0], keys[2], "d" * 64)] == ["hit"] * 3
    assert cache.size() == 3 * entry_size
    with pytest.warns(RuntimeWarning, match="larger than the persistent cache's limit"):
        cache.store("e" * 64, bytes(10 * entry_size))            # would evict everything: not kept
    assert cache.load("e" * 64) == (None, "no entry") and cache.size() == 3 * entry_size


def test_the_checksum_covers_every_payload_byte(tmp_path):
    cache = PersistentCache(str(tmp_path))
    cache.store("a" * 64, bytes(range(256)))
    path = Path(cache.path_of("a" * 64))
    data = bytearray(path.read_bytes())
    data[-100] ^= 0x80
    path.write_bytes(bytes(data))
    with pytest.warns(RuntimeWarning, match="checksum mismatch"):
        assert cache.load("a" * 64) == (None, "corrupt entry")


CONCURRENT_WRITER = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import xlac, xlac.numpy as xnp
    from xlac.runtime import PersistentCache
    folder, me = sys.argv[1], sys.argv[2]
    open(os.path.join(folder, "ready-" + me), "w").close()
    while not os.path.exists(os.path.join(folder, "go")):
        time.sleep(0.01)
    cache = PersistentCache(os.path.join(folder, "store"))
    payload = me.encode() * (1 << 20)
    for _ in range(20):
        cache.store("a" * 64, payload)
        assert cache.load("a" * 64)[1] == "hit"
    xlac.config.update("cache_dir", os.path.join(folder, "xlac"))
    x = np.arange(6.0, dtype=np.float32)
    out = np.asarray(xlac.compile(lambda x: xnp.sin(x) * x)(x))
    assert np.allclose(out, np.sin(x) * x)
    print("ok")
""")


def test_two_processes_writing_one_key_leave_one_whole_entry(tmp_path, monkeypatch, xla_defaults):
    # xla_defaults: this process compiles the writers' program as they do, to find their entry
    env = {**os.environ, "PYTHONPATH": str(REPO), "XLAC_COMPILE_NOTICE": "0"}
    env.pop("XLAC_CACHE_DIR", None)
    writers = [subprocess.Popen([sys.executable, "-c", CONCURRENT_WRITER, str(tmp_path), me], env=env, cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for me in "12"]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready-{me}").exists() for me in "12"):
            assert time.monotonic() < deadline and all(w.poll() is None for w in writers), \
                [w.communicate()[1] for w in writers if w.poll() is not None]
            time.sleep(0.02)
        (tmp_path / "go").touch()
        results = [w.communicate(timeout=60) for w in writers]
    finally:
        for writer in writers:
            writer.kill()
    assert [w.returncode for w in writers] == [0, 0], [err for _, err in results]
    assert [out.strip() for out, _ in results] == ["ok", "ok"]
    store = PersistentCache(str(tmp_path / "store"))
    assert entries(tmp_path / "store") == ["a" * 64 + ".xlacexe"]      # no temporary file left behind
    payload, outcome = store.load("a" * 64)
    assert outcome == "hit" and payload in (b"1" * (1 << 20), b"2" * (1 << 20))
    (entry,) = entries(tmp_path / "xlac")
    assert entry.endswith(".xlacexe")
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "xlac"))   # the same program in this process
    x = np.arange(6.0, dtype=np.float32)
    compiled = xlac.compile(lambda x: xnp.sin(x) * x).lower(x).compile()
    assert compiled.executable.persistent_cache == "hit"
    np.testing.assert_allclose(np.asarray(compiled(x)), np.sin(x) * x, rtol=1e-6)


# ---------------------------------------------------------------- the command line and the settings


def test_the_cache_command_prints_folder_entries_size_and_clears(cache_dir, capsys):
    compile_block()
    assert cli.main(["cache", "--dir", str(cache_dir)]) == 0
    out = capsys.readouterr().out
    assert f"folder:  {cache_dir}" in out and "entries: 1" in out and "KiB" in out and ".xlacexe" in out
    assert cli.main(["cache", "--clear"]) == 0                      # the configured folder
    assert capsys.readouterr().out == f"removed 1 entries from {cache_dir}\n"
    assert entries(cache_dir) == []
    assert cli.main(["cache"]) == 0 and "entries: 0" in capsys.readouterr().out


def test_the_cache_command_without_a_folder_says_how_to_set_one(monkeypatch, capsys):
    monkeypatch.setattr(config, "cache_dir", None)
    assert cli.main(["cache"]) == 1
    assert "XLAC_CACHE_DIR" in capsys.readouterr().err


def test_settings_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("XLAC_CACHE_DIR", "/tmp/xlac-cache")
    monkeypatch.setenv("XLAC_CACHE_MAX_BYTES", "1000")
    monkeypatch.setenv("XLAC_COMPILE_NOTICE", "0")
    fresh = Config()
    assert (fresh.cache_dir, fresh.cache_max_bytes, fresh.compile_notice) == ("/tmp/xlac-cache", 1000, False)
    for name in ("XLAC_CACHE_DIR", "XLAC_CACHE_MAX_BYTES", "XLAC_COMPILE_NOTICE"):
        monkeypatch.delenv(name)
    fresh = Config()
    assert fresh.cache_dir is None and fresh.cache_max_bytes == 2 * 1024 ** 3 and fresh.compile_notice is True


# ---------------------------------------------------------------- the notice of a long compile


def test_a_long_compile_prints_its_start_and_its_duration(capsys):
    with CompileNotice("block", after=0.05) as notice:
        notice.ops = 1234
        time.sleep(0.3)
    start, end = capsys.readouterr().err.splitlines()
    assert start == "xlac: compiling block (1,234 ops) ..."
    assert re.fullmatch(r"xlac: compiled block \(1,234 ops\) in \d+\.\d s", end)


def test_a_short_or_silenced_compile_prints_nothing(capsys):
    with CompileNotice("block", after=5.0):
        pass
    with CompileNotice("block", after=0.01, enabled=False):
        time.sleep(0.1)
    time.sleep(0.05)
    assert capsys.readouterr().err == ""
