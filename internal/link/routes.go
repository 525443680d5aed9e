package link

import (
	"context"

	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/commandapi"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
)

// This file is the link's one routing table: each request type the
// platform may send, the capability it needs, the operation it maps onto
// and the converter that turns its payload into the operation's request
// and the result back into the reply. Everything else about a request
// (schema, policy, budgets, the audit record) is the registry's; a
// request refused before it reaches an operation is recorded through
// Registry.Refuse (serve.go).

// Capabilities the link adds to the operations' own (ops.Capability), used
// only when the platform grants them.
const (
	CapIdempotency   ops.Capability = "idempotency"    // idempotency_key on mutating requests
	CapOperations    ops.Capability = "operations"     // OPERATION_CALL
	CapCommandOutput ops.Capability = "command_output" // COMMAND_RESULT.capture_id + read_command_output
	// CapShellSandbox: commands run confined to their workdir. Granted,
	// hostlink says how, as measured, in a SHELL_SANDBOX frame after
	// HELLO_ACK. Informational: it changes no request.
	CapShellSandbox ops.Capability = "shell_sandbox"
	// CapAckDetails: the ACK of APP_LAUNCH carries the started process's
	// pid, and that of WINDOW_FOCUS whether the window got the focus.
	// Upstream's ACK has only ok.
	CapAckDetails ops.Capability = "ack_details"
	// CapHostlinkErrors: errors carry hostlink's own codes
	// (APPROVAL_PENDING, INVALID_ARGUMENT, …). Without it every code on the
	// wire is one of the upstream protocol's, the precise one in
	// details.hostlink_code (wire.ForUpstream).
	CapHostlinkErrors ops.Capability = "hostlink_errors"
)

// route is how one request type is served.
type route struct {
	capability ops.Capability // must be granted
	op         string         // the operation it maps onto ("" for session management)
	mutating   bool           // may carry an idempotency key
	handle     func(ctx context.Context, r *request) (typ string, payload any, err error)
}

// routes are the control connection's: browsing for a folder and managing
// the sessions attached to one.
func (m *manager) routes() map[string]route {
	return map[string]route{
		wire.TypeDirectoryListRequest: {capability: ops.DirectoryBrowse, op: browseapi.OpBrowseDirectories, handle: m.list},
		wire.TypeAttachSession:        {capability: ops.DirectoryBrowse, handle: m.attach},
		wire.TypeActivateSession:      {capability: ops.DirectoryBrowse, handle: m.activate},
		wire.TypeRestoreSession:       {capability: ops.DirectoryBrowse, handle: m.restore},
		wire.TypeDetachSession:        {capability: ops.DirectoryBrowse, handle: m.detach},
	}
}

// routes are a session's data connection's.
func (d *dataChannel) routes() map[string]route {
	r := map[string]route{
		wire.TypeFileRead:       {capability: ops.Files, op: fileapi.OpReadFile, handle: d.fileRead},
		wire.TypeFileWrite:      {capability: ops.Files, op: fileapi.OpWriteFile, mutating: true, handle: d.fileWrite},
		wire.TypeFileStat:       {capability: ops.Files, op: fileapi.OpStat, handle: d.fileStat},
		wire.TypeFileList:       {capability: ops.Files, op: fileapi.OpListDirectory, handle: d.fileList},
		wire.TypeFileDelete:     {capability: ops.Files, op: fileapi.OpDelete, mutating: true, handle: d.fileDelete},
		wire.TypeFileMove:       {capability: ops.Files, op: fileapi.OpMove, mutating: true, handle: d.fileMove},
		wire.TypeExecuteCommand: {capability: ops.Shell, op: commandapi.OpRunCommand, mutating: true, handle: d.executeCommand},
		// The operation is the one the request names.
		wire.TypeOperationCall: {capability: CapOperations, mutating: true, handle: d.operationCall},
	}
	if d.rt.Computer {
		for typ, rt := range map[string]route{
			wire.TypeScreenshotRequest:       {op: desktopapi.OpObserve, handle: d.screenshot},
			wire.TypeInputAction:             {op: desktopapi.OpAct, handle: d.inputAction},
			wire.TypeDisplayInfoRequest:      {op: desktopapi.OpDesktops, handle: d.displayInfo},
			wire.TypeCursorPositionRequest:   {op: desktopapi.OpObserve, handle: d.cursorPosition},
			wire.TypeWindowListRequest:       {op: desktopapi.OpWindows, handle: d.windowList},
			wire.TypeWindowFocus:             {op: desktopapi.OpFocusWindow, handle: d.windowFocus},
			wire.TypeAppListRequest:          {op: desktopapi.OpApps, handle: d.appList},
			wire.TypeAppLaunch:               {op: desktopapi.OpLaunchApp, mutating: true, handle: d.appLaunch},
			wire.TypeClipboardRead:           {op: desktopapi.OpClipboardRead, handle: d.clipboardRead},
			wire.TypeClipboardWrite:          {op: desktopapi.OpClipboardWrite, mutating: true, handle: d.clipboardWrite},
			wire.TypePermissionsCheckRequest: {op: desktopapi.OpPermissions, handle: d.permissionsCheck},
		} {
			rt.capability = ops.ComputerUse
			r[typ] = rt
		}
	}
	return r
}

