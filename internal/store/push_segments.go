package store

// segmentBytes caps the payload bytes one MessageInsert statement carries. The driver encodes a
// statement's jsonb[] parameter and then its protocol message, each a copy of every payload in it, so
// one statement for a whole large push would hold three copies of the body at once; statements of at
// most segmentBytes keep those two copies small whatever the body size (docs/decisions.md "Memory
// bound"). Pushes up to it, nearly all of them, stay one statement in one round trip.
const segmentBytes = 4 << 20

// segments splits a push whose payloads exceed segmentBytes into the row indices of consecutive
// statements of at most segmentBytes each (one larger payload is a statement of its own); nil when one
// statement takes it all. The statements run in order in one transaction, each numbering its rows
// after the last_seq the previous one left. A row repeating a transactionId of an earlier row of its
// partition is left out, as the single statement's DISTINCT ON leaves it out before numbering, so it
// takes no sequence number and is answered as a duplicate of that first row.
func segments(rows []PushRow) [][]int32 {
	total := 0
	for _, r := range rows {
		total += len(r.Payload)
	}
	if total <= segmentBytes {
		return nil
	}
	type key struct {
		partition [16]byte
		tx        string
	}
	seen := make(map[key]struct{}, len(rows))
	var out [][]int32
	var cur []int32
	size := 0
	for i, r := range rows {
		k := key{r.PartitionID, r.TransactionID}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		if len(cur) > 0 && size+len(r.Payload) > segmentBytes {
			out, cur, size = append(out, cur), nil, 0
		}
		cur = append(cur, int32(i))
		size += len(r.Payload)
	}
	return append(out, cur)
}

// gather picks the elements of v at the given indices.
func gather[T any](v []T, at []int32) []T {
	out := make([]T, len(at))
	for j, i := range at {
		out[j] = v[i]
	}
	return out
}
