"""An S3-compatible server on loopback (moto's server mode), one per test session."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pyarrow.fs as pafs
import pytest

from tests._support import free_port

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "skipindex-test",
    "AWS_SECRET_ACCESS_KEY": "skipindex-secret",
    "AWS_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(  # this interpreter's moto, not whatever is on PATH
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        process.kill()
        raise RuntimeError("moto_server did not start")
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def s3_env(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The usual AWS_* variables point at the test server; returns the endpoint."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    return s3_endpoint


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    """A fresh bucket (and the filesystem to fill it)."""
    name = f"b-{uuid.uuid4().hex[:12]}"
    admin = pafs.S3FileSystem(
        access_key=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        secret_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region="us-east-1",
        endpoint_override=s3_endpoint,
        allow_bucket_creation=True,
    )
    admin.create_dir(name)
    return name


@pytest.fixture
def s3fs(s3_endpoint: str) -> pafs.S3FileSystem:
    """A client of the test server, for writing data files and damaging indexes."""
    return pafs.S3FileSystem(
        access_key=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        secret_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region="us-east-1",
        endpoint_override=s3_endpoint,
    )


os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")  # no instance-metadata probes
