package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func encodeFrames(recs ...[]byte) []byte {
	var b []byte
	for _, r := range recs {
		b = appendFrame(b, r)
	}
	return b
}

// decodeAll runs a frameReader over data and returns the records and the
// error that ended the stream.
func decodeAll(data []byte, max int) ([][]byte, int64, error) {
	fr := newFrameReader(bytes.NewReader(data), 0, int64(len(data)), max)
	var recs [][]byte
	for {
		rec, err := fr.next()
		if err != nil {
			return recs, fr.off, err
		}
		recs = append(recs, rec)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	recs := [][]byte{[]byte("a"), []byte(`{"x":1}`), bytes.Repeat([]byte{0xff}, 1000)}
	data := encodeFrames(recs...)
	got, off, err := decodeAll(data, 1<<20)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, recs, got)
	require.Equal(t, int64(len(data)), off)
}

func TestFrameRejectsCorruption(t *testing.T) {
	good := encodeFrames([]byte("first"))
	cases := map[string][]byte{
		"zero-filled tail": append(bytes.Clone(good), make([]byte, 64)...),
		"absurd length":    append(bytes.Clone(good), binary.LittleEndian.AppendUint32(nil, 1<<31)...),
		"over limit":       append(bytes.Clone(good), encodeFrames(bytes.Repeat([]byte("x"), 2000))...),
		"partial header":   append(bytes.Clone(good), 1, 0, 0),
		"bad checksum":     append(bytes.Clone(good), 3, 0, 0, 0, 1, 2, 3, 4, 'a', 'b', 'c'),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			got, off, err := decodeAll(data, 1000)
			require.ErrorIs(t, err, errTorn)
			require.Equal(t, [][]byte{[]byte("first")}, got)
			require.Equal(t, int64(len(good)), off)
		})
	}
}

// FuzzDecode checks that the frame reader never panics, never reads past
// the end it was given, and that whatever it accepts is exactly a prefix of
// the input made of well-formed frames.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(encodeFrames([]byte("hello")))
	f.Add(encodeFrames([]byte("a"), []byte("bb"), []byte(`{"transactionId":"t1"}`)))
	full := encodeFrames([]byte("one"), []byte("two"))
	f.Add(full[:len(full)-1])
	f.Add(full[:5])
	f.Add(make([]byte, 32))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	flipped := bytes.Clone(full)
	flipped[9] ^= 0x40
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, off, err := decodeAll(data, 1<<16)
		if !errors.Is(err, io.EOF) && !errors.Is(err, errTorn) {
			t.Fatalf("unexpected error: %v", err)
		}
		if errors.Is(err, io.EOF) && off != int64(len(data)) {
			t.Fatalf("clean EOF at %d of %d", off, len(data))
		}
		if off > int64(len(data)) {
			t.Fatalf("offset %d past end %d", off, len(data))
		}
		if !bytes.Equal(encodeFrames(recs...), data[:off]) {
			t.Fatalf("accepted records do not re-encode to the consumed prefix")
		}
	})
}
