package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// frameHeaderSize is the length prefix plus the checksum.
const frameHeaderSize = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn is matched (via errors.Is) by every error that marks the end of the
// readable prefix of a segment. It is not a failure: the records before it
// are valid and the rest of the segment is ignored.
var errTorn = errors.New("spool: torn frame")

type tornError struct {
	off    int64
	reason string
}

func (e *tornError) Error() string {
	return fmt.Sprintf("spool: torn frame at offset %d: %s", e.off, e.reason)
}

func (e *tornError) Is(target error) bool { return target == errTorn }

// appendFrame appends the encoded frame of rec to dst.
func appendFrame(dst, rec []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(rec)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(rec, castagnoli))
	return append(dst, rec...)
}

// frameReader decodes frames from a segment. It knows where the segment ends
// so that a corrupted length can be rejected before allocating a buffer for
// it, which keeps a garbage header from costing gigabytes of memory.
type frameReader struct {
	r     *bufio.Reader
	off   int64 // offset just past the last intact frame
	end   int64 // size of the segment
	max   int   // largest acceptable payload
	reuse bool  // return payloads in a reused buffer (counting only)
	buf   []byte
	err   error // sticky: once torn, always torn
	hdr   [frameHeaderSize]byte
}

// newFrameReader reads frames from r, which must be positioned at offset off
// of a segment that is end bytes long.
func newFrameReader(r io.Reader, off, end int64, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), off: off, end: end, max: max}
}

// next returns the next record. It returns io.EOF at a clean end of the
// segment, an error matching errTorn at a torn or corrupted frame, and any
// other error for real I/O failures.
func (fr *frameReader) next() ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	rec, err := fr.decode()
	if err != nil {
		fr.err = err
	}
	return rec, err
}

func (fr *frameReader) decode() ([]byte, error) {
	remain := fr.end - fr.off
	if remain <= 0 {
		return nil, io.EOF
	}
	if remain < frameHeaderSize {
		return nil, fr.torn("partial frame header")
	}
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return nil, fr.readErr(err)
	}
	n := binary.LittleEndian.Uint32(fr.hdr[0:4])
	sum := binary.LittleEndian.Uint32(fr.hdr[4:8])
	switch {
	case n == 0:
		return nil, fr.torn("zero length")
	case uint64(n) > uint64(fr.max):
		return nil, fr.torn(fmt.Sprintf("length %d exceeds limit %d", n, fr.max))
	case int64(n) > remain-frameHeaderSize:
		return nil, fr.torn(fmt.Sprintf("length %d exceeds the %d bytes left", n, remain-frameHeaderSize))
	}
	var payload []byte
	if fr.reuse {
		if cap(fr.buf) < int(n) {
			fr.buf = make([]byte, n)
		}
		payload = fr.buf[:n]
	} else {
		payload = make([]byte, n)
	}
	if _, err := io.ReadFull(fr.r, payload); err != nil {
		return nil, fr.readErr(err)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, fr.torn("checksum mismatch")
	}
	fr.off += frameHeaderSize + int64(n)
	return payload, nil
}

func (fr *frameReader) torn(reason string) error {
	return &tornError{off: fr.off, reason: reason}
}

// readErr classifies a read failure. Running out of bytes means the file is
// shorter than its size said, which is a tear like any other.
func (fr *frameReader) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fr.torn("unexpected end of file")
	}
	return fmt.Errorf("spool: read frame at offset %d: %w", fr.off, err)
}
