"""The module file: imports served from one file, only while the normal search would agree (issue 36).

Each case runs a small program in a fresh interpreter (the import system is process-wide): it
installs the cache, imports a package of a temporary folder and prints what it got.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.support.pi import PI_SCRIPT, run_pi

PROGRAM = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from pi_host.cli import module_cache
    cache = module_cache.install(sys.argv[2])
    import json
    import demo.sub
    import importlib.resources, inspect
    print(json.dumps({
        "value": demo.sub.VALUE,
        "loader": type(demo.sub.__loader__).__name__,
        "package_loader": type(demo.__loader__).__name__,
        "file": demo.sub.__file__,
        "cached": demo.sub.__cached__,
        "path": list(demo.__path__),
        "resource": importlib.resources.files("demo").joinpath("data.txt").read_text(),
        "source": inspect.getsource(demo.sub.double),
        "served": sorted(cache.served) if cache else [],
    }))
    """
)


def _tree(root: Path) -> Path:
    package = root / "src" / "demo"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "data.txt").write_text("packaged data")
    (package / "sub.py").write_text("VALUE = 1\n\ndef double(x):\n    return 2 * x\n")
    return root / "src"


def _run(source: Path, cache: Path, cwd: Path | None = None, **env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(source), str(cache)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **env},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _file(cache: Path) -> Path:
    (found,) = cache.glob("modules-v1-*.marshal")
    return found


def test_the_second_run_is_served_from_the_file_with_the_normal_attributes(tmp_path):
    source, cache = _tree(tmp_path), tmp_path / "cache"
    first = _run(source, cache)
    assert first["loader"] == "SourceFileLoader" and first["served"] == []
    written = _file(cache)
    stamp = written.stat().st_mtime_ns
    second = _run(source, cache)
    assert second["loader"] == "CachedSourceLoader" and second["package_loader"] == "CachedSourceLoader"
    assert {"demo", "demo.sub", "json", "inspect"} <= set(second["served"])
    for key in ("value", "file", "cached", "path", "resource", "source"):
        assert second[key] == first[key], key
    assert second["file"] == str(source / "demo" / "sub.py")
    assert second["path"] == [str(source / "demo")]
    assert "return 2 * x" in second["source"]
    assert written.stat().st_mtime_ns == stamp  # nothing new: not rewritten


def test_an_edited_module_is_read_from_its_source_and_the_file_is_updated(tmp_path):
    source, cache = _tree(tmp_path), tmp_path / "cache"
    _run(source, cache)
    time.sleep(0.01)
    (source / "demo" / "sub.py").write_text("VALUE = 22\n\ndef double(x):\n    return 2 * x\n")
    edited = _run(source, cache)
    assert edited["value"] == 22 and edited["loader"] == "SourceFileLoader"
    assert "demo" in edited["served"] and "demo.sub" not in edited["served"]
    again = _run(source, cache)
    assert again["value"] == 22 and again["loader"] == "CachedSourceLoader"


def test_a_new_file_that_would_hide_a_module_wins(tmp_path):
    source, cache = _tree(tmp_path), tmp_path / "cache"
    _run(source, cache)
    package = source / "demo" / "sub"
    package.mkdir()  # a package beside the module: the normal search takes the package
    (package / "__init__.py").write_text("VALUE = 'package'\ndef double(x):\n    return x\n")
    hidden = _run(source, cache)
    assert hidden["value"] == "package" and hidden["loader"] == "SourceFileLoader"


def test_a_working_directory_first_on_the_path_hides_only_the_names_it_holds(tmp_path):
    source, cache = _tree(tmp_path), tmp_path / "cache"
    work = tmp_path / "elsewhere"
    work.mkdir()
    _run(source, cache, cwd=work)
    served = _run(source, cache, cwd=work)
    assert "json" in served["served"]
    (work / "json.py").write_text("raise ImportError('the json of the working directory')")
    # `python -c` searches the working directory first: its json.py is what `import json`
    # finds, cache or not, and the other modules are still served
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(source), str(cache)], cwd=work, capture_output=True, text=True
    )
    assert "the json of the working directory" in done.stderr


