"""Shared fixtures: the CLI next to the module (SCALESCOPE_CLI, set by ctest) and the repository root."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    exe = os.environ.get("SCALESCOPE_CLI")
    if not exe:
        pytest.skip("SCALESCOPE_CLI is not set (ctest sets it to the built scalescope program)")

    def run(*args, check=True):
        p = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"scalescope {' '.join(args)} exited {p.returncode}: {p.stderr}")
        return p

    run.exe = exe
    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    return lambda *args: json.loads(cli(*args, "--format", "json").stdout)
