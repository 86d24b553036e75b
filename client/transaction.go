package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// Transaction collects acknowledgements and pushes that the broker applies atomically
// (POST /api/v1/transaction): all of them commit, or none do.
//
//	_, err := c.Transaction().
//		Ack(msg).
//		Queue("next").Partition(msg.Partition).Push(client.Payload(out)).
//		Commit(ctx)
//
// A Transaction is not safe for concurrent use.
type Transaction struct {
	c   *Client
	ops []any
	err error
}

// Transaction starts an empty transaction.
func (c *Client) Transaction() *Transaction { return &Transaction{c: c} }

// Ack adds a completed acknowledgement of m.
func (t *Transaction) Ack(m Message) *Transaction { return t.AckWith(Completed(m)) }

// AckWith adds an arbitrary acknowledgement. Inside a transaction a failed ack uses the same retry
// budget as [Client.Ack]; "retry" is not allowed and rolls the transaction back.
func (t *Transaction) AckWith(a Ack) *Transaction {
	if a.TransactionID == "" || a.PartitionID == "" {
		t.err = errors.Join(t.err, errors.New("queen: transaction ack needs TransactionID and PartitionID"))
	}
	w := a.wire()
	if w.ConsumerGroup == "" {
		w.ConsumerGroup = QueueMode
	}
	t.ops = append(t.ops, struct {
		Type string `json:"type"`
		wireAck
	}{"ack", w})
	return t
}

// TxQueue is the push target of a transaction; see [Transaction.Queue].
type TxQueue struct {
	t *Transaction
	q Queue
}

// Queue selects the queue the next Push of this transaction goes to.
func (t *Transaction) Queue(name string) *TxQueue {
	return &TxQueue{t: t, q: Queue{c: t.c, name: name}}
}

// Partition selects the partition for the next Push.
func (tq *TxQueue) Partition(name string) *TxQueue { tq.q.partition = name; return tq }

// Push adds items to the transaction and returns it for chaining. As with [Queue.Push], an item
// without a TransactionID gets a generated one.
func (tq *TxQueue) Push(items ...PushItem) *Transaction {
	tq.t.ops = append(tq.t.ops, map[string]any{"type": "push", "items": tq.q.wireItems(items)})
	return tq.t
}

// TxResult is one operation's result in a committed transaction.
type TxResult struct {
	Index         int     `json:"index"`
	Type          string  `json:"type"`
	Success       bool    `json:"success"`
	TransactionID string  `json:"transactionId"`
	MessageID     string  `json:"messageId"`
	PartitionID   string  `json:"partitionId"`
	QueueName     string  `json:"queueName"`
	Error         *string `json:"error"`
	DLQ           bool    `json:"dlq"`
}

// TransactionResult is the answer to a committed transaction.
type TransactionResult struct {
	TransactionID string     `json:"transactionId"` // the broker's id for this transaction
	Success       bool       `json:"success"`       // false: rolled back (Commit returns a *TransactionError)
	Error         string     `json:"error"`         // the rollback reason, "QDUP …" or "QTXN …"
	Results       []TxResult `json:"results"`       // one per operation (per pushed item) when committed
}

// Commit sends the transaction. A rollback (HTTP 200 with success:false) is returned as a
// [*TransactionError] whose Code is "QDUP" (duplicate push) or "QTXN" (rejected ack); nothing was
// applied. An empty transaction is an error.
//
// Like every request, a commit that fails with a 5xx or a network error is retried. If the first
// attempt did commit and only its answer was lost, the retry reports QDUP for the pushes it
// already made: give pushed items your own deterministic TransactionID and treat QDUP as
// "already done".
func (t *Transaction) Commit(ctx context.Context) (TransactionResult, error) {
	if t.err != nil {
		return TransactionResult{}, t.err
	}
	if len(t.ops) == 0 {
		return TransactionResult{}, errors.New("queen: empty transaction")
	}
	var out TransactionResult
	var raw json.RawMessage
	if err := t.c.call(ctx, request{method: http.MethodPost, path: "/api/v1/transaction",
		body: map[string]any{"operations": t.ops}}, &raw); err != nil {
		return TransactionResult{}, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return TransactionResult{}, malformed("transaction: %v", err)
	}
	if !out.Success {
		code, _, _ := strings.Cut(out.Error, " ")
		if code != "QDUP" && code != "QTXN" {
			code = ""
		}
		if out.Error == "" {
			out.Error = "rolled back without an error text"
		}
		return out, &TransactionError{TransactionID: out.TransactionID, Code: code, Message: out.Error}
	}
	return out, nil
}
