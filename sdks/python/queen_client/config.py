"""Client configuration and the documented retry defaults."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Dict, Optional, Sequence

DEFAULT_RETRY_ATTEMPTS = 3
DEFAULT_RETRY_DELAY_MILLIS = 1000
DEFAULT_429_MAX_ATTEMPTS = 10
DEFAULT_429_BASE_MS = 500
DEFAULT_429_CAP_MS = 30000
DEFAULT_TIMEOUT_MILLIS = 30000
DEFAULT_HEALTH_RETRY_AFTER_MILLIS = 5000


@dataclass(frozen=True)
class Retry429:
    """Layer two: in-place retries of 429 answers on the same backend.

    A rate limit is backpressure, not a backend-health signal, so it never triggers failover. The
    delay before retry ``n`` (0, 1, ...) is ``Retry-After`` x 1000 ms when the answer carries it,
    otherwise ``min(cap_ms, base_ms * 2**n)``; either way jittered by +/-20%.

    ``max_attempts``: ``None`` selects the default, 10 attempts for ordinary requests and unbounded
    for long-poll pops (``wait=True``), whose loop is unbounded anyway. A positive value bounds both
    kinds; a negative value makes both unbounded.
    """

    max_attempts: Optional[int] = None
    base_ms: float = DEFAULT_429_BASE_MS
    cap_ms: float = DEFAULT_429_CAP_MS

    def __post_init__(self) -> None:
        if self.max_attempts == 0:
            raise ValueError("Retry429.max_attempts must be None, positive, or negative (unbounded)")
        if self.base_ms <= 0 or self.cap_ms <= 0:
            raise ValueError("Retry429.base_ms and cap_ms must be positive")

    def budget(self, long_poll: bool) -> Optional[int]:
        """The attempt budget for one request; ``None`` means unbounded."""
        if self.max_attempts is not None:
            return self.max_attempts if self.max_attempts > 0 else None
        return None if long_poll else DEFAULT_429_MAX_ATTEMPTS


@dataclass(frozen=True)
class Config:
    """The effective configuration of a client (defaults applied).

    ``retry_attempts`` and ``retry_delay_millis`` are layer one: 5xx answers and network failures
    (timeouts included) are attempted ``retry_attempts`` times in total, waiting
    ``retry_delay_millis * 2**(attempt-1)`` between attempts; the failing backend is marked
    unhealthy for ``health_retry_after_millis`` and the next URL is tried. Any 4xx ends the loop.
    """

    urls: Sequence[str]
    token: Optional[str] = None
    retry_attempts: int = DEFAULT_RETRY_ATTEMPTS
    retry_delay_millis: float = DEFAULT_RETRY_DELAY_MILLIS
    retry_429: Retry429 = field(default_factory=Retry429)
    timeout_millis: float = DEFAULT_TIMEOUT_MILLIS
    health_retry_after_millis: float = DEFAULT_HEALTH_RETRY_AFTER_MILLIS
    headers: Dict[str, str] = field(default_factory=dict)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("queen_client"))

