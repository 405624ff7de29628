"""A set of paths too large to keep: what a finding that lists files keeps of them."""

from __future__ import annotations

import bisect

__all__ = ["SHOWN", "Sample"]

SHOWN = 5  # paths a finding names


class Sample:
    """A set of paths too large to keep: its size and its first few paths
    (the smallest ones with ``ordered=True``, else the first seen)."""

    def __init__(self, ordered: bool = False) -> None:
        self.paths: list[str] = []
        self.count = 0
        self._ordered = ordered

    def add(self, path: str) -> None:
        self.count += 1
        if self._ordered:
            if len(self.paths) < SHOWN or path < self.paths[-1]:
                bisect.insort(self.paths, path)
                del self.paths[SHOWN:]
        elif len(self.paths) < SHOWN:
            self.paths.append(path)

    def __bool__(self) -> bool:
        return self.count > 0

    def listing(self) -> str:
        """The first paths, and how many more."""
        more = self.count - len(self.paths)
        return ", ".join(self.paths) + (f" and {more} more" if more > 0 else "")

    def merge(self, other: Sample) -> None:
        """Add ``other``'s paths and count."""
        for path in other.paths:
            self.add(path)
        self.count += other.count - len(other.paths)
