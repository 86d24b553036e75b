"""Exceptions raised by the Queen client.

Branch on the exception type, :attr:`APIError.status` and :attr:`APIError.code`; never on the
message text, which may change. The codes are a contract.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class QueenError(Exception):
    """Base class of every error this package raises."""


class APIError(QueenError):
    """A non-2xx answer from the broker or the proxy in front of it.

    ``code`` is the envelope's machine-readable ``code`` (``rate_limited``, ``quota_exceeded``,
    ``payload_too_large``, ``no_such_route``, ...) or ``None`` when the body carried none.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: Optional[str] = None,
        retry_after: Optional[float] = None,
        method: str = "",
        url: str = "",
        body: Any = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        #: Parsed ``Retry-After`` of a 429, in seconds (``None`` when absent).
        self.retry_after = retry_after
        self.method = method
        self.url = url
        #: The decoded JSON body when there was one.
        self.body = body
        text = f"queen: {method} {url}: {status}"
        if code:
            text += f" [{code}]"
        if message:
            text += f": {message}"
        super().__init__(text)

    @property
    def terminal(self) -> bool:
        """True when retrying the same request cannot help: every 4xx except 429."""
        return 400 <= self.status < 500 and self.status != 429


class BadRequestError(APIError):
    """400: the request is malformed."""


class UnauthorizedError(APIError):
    """401: missing, unknown or expired credential. Fix the credential."""


class ForbiddenError(APIError):
    """403: a permission, a quota, a suspension or a gated feature. Terminal: do not retry."""


class NotFoundError(APIError):
    """404: an unknown object, or a route the server does not have (``code == "no_such_route"``)."""


class PayloadTooLargeError(APIError):
    """413: an item, a batch or a body over a size limit. Reshape the request; do not retry."""


class RateLimitedError(APIError):
    """429 that outlived the in-place retry budget (layer two). Not terminal: back off and retry."""


class ServerError(APIError):
    """5xx that outlived the layer-one retries and failover."""


_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    413: PayloadTooLargeError,
    429: RateLimitedError,
}


def api_error_class(status: int) -> Type[APIError]:
    """The :class:`APIError` subclass raised for ``status``."""
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, APIError)


class TransportError(QueenError):
    """A request that never produced an HTTP response (refused, reset, timed out) on its last attempt."""

    def __init__(self, method: str, url: str, cause: BaseException) -> None:
        self.method = method
        self.url = url
        self.cause = cause
        super().__init__(f"queen: {method} {url}: transport: {cause!r}")


class MalformedResponseError(QueenError):
    """A response the client refuses to interpret: a per-item result list of the wrong length, an
    item whose index or transaction id does not line up with the request, or a body that is not the
    JSON the route documents. A result is never attributed to the wrong message."""


class AckError(QueenError):
    """A rejected acknowledgement: HTTP 200 with ``success: false`` on the item. The cursor did not
    move and the message will be redelivered."""

    def __init__(self, index: int, transaction_id: str, reason: str, result: Any = None) -> None:
        self.index = index
        self.transaction_id = transaction_id
        self.reason = reason
        self.result = result
        super().__init__(f"queen: ack {index} (transaction {transaction_id}) rejected: {reason}")


class TransactionError(QueenError):
    """A transaction the broker rolled back (HTTP 200 with ``success: false``); nothing was applied.

    ``code`` is ``"QDUP"`` (duplicate push), ``"QTXN"`` (rejected ack) or ``None``.
    """

    def __init__(self, transaction_id: str, code: Optional[str], message: str, result: Any = None) -> None:
        self.transaction_id = transaction_id
        self.code = code
        self.message = message
        self.result = result
        super().__init__(f"queen: transaction {transaction_id} rolled back: {message}")


class LeaseLostError(QueenError):
    """A lease that is unknown, expired or no longer active: its messages are (or will be) redelivered."""


class ProducerClosedError(QueenError):
    """Raised by a buffered producer after ``close()``."""


def is_terminal(err: BaseException) -> bool:
    """True for an :class:`APIError` that retrying cannot fix (4xx other than 429)."""
    return isinstance(err, APIError) and err.terminal