def test_a_damaged_file_is_ignored_and_rewritten(tmp_path):
    source, cache = _tree(tmp_path), tmp_path / "cache"
    _run(source, cache)
    written = _file(cache)
    data = written.read_bytes()
    written.write_bytes(data[:8] + b"\x00" * 64 + data[72:])
    assert _run(source, cache)["value"] == 1
    written.write_bytes(data[: len(data) // 2])  # code cut short: that module loads from source
    assert _run(source, cache)["value"] == 1
    written.write_bytes(b"junk")
    assert _run(source, cache)["value"] == 1
    size = int.from_bytes(data[:8], "little")
    index = marshal.loads(data[8 : 8 + size])
    index["modules"] = {name: 5 if n % 2 else ("x",) for n, name in enumerate(index["modules"])}
    odd = marshal.dumps(index)  # well-formed, wrongly shaped entries: the normal way for each
    written.write_bytes(len(odd).to_bytes(8, "little") + odd)
    assert _run(source, cache)["value"] == 1
    assert _run(source, cache)["loader"] == "CachedSourceLoader"


def test_the_switch_turns_it_off(tmp_path):
    source, cache = _tree(tmp_path), tmp_path / "cache"
    for variable in ("PI_HOST_NO_MODULE_CACHE", "PI_HOST_NO_CODE_CACHE"):
        assert _run(source, cache, **{variable: "1"})["served"] == []
    assert not list(cache.glob("modules-*"))


def test_pi_writes_the_file_once_and_other_working_directories_use_it(tmp_path):
    cache = tmp_path / "pi-cache"
    env = {**os.environ, "PI_HOST_CACHE_DIR": str(cache)}
    args = ("--model", "faux/faux-1", "--no-session", "-p", "hi")
    first = run_pi(*args, env=env, command=PI_SCRIPT)
    assert first.returncode == 0, first.stderr
    written = _file(cache)
    stamp = written.stat().st_mtime_ns
    second = run_pi(*args, env=env, command=PI_SCRIPT)
    assert (second.returncode, second.stdout, second.stderr) == (0, first.stdout, first.stderr)
    assert written.stat().st_mtime_ns == stamp
    # `python -m pi_host` searches its working directory first: a file there named like a
    # module pi-host imports is what Python imports, with the file or without
    for name in ("a", "b"):
        work = tmp_path / name
        work.mkdir()
        done = run_pi(*args, env=env, cwd=work)
        assert (done.returncode, done.stdout) == (0, first.stdout), done.stderr
    (tmp_path / "b" / "dataclasses.py").write_text(
        "raise SystemExit('dataclasses of the working directory')\n"
    )
    hidden = run_pi(*args, env=env, cwd=tmp_path / "b")
    assert "dataclasses of the working directory" in hidden.stderr


def test_a_module_loaded_from_a_file_by_location_is_not_kept(tmp_path):
    """(an extension is loaded by path, never searched for by name: keeping it would rewrite
    the file on every run)"""
    program = textwrap.dedent(
        """
        import importlib.util, sys
        from pi_host.cli import module_cache
        cache = module_cache.install(sys.argv[2])
        spec = importlib.util.spec_from_file_location("by_location_ext", sys.argv[1])
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        import json
        print(module.VALUE)
        """
    )
    extension = tmp_path / "ext.py"
    extension.write_text("VALUE = 7\n")
    cache = tmp_path / "cache"
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", program, str(extension), str(cache)], capture_output=True, text=True
        )
        assert done.returncode == 0 and done.stdout == "7\n", done.stderr
    written = _file(cache)
    stamp = written.stat().st_mtime_ns
    subprocess.run(
        [sys.executable, "-c", program, str(extension), str(cache)], check=True, capture_output=True
    )
    assert written.stat().st_mtime_ns == stamp  # the extension is not a module to keep: no rewrite
    assert b"by_location_ext" not in written.read_bytes()
