package httpapi_test

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncryptedQueue checks that an encrypted queue stores ciphertext while every read returns plaintext.
func TestEncryptedQueue(t *testing.T) {
	t.Parallel()
	key := hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	rb := setup(t, map[string]string{"QUEEN_ENCRYPTION_KEY": key}).rb
	a := newAPI(t, rb.URL)
	db := openDB(t, rb.DatabaseURL)
	configure(t, a, map[string]any{"queue": "secret", "namespace": "billing", "task": "invoice", "options": map[string]any{"encryptionEnabled": true}})
	payload := map[string]any{"card": "4111-1111", "amount": 42}
	res := a.push(pushItem{Queue: "secret", Payload: payload, TransactionID: "tx-1"}, pushItem{Queue: "secret", Payload: payload, TransactionID: "tx-2"})

	var raw []byte
	var enc bool
	require.NoError(t, db.QueryRow(t.Context(), `SELECT payload, is_encrypted FROM queenmq.messages WHERE transaction_id = 'tx-1'`).Scan(&raw, &enc))
	require.True(t, enc)
	require.NotContains(t, string(raw), "4111")
	var sealed map[string]string
	require.NoError(t, json.Unmarshal(raw, &sealed))
	require.Len(t, sealed, 3)
	for _, k := range []string{"encrypted", "iv", "authTag"} {
		require.NotEmpty(t, sealed[k], k)
	}
	want := mustJSON(t, payload)

	var msg map[string]any
	a.json("GET", "/api/v1/messages/"+res[0].PartitionID+"/tx-1", nil, http.StatusOK, &msg)
	require.JSONEq(t, want, mustJSON(t, msg["payload"]))
	require.Equal(t, true, msg["isEncrypted"])

	st, body := a.do("POST", "/api/v1/traces", map[string]any{"transactionId": "tx-1", "partitionId": res[0].PartitionID,
		"data": map[string]int{"x": 1}, "traceNames": []string{"sec"}})
	require.Equal(t, http.StatusCreated, st, string(body))
	var byName struct {
		Traces []struct {
			Payload json.RawMessage `json:"message_payload"`
		} `json:"traces"`
	}
	a.json("GET", "/api/v1/traces/by-name/sec", nil, http.StatusOK, &byName)
	require.Len(t, byName.Traces, 1)
	require.JSONEq(t, want, string(byName.Traces[0].Payload))

	got := a.pop("/api/v1/pop/queue/secret?batch=2")
	require.Len(t, got.Messages, 2)
	for _, m := range got.Messages {
		require.JSONEq(t, want, string(m.Data))
	}

	// One push alternating between the encrypted queue and a plain one seals exactly the former's rows.
	a.push(pushItem{Queue: "secret", Payload: payload, TransactionID: "mix-1"}, pushItem{Queue: "plain", Payload: payload, TransactionID: "mix-2"},
		pushItem{Queue: "plain", Payload: payload, TransactionID: "mix-3"}, pushItem{Queue: "secret", Payload: payload, TransactionID: "mix-4"})
	for tx, sealedWant := range map[string]bool{"mix-1": true, "mix-2": false, "mix-3": false, "mix-4": true} {
		require.NoError(t, db.QueryRow(t.Context(), `SELECT payload, is_encrypted FROM queenmq.messages WHERE transaction_id = $1`, tx).Scan(&raw, &enc))
		require.Equal(t, sealedWant, enc, tx)
		require.Equal(t, sealedWant, !strings.Contains(string(raw), "4111"), tx)
	}
}

// TestEncryptedQueueNeedsKey: a broker without a key refuses to start on a database holding an
// encrypted queue.
func TestEncryptedQueueNeedsKey(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	rb := setup(t, map[string]string{"QUEEN_ENCRYPTION_KEY": key}).rb
	configure(t, newAPI(t, rb.URL), map[string]any{"queue": "secret", "namespace": "billing", "task": "invoice", "options": map[string]any{"encryptionEnabled": true}})
	_, err := startBrokerErr(t, rb.DatabaseURL)
	require.ErrorContains(t, err, "QUEEN_ENCRYPTION_KEY")
}

// TestEncryptedQueueTransactionPush: a push inside a transaction is sealed like a plain push.
func TestEncryptedQueueTransactionPush(t *testing.T) {
	t.Parallel()
	key := hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	rb := setup(t, map[string]string{"QUEEN_ENCRYPTION_KEY": key}).rb
	a := newAPI(t, rb.URL)
	db := openDB(t, rb.DatabaseURL)
	configure(t, a, map[string]any{"queue": "secret", "namespace": "billing", "task": "invoice", "options": map[string]any{"encryptionEnabled": true}})
	payload := map[string]any{"card": "4111-1111"}
	res := a.tx(map[string]any{"type": "push", "items": []map[string]any{
		{"queue": "secret", "payload": payload, "transactionId": "tx-in-txn"}}})
	require.True(t, res.Success, res.Error)

	var raw []byte
	var enc bool
	require.NoError(t, db.QueryRow(t.Context(), `SELECT payload, is_encrypted FROM queenmq.messages WHERE transaction_id = 'tx-in-txn'`).Scan(&raw, &enc))
	require.True(t, enc)
	require.NotContains(t, string(raw), "4111")
	got := a.pop("/api/v1/pop/queue/secret")
	require.Len(t, got.Messages, 1)
	require.JSONEq(t, mustJSON(t, payload), string(got.Messages[0].Data))
}
