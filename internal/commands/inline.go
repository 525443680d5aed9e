package commands

import (
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/commandapi"
)

// inline returns the start and end of a stream within the inline budget:
// the whole stream when it fits, else half the budget from each end, both
// cut at UTF-8 character boundaries (bytes that are not UTF-8 are shown as
// U+FFFD; read_command_output returns them exactly). With first > 0 it is
// the stream's first `first` bytes instead, cut at a character boundary.
func (s *Service) inline(id, stream string, si capture.StreamInfo, first int64) (commandapi.StreamSummary, error) {
	sum := commandapi.StreamSummary{Bytes: si.TotalBytes, StoredBytes: si.StoredBytes, Truncated: si.Truncated}
	if si.Complete {
		sum.SHA256 = si.SHA256
	}
	budget := int64(s.opts.InlineBytes)
	n := si.StoredBytes
	if first > 0 && n > first {
		b, err := s.readRange(id, stream, 0, first)
		if err != nil {
			return sum, err
		}
		b = cut(b, false)
		sum.Head, sum.InlineOmitted = toText(b), n-int64(len(b))
		return sum, nil
	}
	if n <= budget || first > 0 {
		b, err := s.readRange(id, stream, 0, n)
		if err != nil {
			return sum, err
		}
		sum.Head = toText(b)
		return sum, nil
	}
	half := budget / 2
	head, err := s.readRange(id, stream, 0, half)
	if err != nil {
		return sum, err
	}
	tail, err := s.readRange(id, stream, n-half, half)
	if err != nil {
		return sum, err
	}
	head, tail = cut(head, false), cut(tail, true)
	sum.Head, sum.Tail = toText(head), toText(tail)
	sum.InlineOmitted = n - int64(len(head)) - int64(len(tail))
	return sum, nil
}

// readRange reads n bytes from offset in chunks.
func (s *Service) readRange(id, stream string, offset, n int64) ([]byte, error) {
	var out []byte
	for n > 0 {
		ch, err := s.store.Read(id, stream, offset, int(min(n, capture.MaxChunk)))
		if err != nil {
			return nil, err
		}
		if len(ch.Data) == 0 {
			break
		}
		out = append(out, ch.Data...)
		offset += int64(len(ch.Data))
		n -= int64(len(ch.Data))
	}
	return out, nil
}

// cut trims b to character boundaries: a head loses a partial last
// character, a tail its partial first one.
func cut(b []byte, tail bool) []byte {
	if tail {
		for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
			if utf8.RuneStart(b[i]) {
				b = b[i:]
				break
			}
		}
	} else if len(b) > 0 {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return b
}

func toText(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
