"""Tiny programs built here with real compilers, for the ABI tests.

The host's gcc (amd64) and Debian's cross compilers for arm64 and armhf build each
program; all three link Debian 12's glibc 2.36, so every program needs ``GLIBC_2.34``
(``__libc_start_main``), which Ubuntu 20.04's glibc 2.31 lacks.  Two libraries are
*stubs* made here, not the real ones:

- ``libssl.so.3``: a library with that SONAME defining ``OPENSSL_init_ssl``, enough for
  a program to need ``libssl.so.3`` as one linked against OpenSSL 3 does;
- ``libQt5Core.so.5``: a library with that SONAME whose version script puts its
  symbols in Qt's ``Qt_5`` node, as the real one does, defining one Qt 5.15 function
  (``QByteArray::fromBase64Encoding``, mangled), so a program calling it needs that
  symbol at ``Qt_5`` exactly as one built against Qt 5.15 does, on any architecture.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["COMPILERS", "QT515_SYMBOL", "build", "need_compiler", "program"]

#: Debian architecture -> the C compiler that targets it here.
COMPILERS = {"amd64": "gcc", "arm64": "aarch64-linux-gnu-gcc", "armhf": "arm-linux-gnueabihf-gcc"}
#: QByteArray::fromBase64Encoding(const QByteArray&, QByteArray::Base64Options): Qt 5.15.
QT515_SYMBOL = "_ZN10QByteArray18fromBase64EncodingERKS_6QFlagsINS_12Base64OptionEE"

SOURCES = {
    "hello.c": '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n',
    "ssl-stub.c": "int OPENSSL_init_ssl(unsigned long o, const void *s) { return 1; }\n",
    "qt-stub.c": f'void f(void) __asm__("{QT515_SYMBOL}");\nvoid f(void) {{}}\n',
    "qt-stub.map": "Qt_5 { global: *; };\n",
    "hello-ssl.c": "int OPENSSL_init_ssl(unsigned long o, const void *s);\n"
                   "int main(void) { return !OPENSSL_init_ssl(0, 0); }\n",
    "hello-qt.c": f'void f(void) __asm__("{QT515_SYMBOL}");\n'
                  "int main(void) { f(); return 0; }\n",
    "helper.c": "int helper(void) { return 42; }\n",
    "hello-helper.c": "int helper(void);\nint main(void) { return helper() != 42; }\n",
}


def need_compiler(arch: str) -> str:
    compiler = shutil.which(COMPILERS[arch])
    if compiler is None:
        pytest.fail(f"{COMPILERS[arch]} is missing (Debian package gcc / gcc-"
                    f"{'aarch64-linux-gnu' if arch == 'arm64' else 'arm-linux-gnueabihf'})")
    return compiler


def build(arch: str, out: Path) -> dict[str, Path]:
    """Build every program and library for ``arch`` in ``out``; their paths by name:
    ``hello``, ``hello-ssl``, ``hello-qt``, ``hello-helper`` (needs ``libhelper.so.1``,
    found through RUNPATH ``$ORIGIN/../private``), ``libssl.so.3``, ``libQt5Core.so.5``,
    ``libhelper.so.1``."""
    cc = need_compiler(arch)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in SOURCES.items():
        (out / name).write_text(text)

    def run(*args: str) -> None:
        subprocess.run([cc, *args], cwd=out, check=True, capture_output=True)

    run("-shared", "-fPIC", "-Wl,-soname,libssl.so.3", "-o", "libssl.so.3", "ssl-stub.c")
    run("-shared", "-fPIC", "-Wl,-soname,libQt5Core.so.5", "-Wl,--version-script=qt-stub.map",
        "-o", "libQt5Core.so.5", "qt-stub.c")
    run("-shared", "-fPIC", "-Wl,-soname,libhelper.so.1", "-o", "libhelper.so.1", "helper.c")
    run("-o", "hello", "hello.c")
    run("-o", "hello-ssl", "hello-ssl.c", "libssl.so.3")
    run("-o", "hello-qt", "hello-qt.c", "libQt5Core.so.5")
    run("-o", "hello-helper", "hello-helper.c", "libhelper.so.1",
        "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../private")
    names = ("hello", "hello-ssl", "hello-qt", "hello-helper", "libssl.so.3", "libQt5Core.so.5",
             "libhelper.so.1")
    return {name: out / name for name in names}


_BUILT: dict[str, dict[str, Path]] = {}
_KEEP: list[tempfile.TemporaryDirectory[str]] = []


def program(arch: str, name: str) -> Callable[[], bytes]:
    """The bytes of a program of :func:`build`, built on first use (for the crafted
    packages that module-level tables describe, e.g. tests/test_review.py's CASES)."""

    def read() -> bytes:
        if arch not in _BUILT:
            folder = tempfile.TemporaryDirectory(prefix=f"abi-{arch}-")
            _KEEP.append(folder)  # removed when the test process ends
            _BUILT[arch] = build(arch, Path(folder.name))
        return _BUILT[arch][name].read_bytes()

    return read
