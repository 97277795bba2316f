"""Run the Array API standard's test suite against xlac.numpy (or another namespace).

The suite (https://github.com/data-apis/array-api-tests) is not vendored: fetch it, with its spec submodule,
and install its requirements into the Python that runs this script:

    git clone https://github.com/data-apis/array-api-tests /tmp/array-api-tests
    git -C /tmp/array-api-tests submodule update --init
    pip install -r /tmp/array-api-tests/requirements.txt
    python benchmarks/array_api_conformance.py /tmp/array-api-tests --max-examples 20
    python benchmarks/array_api_conformance.py /tmp/array-api-tests --module numpy

It runs the suite with hypothesis's deadline off, derandomized and without its example database (so a run
starts fresh and is repeatable), and by default without hypothesis's shrink phase: shrinking a failing example
replays it with hundreds of new shapes, each a new XLA compilation, and changes no pass/fail outcome.
Other arguments go to pytest (e.g. `-k 'not special_cases'`). It prints the failing tests, then one line: `MODULE: N passed, M failed, K skipped`.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
STANDARD_VERSION = "2024.12"

PROFILE_PLUGIN = '''
import pytest
from hypothesis import Phase, settings

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    settings.register_profile("array-api-conformance", settings.default, database=None,
                              phases=[Phase.explicit, Phase.reuse, Phase.generate]{shrink})
    settings.load_profile("array-api-conformance")
'''


def summary_counts(pytest_output):
    """The passed/failed/skipped counts of pytest's last summary line.

    >>> summary_counts("...\\n=== 3 failed, 1248 passed, 14 skipped in 73.2s ===\\n")
    {'passed': 1248, 'failed': 3, 'skipped': 14, 'error': 0}
    """
    counts = {"passed": 0, "failed": 0, "skipped": 0, "error": 0}
    summary_lines = [line for line in pytest_output.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    if summary_lines:
        for number, outcome in re.findall(r"(\d+) (passed|failed|skipped|errors?)", summary_lines[-1]):
            counts["error" if outcome.startswith("error") else outcome] = int(number)
    return counts


def run_suite(suite_path, module, max_examples, shrink, selection, pytest_arguments):
    """Run the tests `selection` of the suite at `suite_path` against `module`; return (exit status, output)."""
    with tempfile.TemporaryDirectory() as plugin_directory:
        shrink_phase = ' + [Phase.shrink]' if shrink else ''
        Path(plugin_directory, "array_api_conformance_profile.py").write_text(
            PROFILE_PLUGIN.format(shrink=shrink_phase))
        environment = dict(
            os.environ,
            ARRAY_API_TESTS_MODULE=module,
            ARRAY_API_TESTS_VERSION=STANDARD_VERSION,
            PYTHONPATH=os.pathsep.join(
                [str(REPOSITORY_ROOT), plugin_directory, os.environ.get("PYTHONPATH", "")]))
        command = [sys.executable, "-m", "pytest", "-p", "array_api_conformance_profile",
                   "-p", "no:cacheprovider", *selection, f"--max-examples={max_examples}",
                   "--derandomize", "--disable-deadline", "-q", "-rfE", "--tb=no", *pytest_arguments]
        completed = subprocess.run(command, cwd=suite_path, env=environment, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return completed.returncode, completed.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("suite_path", type=Path, help="a local checkout of data-apis/array-api-tests")
    parser.add_argument("--module", default="xlac.numpy", help="the namespace under test (default xlac.numpy)")
    parser.add_argument("--max-examples", type=int, default=20, help="hypothesis examples per test (default 20)")
    parser.add_argument("--shrink", action="store_true", help="keep hypothesis's shrink phase (slow)")
    parser.add_argument("--select", action="append", default=None, metavar="PATH",
                        help="a file or test of the suite to run (repeatable; default the whole suite)")
    arguments, pytest_arguments = parser.parse_known_args(argv)
    if not (arguments.suite_path / "array_api_tests").is_dir():
        parser.error(f"{arguments.suite_path} is not a checkout of data-apis/array-api-tests "
                     "(it has no array_api_tests/ directory)")
    status, output = run_suite(arguments.suite_path.resolve(), arguments.module, arguments.max_examples,
                               arguments.shrink, arguments.select or ["array_api_tests/"], pytest_arguments)
    print(output)
    counts = summary_counts(output)
    print(f"{arguments.module}: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped, {counts['error']} errors (--max-examples {arguments.max_examples})")
    return 0 if status in (0, 1) else status


if __name__ == "__main__":
    sys.exit(main())
