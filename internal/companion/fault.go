package companion

// fault makes a companion misbehave in its output chunks, so tests can
// show that the runtime's verification catches it. Only package tests set
// it (HostOptions.fault); a real companion never has one. Chunk numbers
// count from 0 per capture and stream across every transfer of the
// connection, so a fault hits the first transfer only and a retry is
// clean. Moved chunks are relabelled with the offset the runtime asked
// for, as a lying companion would, so only the hashes can tell.
type fault struct {
	kind  string // corrupt, drop, reorder or cut
	chunk int    // the chunk it hits (reorder: this one and the next)
}

// offset returns where chunk n is actually read from.
func (f *fault) offset(n int, off int64) int64 {
	if f == nil {
		return off
	}
	switch {
	case f.kind == "drop" && n == f.chunk, f.kind == "reorder" && n == f.chunk:
		return off + MaxChunk
	case f.kind == "reorder" && n == f.chunk+1:
		return off - MaxChunk
	}
	return off
}

// apply falsifies chunk n's header and data. It reports false when the
// connection is to be cut instead of answering.
func (f *fault) apply(p *peer, n int, asked int64, h chunkHeader, data []byte) (chunkHeader, []byte, bool) {
	if f == nil {
		return h, data, true
	}
	h.Offset = asked
	switch {
	case f.kind == "corrupt" && n == f.chunk && len(data) > 0:
		data = append([]byte(nil), data...)
		data[len(data)/2] ^= 0x20 // the header keeps the true hash
	case f.kind == "cut" && n == f.chunk:
		p.ws.CloseNow()
		return h, nil, false
	}
	return h, data, true
}
