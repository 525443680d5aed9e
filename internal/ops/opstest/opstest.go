// Package opstest calls registry operations from tests the way a transport
// does: JSON arguments in, the result as generic JSON out.
package opstest

import (
	"context"
	"encoding/json"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// Call runs op with args through r as transport "test" and returns the
// result decoded as a JSON object, or the error's code.
func Call(ctx context.Context, r *ops.Registry, op string, args map[string]any) (map[string]any, errcode.Code) {
	raw, err := json.Marshal(args)
	if err != nil {
		panic("opstest: arguments are not JSON: " + err.Error())
	}
	out, err := r.Call(ctx, ops.Caller{Transport: audit.MCPStdio, Peer: "test"}, op, raw, nil)
	if err != nil {
		return nil, errcode.CodeOf(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic("opstest: result is not JSON: " + err.Error())
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic("opstest: result is not a JSON object: " + err.Error())
	}
	return m, ""
}
