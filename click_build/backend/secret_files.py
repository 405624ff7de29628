"""Files a source package leaves out because they hold secrets, by name or by content.

An app folder is also where a developer keeps a ``.env`` with tokens, a ``.netrc``, a
signing key; a source package is uploaded and shared.  What is left out is said in one
warning, with the way to ship one on purpose: name it in ``tool.click-build.include``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..build import Entry, IgnoreRules
from ..datatree import shown

__all__ = ["SECRET_FOLDERS", "SECRET_NAMES", "SecretFiles"]

#: Files left out wherever they are (shell patterns on the file name).
SECRET_NAMES: tuple[str, ...] = (
    ".env", ".env.*", ".netrc", "_netrc", ".pypirc", ".npmrc", ".git-credentials",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    "*.p12", "*.pfx", "*.jks", "*.keystore",
)
#: ``.env.*`` files that document the variables rather than hold them.
_EXAMPLES = (".env.example", ".env.sample", ".env.template", ".env.dist")
#: Folders left out with all they hold.
SECRET_FOLDERS: tuple[str, ...] = (".ssh", ".gnupg", ".aws")
#: How much of a file is read to recognise a private key.
HEAD = 4096
#: A private key as OpenSSL, OpenSSH, GnuPG (armoured) and PuTTY write one, possibly after
#: the "Bag Attributes" lines ``openssl pkcs12`` puts first.
_PRIVATE_KEY = re.compile(
    rb"\s*(?:(?:Bag|Key) Attributes[^\n]*\n(?:[^\n-][^\n]*\n)*)?"
    rb"(?:-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-)")


class SecretFiles:
    """The rules, with the project's ``include`` patterns, which win."""

    def __init__(self, includes: Sequence[str]) -> None:
        self._names = IgnoreRules(SECRET_NAMES)
        self._examples = IgnoreRules(_EXAMPLES)
        self._folders = IgnoreRules(SECRET_FOLDERS)
        self._included = IgnoreRules(includes)
        #: What was left out: paths, a folder as ``path/`` once.
        self.left_out: list[str] = []

    def _kept(self, arcname: str) -> bool:
        return self._included(arcname.rsplit("/", 1)[-1], arcname)

    def filter(self, entries: Iterable[Entry]) -> list[Entry]:
        """``entries`` without the secrets their names give away."""
        out = []
        for e in entries:
            parts = e.arcname.split("/")
            folder = next(("/".join(parts[:n]) for n in range(1, len(parts) + 1)
                           if self._folders(parts[n - 1], "/".join(parts[:n]))), None)
            if folder is not None and not self._kept(folder) and not self._kept(e.arcname):
                self.left_out.append(f"{folder}/")
                continue
            name = parts[-1]
            if self._names(name, e.arcname) and not self._examples(name, e.arcname) \
                    and not self._kept(e.arcname):
                self.left_out.append(e.arcname)
                continue
            out.append(e)
        return out

    def is_private_key(self, arcname: str, head: bytes) -> bool:
        """Whether a file starting with ``head`` is a private key to leave out (and note)."""
        if _PRIVATE_KEY.match(head) is None or self._kept(arcname):
            return False
        self.left_out.append(arcname)
        return True

    def summary(self) -> str | None:
        """The warning that says what was left out and how to keep one; None for nothing."""
        if not self.left_out:
            return None
        names = sorted(dict.fromkeys(self.left_out))
        shown_names = ", ".join(shown(n) for n in names[:8])
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        example = names[0].rstrip("/").rsplit("/", 1)[-1]
        return (f"the source package leaves out what may hold secrets: {shown_names}{more}; "
                "to ship one on purpose, name it in tool.click-build.include (such as "
                f"-C click-build.include={shown(example)})")
