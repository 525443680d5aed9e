package x11

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// xgb's extension packages (randr.Init and the like) install their event and
// error decoders in maps that every connection in the process shares, and
// each connection's reader goroutine reads those maps without a lock. Calling
// an Init for each connection therefore races with the readers of the
// connections already open (the race detector saw it in CI, and a map written
// during a read can crash the process). The decoders' numbers also come from
// the server, so two displays could disagree about them.
//
// hostlink never calls those Init functions. This package's initializer, which
// runs before any connection exists, installs one decoder for every number the
// X protocol leaves to extensions, and extension reports an extension to its
// connection only (the per-connection map xgb guards with ExtLock). Extension
// errors still reach the request that caused them, as an [extError]; hostlink
// selects no extension events, and any that arrive decode as [extEvent].
func init() {
	// Core events are 2-35 and core errors 1-17; extensions get events from
	// 64 and errors from 128 (X11 protocol, "Server Information").
	for n := 64; n < 128; n++ {
		if _, ok := xgb.NewEventFuncs[n]; !ok {
			xgb.NewEventFuncs[n] = newExtEvent
		}
	}
	for n := 128; n < 256; n++ {
		if _, ok := xgb.NewErrorFuncs[n]; !ok {
			xgb.NewErrorFuncs[n] = newExtError
		}
	}
}

// extension asks the server for name and, when it has it, records its major
// opcode on c, which is all the extension packages' requests need.
func extension(c *xgb.Conn, name string) error {
	r, err := xproto.QueryExtension(c, uint16(len(name)), name).Reply()
	if err != nil {
		return err
	}
	if !r.Present {
		return fmt.Errorf("the X server has no %s extension", name)
	}
	c.ExtLock.Lock()
	c.Extensions[name] = r.MajorOpcode
	c.ExtLock.Unlock()
	return nil
}

// extError is an error an extension's request got: the 32-byte X error,
// undecoded beyond its header.
type extError struct {
	code     byte
	sequence uint16
	badValue uint32
	minor    uint16
	major    byte
}

func newExtError(buf []byte) xgb.Error {
	return extError{
		code:     buf[1],
		sequence: xgb.Get16(buf[2:]),
		badValue: xgb.Get32(buf[4:]),
		minor:    xgb.Get16(buf[8:]),
		major:    buf[10],
	}
}

func (e extError) SequenceId() uint16 { return e.sequence }
func (e extError) BadId() uint32      { return e.badValue }
func (e extError) Error() string {
	return fmt.Sprintf("X error %d (request %d.%d, value %#x)", e.code, e.major, e.minor, e.badValue)
}

// extEvent is an event from an extension, kept as its bytes.
type extEvent []byte

func newExtEvent(buf []byte) xgb.Event { return extEvent(append([]byte(nil), buf...)) }

func (e extEvent) Bytes() []byte  { return e }
func (e extEvent) String() string { return fmt.Sprintf("extension event %d", e[0]&0x7f) }
