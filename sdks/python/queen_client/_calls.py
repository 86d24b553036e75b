"""Every API call as a :class:`Call` (request + decoder), shared by the sync and asyncio clients."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ._core import Call, Request, Response, done, seg
from .errors import APIError, LeaseLostError, MalformedResponseError, TransactionError
from .types import (
    QUEUE_MODE,
    QUEUE_OPTIONS,
    Ack,
    AckResult,
    AckTarget,
    DLQMessage,
    DLQPage,
    LeaseResult,
    Message,
    PushItem,
    PushResult,
    TransactionResult,
    parse_time,
    to_ack,
)

def camel_options(opts: Dict[str, Any]) -> Dict[str, Any]:
    """Queue options accept snake_case (``lease_time``) or the wire's camelCase (``leaseTime``)."""
    return {QUEUE_OPTIONS.get(k, k): v for k, v in opts.items()}


def iso(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(resp: Response, what: str) -> Any:
    try:
        return resp.json()
    except ValueError as e:
        raise MalformedResponseError(f"queen: {what}: {e}") from None


def _list(resp: Response, what: str) -> List[Dict[str, Any]]:
    body = _json(resp, what)
    if not isinstance(body, list) or not all(isinstance(x, dict) for x in body):
        raise MalformedResponseError(f"queen: {what}: expected a JSON array of objects, got {str(body)[:200]}")
    return body


def _dict(resp: Response, what: str) -> Dict[str, Any]:
    body = _json(resp, what)
    if not isinstance(body, dict):
        raise MalformedResponseError(f"queen: {what}: expected a JSON object, got {str(body)[:200]}")
    return body


@dataclass(frozen=True)
class QueueSpec:
    """The immutable addressing state of a queue builder."""

    name: str = ""
    partition: str = ""
    group: str = ""
    subscription_mode: str = ""
    subscription_from: str = ""
    namespace: str = ""
    task: str = ""
    options: Optional[Dict[str, Any]] = None

    def with_(self, **kw: Any) -> "QueueSpec":
        return replace(self, **kw)

    @staticmethod
    def matching(namespace: str, task: str) -> "QueueSpec":
        """A consume-only address over every queue of a namespace and/or task."""
        if not namespace and not task:
            raise ValueError("queen: matching needs a namespace or a task")
        return QueueSpec(namespace=namespace, task=task)


# ---- push ----

ItemLike = Union[PushItem, Any]


def wire_items(spec: QueueSpec, items: Iterable[ItemLike]) -> List[Dict[str, Any]]:
    out = []
    for it in items:
        if not isinstance(it, PushItem):
            it = PushItem(payload=it)
        w: Dict[str, Any] = {
            "queue": spec.name,
            "payload": it.payload,
            "transactionId": it.transaction_id or str(uuid.uuid4()),
        }
        if spec.partition:
            w["partition"] = spec.partition
        if it.trace_id:
            w["traceId"] = it.trace_id
        out.append(w)
    return out


def push(items: List[Dict[str, Any]]) -> "Call[List[PushResult]]":
    def decode(resp: Response) -> List[PushResult]:
        raw = _list(resp, "push")
        if len(raw) != len(items):
            raise MalformedResponseError(f"queen: push of {len(items)} items answered {len(raw)} results")
        out = []
        for i, r in enumerate(raw):
            if r.get("index") != i:
                raise MalformedResponseError(f"queen: push result {i} carries index {r.get('index')!r}")
            tx = r.get("transaction_id") or r.get("transactionId") or ""
            sent = items[i]["transactionId"]
            if tx and tx != sent:
                raise MalformedResponseError(f"queen: push result {i} is for transaction {tx!r}, sent {sent!r}")
            out.append(
                PushResult(
                    index=i,
                    transaction_id=tx or sent,
                    status=r.get("status", ""),
                    message_id=r.get("message_id"),
                    partition_id=r.get("partition_id"),
                    trace_id=r.get("trace_id"),
                    queue_name=r.get("queueName"),
                    error=r.get("error"),
                )
            )
        return out

    return Call(Request("POST", "/api/v1/push", body={"items": items}), decode)


def push_batch(spec: QueueSpec, items: Iterable[ItemLike]) -> "Call[List[PushResult]]":
    """Pushes many messages to the addressed queue; an empty batch is answered without a request."""
    if not spec.name:
        raise ValueError("queen: push needs a queue name")
    wire = wire_items(spec, items)
    return push(wire) if wire else done([])


def push_one(spec: QueueSpec, item: ItemLike, transaction_id: Optional[str], trace_id: Optional[str]) -> "Call[PushResult]":
    if not isinstance(item, PushItem):
        item = PushItem(item, transaction_id, trace_id)
    return push_batch(spec, [item]).then(lambda results: results[0])


# ---- pop ----


def pop(
    spec: QueueSpec,
    *,
    batch: Optional[int] = None,
    wait: bool = False,
    timeout_millis: Optional[float] = None,
    partitions: Optional[int] = None,
    auto_ack: bool = False,
    request_timeout_millis: float = 30000,
) -> "Call[List[Message]]":
    q: Dict[str, str] = {}
    if not spec.name and (spec.namespace or spec.task):
        path = "/api/v1/pop"
        if spec.namespace:
            q["namespace"] = spec.namespace
        if spec.task:
            q["task"] = spec.task
    else:
        path = "/api/v1/pop/queue/" + seg(spec.name)
        if spec.partition:
            path += "/partition/" + seg(spec.partition)
    if batch:
        q["batch"] = str(int(batch))
    if partitions:
        q["partitions"] = str(int(partitions))
    req = Request("GET", path, query=q)
    if wait:
        q["wait"] = "true"
        req.long_poll = True
        req.timeout_millis = (timeout_millis or 30000) + request_timeout_millis
    if timeout_millis:
        q["timeout"] = str(int(timeout_millis))
    if spec.group:
        q["consumerGroup"] = spec.group
    if auto_ack:
        q["autoAck"] = "true"
    if spec.subscription_mode:
        q["subscriptionMode"] = spec.subscription_mode
    if spec.subscription_from:
        q["subscriptionFrom"] = spec.subscription_from

    def decode(resp: Response) -> List[Message]:
        # An empty pop is a 204 with no body: "nothing to consume", never an error.
        if resp.status == 204 or not resp.content:
            return []
        body = _dict(resp, "pop")
        msgs = body.get("messages") or []
        if not msgs:
            err = body.get("error")
            if not body.get("success", True) and err and err not in (
                "no_available_partition", "lease_held", "partition_not_found"
            ):
                raise APIError(resp.status, str(err), method="GET", url=path, body=body)
            return []
        out = []
        for w in msgs:
            if not isinstance(w, dict):
                raise MalformedResponseError("queen: pop: a message is not an object")
            lease = w.get("leaseId") or (None if auto_ack else body.get("leaseId"))
            out.append(
                Message(
                    id=w.get("id", ""),
                    transaction_id=w.get("transactionId", ""),
                    data=w.get("data"),
                    partition_id=w.get("partitionId", ""),
                    queue=w.get("queue") or body.get("queue") or spec.name,
                    partition=w.get("partition", ""),
                    lease_id=lease,
                    consumer_group=w.get("consumerGroup") or body.get("consumerGroup") or "",
                    trace_id=w.get("traceId"),
                    producer_sub=w.get("producerSub"),
                    created_at=parse_time(w.get("createdAt"), "pop createdAt"),
                    retry_count=int(w.get("retryCount") or 0),
                )
            )
        return out

    return Call(req, decode)


# ---- ack and lease ----


def _ack_results(sent: Sequence[Ack], raw: List[Dict[str, Any]]) -> List[AckResult]:
    """Refuses an ack response that cannot be matched item by item to the request."""
    if len(raw) != len(sent):
        raise MalformedResponseError(f"queen: {len(sent)} acknowledgements answered with {len(raw)} results")
    out = []
    for i, r in enumerate(raw):
        if r.get("index") != i:
            raise MalformedResponseError(f"queen: ack result {i} carries index {r.get('index')!r}")
        tx = r.get("transactionId") or ""
        if tx and tx != sent[i].transaction_id:
            raise MalformedResponseError(
                f"queen: ack result {i} is for transaction {tx!r}, sent {sent[i].transaction_id!r}"
            )
        if not isinstance(r.get("success"), bool):
            raise MalformedResponseError(f"queen: ack result {i} has no boolean success")
        out.append(
            AckResult(
                index=i,
                transaction_id=tx or sent[i].transaction_id,
                success=r["success"],
                error=r.get("error"),
                queue_name=r.get("queueName"),
                partition_name=r.get("partitionName"),
                lease_released=bool(r.get("leaseReleased")),
                dlq=bool(r.get("dlq")),
                noop=bool(r.get("noop")),
            )
        )
    return out


def ack(target: AckTarget, status: Optional[str] = None, error: Optional[str] = None) -> "Call[AckResult]":
    a = to_ack(target, status, error)

    def decode(resp: Response) -> AckResult:
        return _ack_results([a], _list(resp, "ack"))[0].check()

    return Call(Request("POST", "/api/v1/ack", body=a.wire()), decode)


def ack_batch(targets: Sequence[AckTarget], status: Optional[str] = None) -> "Call[List[AckResult]]":
    """One request for many acknowledgements of one consumer group; none is answered without a request."""
    acks = [to_ack(t, status) for t in targets]
    if not acks:
        return done([])

    def group_of(a: Ack) -> str:
        return a.consumer_group or QUEUE_MODE

    group = group_of(acks[0])
    items = []
    for i, a in enumerate(acks):
        if group_of(a) != group:
            raise ValueError(f"queen: ack batch mixes consumer groups {group!r} and {group_of(a)!r}")
        w = a.wire()
        w.pop("consumerGroup", None)
        items.append(w)

    def decode(resp: Response) -> List[AckResult]:
        return _ack_results(acks, _list(resp, "ack batch"))

    return Call(Request("POST", "/api/v1/ack/batch", body={"acknowledgments": items, "consumerGroup": group}), decode)


def _missing(e: APIError) -> bool:
    """A 404 about an addressed object, as opposed to a route the server lacks."""
    return e.status == 404 and e.code != "no_such_route"


def extend_lease(lease: Union[str, Message], seconds: float) -> "Call[LeaseResult]":
    held = lease.lease_id if isinstance(lease, Message) else lease
    if not held:
        raise ValueError("queen: extend_lease needs a lease id")
    lease_id: str = held
    secs = max(int(-(-seconds // 1)), 1)

    def decode(resp: Response) -> LeaseResult:
        raw = _list(resp, "lease extend")
        if len(raw) != 1 or raw[0].get("index") != 0 or (raw[0].get("leaseId") not in (None, "", lease_id)):
            raise MalformedResponseError(f"queen: lease extend of {lease_id} answered {len(raw)} results")
        r = LeaseResult(
            lease_id=lease_id,
            success=bool(raw[0].get("success")),
            expires_at=parse_time(raw[0].get("expiresAt"), "lease expiresAt"),
            error=raw[0].get("error"),
        )
        if not r.success:
            raise LeaseLostError(f"queen: lease {lease_id} lost: {r.error}")
        return r

    def on_error(e: APIError) -> LeaseResult:
        if _missing(e):
            raise LeaseLostError(f"queen: lease {lease_id} lost: {e.message}") from e
        raise e

    return Call(Request("POST", "/api/v1/lease/" + seg(lease_id) + "/extend", body={"seconds": secs}), decode, on_error)


# ---- transaction ----


def transaction(ops: List[Dict[str, Any]]) -> "Call[TransactionResult]":
    def decode(resp: Response) -> TransactionResult:
        body = _dict(resp, "transaction")
        res = TransactionResult(
            transaction_id=body.get("transactionId") or "",
            success=bool(body.get("success")),
            error=body.get("error"),
            results=body.get("results") or [],
        )
        if not res.success:
            text = res.error or "rolled back without an error text"
            code = text.split(" ", 1)[0]
            raise TransactionError(res.transaction_id, code if code in ("QDUP", "QTXN") else None, text, res)
        return res

    return Call(Request("POST", "/api/v1/transaction", body={"operations": ops}), decode)


# ---- queues ----


def configure(spec: QueueSpec) -> "Call[Dict[str, Any]]":
    body: Dict[str, Any] = {"queue": spec.name, "options": camel_options(spec.options or {})}
    if spec.namespace:
        body["namespace"] = spec.namespace
    if spec.task:
        body["task"] = spec.task
    return Call(Request("POST", "/api/v1/configure", body=body), lambda r: _dict(r, "configure"))


def queue_options(name: str) -> "Call[Dict[str, Any]]":
    """The queue's configuration read back with every option, snake_case keys (``config()`` takes it)."""

    def decode(r: Response) -> Dict[str, Any]:
        cfg = (_dict(r, "queue options").get("queue") or {}).get("config")
        if not isinstance(cfg, dict):
            raise MalformedResponseError("queen: queue options: the answer has no queue.config")
        missing = [wire for wire in QUEUE_OPTIONS.values() if wire not in cfg]
        if missing:
            raise MalformedResponseError(f"queen: queue options: the answer lacks {', '.join(missing)}")
        return {snake: cfg[wire] for snake, wire in QUEUE_OPTIONS.items()}

    return Call(Request("GET", "/api/v1/status/queues/" + seg(name)), decode)


def queue_info(name: str) -> "Call[Dict[str, Any]]":
    return get_dict("/api/v1/resources/queues/" + seg(name))


def delete_queue(name: str) -> "Call[bool]":
    def on_error(e: APIError) -> bool:
        if _missing(e):
            return False
        raise e

    return Call(
        Request("DELETE", "/api/v1/resources/queues/" + seg(name)),
        lambda r: bool(_dict(r, "delete queue").get("existed", True)),
        on_error,
    )


def _get_request(path: str, query: Optional[Dict[str, Any]]) -> Request:
    q = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in (query or {}).items() if v is not None}
    if not path.startswith("/"):
        path = "/" + path
    return Request("GET", path, query=q or None)


def get(path: str, query: Optional[Dict[str, Any]] = None) -> "Call[Any]":
    """A GET whose answer is returned as decoded JSON, whatever its shape."""
    return Call(_get_request(path, query), lambda r: _json(r, path))


def get_dict(path: str, query: Optional[Dict[str, Any]] = None) -> "Call[Dict[str, Any]]":
    """A GET whose answer must be a JSON object."""
    return Call(_get_request(path, query), lambda r: _dict(r, path))


def get_list(path: str, query: Optional[Dict[str, Any]] = None) -> "Call[List[Dict[str, Any]]]":
    """A GET whose answer must be a JSON array of objects."""
    return Call(_get_request(path, query), lambda r: _list(r, path))


def send(method: str, path: str, body: Any = None, query: Optional[Dict[str, str]] = None) -> "Call[Dict[str, Any]]":
    """A write whose answer is a JSON object (or nothing, returned as ``{}``)."""
    return Call(Request(method, path, query=query, body=body), lambda r: _dict(r, path) if r.content else {})


# ---- administration and status ----


def queues() -> "Call[List[Dict[str, Any]]]":
    return get_dict("/api/v1/resources/queues").then(lambda body: body.get("queues") or [])


def consumer_groups() -> "Call[List[Dict[str, Any]]]":
    return get_list("/api/v1/consumer-groups")


def lagging_partitions(min_lag_seconds: int) -> "Call[List[Dict[str, Any]]]":
    return get_list("/api/v1/consumer-groups/lagging", {"minLagSeconds": int(min_lag_seconds)})


def maintenance() -> "Call[Dict[str, Any]]":
    return get_dict("/api/v1/system/maintenance")


def set_maintenance(enabled: bool) -> "Call[Dict[str, Any]]":
    return send("POST", "/api/v1/system/maintenance", {"enabled": bool(enabled)})


def pop_maintenance() -> "Call[Dict[str, Any]]":
    return get_dict("/api/v1/system/maintenance/pop")


def set_pop_maintenance(enabled: bool) -> "Call[Dict[str, Any]]":
    return send("POST", "/api/v1/system/maintenance/pop", {"enabled": bool(enabled)})


def status(
    from_: Optional[datetime], to: Optional[datetime], queue: Optional[str], namespace: Optional[str], task: Optional[str]
) -> "Call[Dict[str, Any]]":
    q = {"from": iso(from_) if from_ else None, "to": iso(to) if to else None,
         "queue": queue, "namespace": namespace, "task": task}
    return get_dict("/api/v1/status", q)


def status_queues() -> "Call[Any]":
    return get("/api/v1/status/queues")


def status_queue(queue: str) -> "Call[Dict[str, Any]]":
    return get_dict("/api/v1/status/queues/" + seg(queue))


def status_queue_messages(queue: str, limit: Optional[int], offset: Optional[int]) -> "Call[Any]":
    return get("/api/v1/status/queues/" + seg(queue) + "/messages", {"limit": limit, "offset": offset})


def health() -> "Call[Dict[str, Any]]":
    return get_dict("/health")


# ---- dead letters ----


def _dlq_message(d: Dict[str, Any]) -> DLQMessage:
    return DLQMessage(
        id=d.get("id", ""),
        transaction_id=d.get("transactionId", ""),
        partition_id=d.get("partitionId", ""),
        queue=d.get("queue", ""),
        partition=d.get("partition", ""),
        consumer_group=d.get("consumerGroup"),
        error_message=d.get("errorMessage"),
        retry_count=int(d.get("retryCount") or 0),
        data=d.get("data"),
        created_at=d.get("createdAt"),
        failed_at=d.get("failedAt"),
        producer_sub=d.get("producerSub"),
    )


def dlq(
    queue: Optional[str] = None,
    consumer_group: Optional[str] = None,
    partition: Optional[str] = None,
    from_: Optional[datetime] = None,
    to: Optional[datetime] = None,
    limit: Optional[int] = None,
    offset: Optional[int] = None,
) -> "Call[DLQPage]":
    q: Dict[str, str] = {}
    for k, v in (("queue", queue), ("consumerGroup", consumer_group), ("partition", partition)):
        if v:
            q[k] = v
    if from_:
        q["from"] = iso(from_)
    if to:
        q["to"] = iso(to)
    if limit:
        q["limit"] = str(limit)
    if offset:
        q["offset"] = str(offset)

    def decode(resp: Response) -> DLQPage:
        body = _dict(resp, "dlq")
        page = body.get("pagination") or {}
        return DLQPage(
            messages=[_dlq_message(m) for m in body.get("messages") or []],
            total=int(body.get("total") or 0),
            limit=int(page.get("limit") or 0),
            offset=int(page.get("offset") or 0),
        )

    return Call(Request("GET", "/api/v1/dlq", query=q or None), decode)


def dlq_path(partition_id: str, transaction_id: str) -> str:
    return "/api/v1/dlq/" + seg(partition_id) + "/" + seg(transaction_id)


def dlq_message(partition_id: str, transaction_id: str) -> "Call[DLQMessage]":
    return Call(Request("GET", dlq_path(partition_id, transaction_id)), lambda r: _dlq_message(_dict(r, "dlq message")))


def delete_dlq_message(partition_id: str, transaction_id: str) -> "Call[Dict[str, Any]]":
    return send("DELETE", dlq_path(partition_id, transaction_id))


def retry_dlq_message(partition_id: str, transaction_id: str) -> "Call[Dict[str, Any]]":
    return send("POST", dlq_path(partition_id, transaction_id) + "/retry", {})


# ---- consumer groups ----


def group_get(name: str) -> "Call[Dict[str, List[Dict[str, Any]]]]":
    def decode(resp: Response) -> Dict[str, List[Dict[str, Any]]]:
        body = _dict(resp, "consumer group")
        return {q: (v or {}).get("partitions") or [] for q, v in body.items()}

    def on_error(e: APIError) -> Dict[str, List[Dict[str, Any]]]:
        if _missing(e):
            return {}
        raise e

    return Call(Request("GET", group_path(name)), decode, on_error)


def group_path(name: str, *parts: str) -> str:
    return "/api/v1/consumer-groups/" + "/".join(seg(p) for p in (name,) + parts)


def group_delete(name: str, delete_metadata: bool) -> "Call[Dict[str, Any]]":
    return send("DELETE", group_path(name), query={"deleteMetadata": str(bool(delete_metadata)).lower()})


def group_delete_for_queue(name: str, queue: str, delete_metadata: bool) -> "Call[Dict[str, Any]]":
    return send("DELETE", group_path(name, "queues", queue), query={"deleteMetadata": str(bool(delete_metadata)).lower()})


def group_set_subscription(name: str, t: datetime) -> "Call[Dict[str, Any]]":
    return send("POST", group_path(name, "subscription"), {"subscriptionTimestamp": iso(t)})


def group_seek_to_end(name: str, queue: str) -> "Call[Dict[str, Any]]":
    return send("POST", group_path(name, "queues", queue, "seek"), {"toEnd": True})


def group_seek_to(name: str, queue: str, t: datetime) -> "Call[Dict[str, Any]]":
    return send("POST", group_path(name, "queues", queue, "seek"), {"timestamp": iso(t)})


def group_seek_partition_to_end(name: str, queue: str, partition: str) -> "Call[Dict[str, Any]]":
    return send("POST", group_path(name, "queues", queue, "partitions", partition, "seek"), {})
