package store

// segmentBytes caps the payload bytes one MessageInsert statement carries. The driver encodes a
// statement's jsonb[] parameter and then its protocol message, each a copy of every payload in it, so
// one statement for a whole large push would hold three copies of the body at once; statements of at
// most segmentBytes keep those two copies small whatever the body size (docs/decisions.md "Memory
// bound"). Pushes up to it, nearly all of them, stay one statement in one round trip.
const segmentBytes = 4 << 20

// segments splits the rows at keep (the push's rows minus repeated transactionIds) into the indices of
// consecutive statements of at most segmentBytes of payload each (one larger payload is a statement of
// its own); one segment when one statement takes it all. The statements run in order in one
// transaction, each numbering its rows after the last_seq the previous one left.
func segments(rows []PushRow, keep []int32) [][]int32 {
	total := 0
	for _, i := range keep {
		total += len(rows[i].Payload)
	}
	if total <= segmentBytes {
		return [][]int32{keep}
	}
	var out [][]int32
	var cur []int32
	size := 0
	for _, i := range keep {
		r := &rows[i]
		if len(cur) > 0 && size+len(r.Payload) > segmentBytes {
			out, cur, size = append(out, cur), nil, 0
		}
		cur = append(cur, i)
		size += len(r.Payload)
	}
	return append(out, cur)
}
