package companion

import (
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// What a companion records in its host's audit log. The runtime audits
// the operation its caller asked for on its own log (in the container or
// the WSL distro); the host's log must show what was done on the host
// too, and who asked, since that log is the one the user of the host
// reads. One record per request, like the registry's, except for the
// chunk reads of a transfer (capture.read, frame.read, frame.close):
// those are parts of a transfer whose open and close are recorded, and a
// record per 64 KiB would drown the log.

// unaudited are the methods that belong to a recorded transfer.
var unaudited = map[string]bool{"capture.read": true, "frame.read": true, "frame.close": true}

// changes are the methods whose record must be on disk before the
// runtime hears the result (see audit's "Durability"); the others only
// look.
var changes = map[string]bool{"command.run": true, "desktop.dispatch": true, "desktop.focus": true}

// auditCheck refuses a request up front when the host's audit log could
// not take its record.
func (h *host) auditCheck(method string) error {
	if h.o.Audit == nil || unaudited[method] {
		return nil
	}
	if err := h.o.Audit.Check(); err != nil {
		return errcode.New(errcode.AuditUnavailable, "the companion's audit log cannot be written; request refused")
	}
	return nil
}

// auditRequest records one request and its outcome. A failed record of a
// change withholds the result, as the registry does.
func (h *host) auditRequest(method string, params json.RawMessage, out any, payload []byte, err error, start time.Time) error {
	if h.o.Audit == nil || unaudited[method] {
		return nil
	}
	rec := audit.Record{Transport: h.auditTransport(), Peer: h.o.AuditPeer, Op: "companion." + method,
		Code: "OK", Bytes: int64(len(payload)), Duration: time.Since(start), Details: requestDetails(method, params, out),
		Deferred: !changes[method]}
	if err != nil {
		rec.Code = string(errcode.As(err).Code)
	}
	if aerr := h.o.Audit.Append(rec); aerr != nil && changes[method] {
		return errcode.New(errcode.AuditUnavailable, "the companion's audit log cannot be written; result withheld")
	}
	return nil
}

// auditEvent records the connection's life: connect and disconnect.
func (h *host) auditEvent(op string, details map[string]any) {
	if h.o.Audit == nil {
		return
	}
	if err := h.o.Audit.Append(audit.Record{Transport: h.auditTransport(), Peer: h.o.AuditPeer, Op: op, Code: "OK", Details: details}); err != nil {
		slog.Warn("companion event not recorded in the audit log", "op", op, "err", err)
	}
}

// auditTransport is companion, or wsl_interop for a companion its runtime
// started over WSL interop.
func (h *host) auditTransport() audit.Transport {
	if h.o.Streams != nil {
		return audit.WSLInterop
	}
	return audit.Companion
}

// requestDetails are the small facts worth keeping about a request:
// what ran where, never environment values, typed text or output.
func requestDetails(method string, params json.RawMessage, out any) map[string]any {
	d := map[string]any{}
	switch {
	case method == "command.run":
		var a runParams
		json.Unmarshal(params, &a)
		if len(a.Argv) > 0 {
			d["argv"] = a.Argv
		} else {
			d["command"], d["shell"] = a.Command, a.Shell
		}
		if a.Cwd != "" {
			d["cwd"] = a.Cwd
		}
		if len(a.Env) > 0 {
			keys := make([]string, 0, len(a.Env))
			for k := range a.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			d["env_keys"] = keys
		}
		if r, ok := out.(runResult); ok {
			d["capture_id"], d["status"] = r.Receipt.CaptureID, r.Receipt.Status
			if r.Receipt.ExitCode != nil {
				d["exit_code"] = *r.Receipt.ExitCode
			}
		}
	case method == "capture.open":
		var a openParams
		json.Unmarshal(params, &a)
		d["capture_id"] = a.CaptureID
	case method == "capture.close":
		var a closeParams
		json.Unmarshal(params, &a)
		d["transfer_id"] = a.TransferID
	case strings.HasPrefix(method, "desktop."):
		var a deskParams
		json.Unmarshal(params, &a)
		if a.Desktop != "" {
			d["desktop"] = a.Desktop
		}
		if len(a.Steps) > 0 {
			// Counts only: a Text step may be a password.
			d["steps"] = len(a.Steps)
		}
	}
	if len(d) == 0 {
		return nil
	}
	return d
}