// dataOnly are the request types served only on a session's data
// connection, with the capability each needs; on the control connection
// they are CAPABILITY_NOT_GRANTED.
var dataOnly = map[string]ops.Capability{
	wire.TypeFileRead: ops.Files, wire.TypeFileWrite: ops.Files, wire.TypeFileStat: ops.Files, wire.TypeFileList: ops.Files,
	wire.TypeFileDelete: ops.Files, wire.TypeFileMove: ops.Files, wire.TypeExecuteCommand: ops.Shell, wire.TypeOperationCall: CapOperations,
	wire.TypeScreenshotRequest: ops.ComputerUse, wire.TypeInputAction: ops.ComputerUse, wire.TypeCursorPositionRequest: ops.ComputerUse,
	wire.TypeDisplayInfoRequest: ops.ComputerUse, wire.TypeWindowListRequest: ops.ComputerUse, wire.TypeWindowFocus: ops.ComputerUse,
	wire.TypeAppListRequest: ops.ComputerUse, wire.TypeAppLaunch: ops.ComputerUse, wire.TypeClipboardRead: ops.ComputerUse,
	wire.TypeClipboardWrite: ops.ComputerUse, wire.TypePermissionsCheckRequest: ops.ComputerUse, "LOCAL_LLM_COMPLETION": "local_llm",
	// Upstream's workflow recording, a preview it never advertises.
	"REQUEST_RECORDING_CONSENT": "recording", "START_RECORDING": "recording", "STOP_RECORDING": "recording",
	"RECORDING_FETCH": "recording", "APPLY_RECORDING_REVIEW": "recording",
}

// controlOnly are the control connection's request types: on a data
// connection they are CAPABILITY_NOT_GRANTED (directory_browse is never
// granted there), as upstream answers them.
var controlOnly = map[string]bool{
	wire.TypeDirectoryListRequest: true, wire.TypeAttachSession: true, wire.TypeActivateSession: true,
	wire.TypeRestoreSession: true, wire.TypeDetachSession: true,
}

// computerTypes are the protocol's computer-use requests: once
// computer_use is granted, one this host does not serve is
// FEATURE_NOT_SUPPORTED rather than CAPABILITY_NOT_GRANTED.
var computerTypes = map[string]bool{
	wire.TypeScreenshotRequest: true, wire.TypeInputAction: true, wire.TypeCursorPositionRequest: true,
	wire.TypeDisplayInfoRequest: true, wire.TypeWindowListRequest: true, wire.TypeWindowFocus: true,
	wire.TypeAppListRequest: true, wire.TypeAppLaunch: true, wire.TypeClipboardRead: true, wire.TypeClipboardWrite: true,
	wire.TypePermissionsCheckRequest: true,
}
