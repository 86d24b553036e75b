package httpapi

// ComparePushCodecs runs the push route's own body reader and answer writer against encoding/json,
// and the reader's single pass against guardBody and the reader by grammar alone, on one input (the
// fuzz target of the push route calls it on every body it sends).
func ComparePushCodecs(b []byte) error {
	if _, err := comparePushDecoders(b); err != nil {
		return err
	}
	if err := compareSinglePass(b); err != nil {
		return err
	}
	return comparePushEncoders(pushResultsOf(string(b)))
}

// ComparePopEncoders runs the pop answer's writer against json.Marshal on an answer with b as a
// payload and as every text field (the push route's fuzz target calls it on every body it sends).
func ComparePopEncoders(b []byte) error {
	_, err := comparePopEncoders(popResultOf(string(b), b))
	return err
}

// CompareAckReaders runs the ack routes' own reader against encoding/json on one body (the ack
// routes' fuzz target calls it on every body it sends).
func CompareAckReaders(b []byte) error {
	_, err := compareAckReaders(b)
	return err
}

// CompareQueryCheck runs the query string check against url.ParseQuery on one query (the pop
// route's fuzz target calls it on every query it sends).
func CompareQueryCheck(raw string) error { return compareQueryCheck(raw) }
