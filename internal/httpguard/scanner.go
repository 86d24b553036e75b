package httpguard

import (
	"bytes"
	"strconv"
)

// Verdict is what the scanner learnt about one request's head.
type Verdict uint8

const (
	// OK is a request framed by at most one of Content-Length and Transfer-Encoding.
	OK Verdict = iota
	// Conflict is a request with both, or with Transfer-Encoding on HTTP/1.0 (RFC 9112 §6.1, §6.3):
	// its framing is ambiguous, it is refused and the connection closed.
	Conflict
	// Lost means the scanner stopped following the connection (framing net/http refuses, or this
	// scanner does not know): every later request is served and its connection closed.
	Lost
)

// Limits of net/http this scanner mirrors: a longer chunk-size line or header line is refused there.
const (
	maxChunkLine = 4096
	maxHeadLine  = http1MaxHeaderBytes
)

// http1MaxHeaderBytes is http.DefaultMaxHeaderBytes plus the server's 4096 bytes of slack.
const http1MaxHeaderBytes = 1<<20 + 4096

type state uint8

const (
	stRequestLine state = iota
	stHeaders
	stBody        // Content-Length body: remaining bytes
	stChunkSize   // a chunk-size line
	stChunkData   // chunk data: remaining bytes
	stChunkCRLF   // the CRLF after chunk data: want bytes left of "\r\n"
	stTrailer     // trailer lines until an empty one
	stLost        // framing no longer followed
	stChunkCRLFLF // the LF after the CR of chunk data
)

// Scanner follows the HTTP/1.x framing of one connection's request stream, the way net/http's server
// frames it: Transfer-Encoding: chunked on HTTP/1.1 over Content-Length, Content-Length otherwise, no
// body without either. The zero value expects a request line.
type Scanner struct {
	st        state
	line      []byte // the current line, without its LF
	remaining uint64 // bytes of body or chunk data left
	http10    bool
	pending   []byte // the header field being read (continuation lines join it)
	cl        []string
	te        []string
}

// Feed scans p and appends the verdict of every request head completed in it to verdicts.
func (s *Scanner) Feed(p []byte, verdicts []Verdict) []Verdict {
	for len(p) > 0 && s.st != stLost {
		switch s.st {
		case stBody, stChunkData:
			n := uint64(len(p))
			if n > s.remaining {
				n = s.remaining
			}
			s.remaining -= n
			p = p[n:]
			if s.remaining == 0 {
				if s.st == stBody {
					s.st = stRequestLine
				} else {
					s.st = stChunkCRLF
				}
			}
		case stChunkCRLF:
			if p[0] != '\r' {
				s.st = stLost
				continue
			}
			p = p[1:]
			s.st = stChunkCRLFLF
		case stChunkCRLFLF:
			if p[0] != '\n' {
				s.st = stLost
				continue
			}
			p = p[1:]
			s.st = stChunkSize
		default: // line states
			i := bytes.IndexByte(p, '\n')
			chunk := p
			if i >= 0 {
				chunk = p[:i]
			}
			limit := maxHeadLine
			if s.st == stChunkSize {
				limit = maxChunkLine
			}
			if len(s.line)+len(chunk) > limit {
				s.st = stLost
				continue
			}
			s.line = append(s.line, chunk...)
			if i < 0 {
				return verdicts
			}
			p = p[i+1:]
			line := s.line
			s.line = s.line[:0]
			verdicts = s.endLine(line, verdicts)
		}
	}
	return verdicts
}

// endLine handles one complete line (its LF removed).
func (s *Scanner) endLine(line []byte, verdicts []Verdict) []Verdict {
	switch s.st {
	case stChunkSize:
		// net/http wants CRLF here, and no other CR.
		if len(line) == 0 || line[len(line)-1] != '\r' || bytes.IndexByte(line, '\r') != len(line)-1 {
			s.st = stLost
			return verdicts
		}
		line = bytes.TrimRight(line[:len(line)-1], " \t")
		line, _, _ = bytes.Cut(line, []byte(";"))
		n, ok := parseHex(line)
		if !ok {
			s.st = stLost
			return verdicts
		}
		if n == 0 {
			s.st = stTrailer
			return verdicts
		}
		s.remaining, s.st = n, stChunkData
		return verdicts
	case stTrailer:
		if len(trimCR(line)) == 0 {
			s.st = stRequestLine
		}
		return verdicts
	case stRequestLine:
		s.http10, s.pending, s.cl, s.te = false, s.pending[:0], s.cl[:0], s.te[:0]
		line = trimCR(line)
		_, rest, ok1 := bytes.Cut(line, []byte(" "))
		_, proto, ok2 := bytes.Cut(rest, []byte(" "))
		if !ok1 || !ok2 || len(proto) != len("HTTP/1.1") || !bytes.HasPrefix(proto, []byte("HTTP/1.")) ||
			proto[7] < '0' || proto[7] > '9' {
			s.st = stLost // net/http answers 400 or 505 and closes
			return verdicts
		}
		s.http10 = proto[7] == '0'
		s.st = stHeaders
		return verdicts
	}
	// stHeaders
	line = trimCR(line)
	if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		if len(s.pending) == 0 {
			s.st = stLost // net/http refuses a continuation with nothing to continue
			return verdicts
		}
		s.pending = append(append(s.pending, ' '), bytes.Trim(line, " \t")...)
		return verdicts
	}
	if !s.field() {
		return verdicts
	}
	if len(line) > 0 {
		s.pending = append(s.pending[:0], line...)
		return verdicts
	}
	return s.endHead(verdicts)
}

// field files the pending header field; false when the framing is lost.
func (s *Scanner) field() bool {
	if len(s.pending) == 0 {
		return true
	}
	name, value, ok := bytes.Cut(s.pending, []byte(":"))
	s.pending = s.pending[:0]
	if !ok || len(name) == 0 || !isToken(name) {
		s.st = stLost // net/http refuses a malformed header line
		return false
	}
	v := string(bytes.Trim(value, " \t"))
	switch {
	case asciiEqualFold(name, "Content-Length"):
		s.cl = append(s.cl, v)
	case asciiEqualFold(name, "Transfer-Encoding"):
		s.te = append(s.te, v)
	}
	return true
}

// endHead decides the framing of the request whose head just ended, as net/http does.
func (s *Scanner) endHead(verdicts []Verdict) []Verdict {
	var n uint64
	if len(s.cl) > 0 {
		for _, v := range s.cl[1:] {
			if v != s.cl[0] {
				s.st = stLost // net/http refuses differing Content-Lengths
				return verdicts
			}
		}
		var err error
		if n, err = strconv.ParseUint(s.cl[0], 10, 63); err != nil {
			s.st = stLost
			return verdicts
		}
	}
	v := OK
	chunked := false
	if len(s.te) > 0 {
		if s.http10 {
			v = Conflict // net/http ignores it and frames by Content-Length
		} else {
			if len(s.te) != 1 || !asciiEqualFold([]byte(s.te[0]), "chunked") {
				s.st = stLost // net/http answers 501 or 400 and closes
				return verdicts
			}
			chunked = true
			if len(s.cl) > 0 {
				v = Conflict
			}
		}
	}
	verdicts = append(verdicts, v)
	switch {
	case chunked:
		s.st = stChunkSize
	case n > 0:
		s.remaining, s.st = n, stBody
	default:
		s.st = stRequestLine
	}
	return verdicts
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(c)
	}
	return n, true
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// isToken reports a header field name of RFC 9110 token characters.
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}
