// Package opstest calls registry operations from tests the way a transport
// does: JSON arguments in, the result as generic JSON out.
package opstest

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

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

// Bounds calls op through r, as the control channel does, with base (JSON
// arguments valid apart from the number tested) and field set to min and
// max, which the schema must accept (the call runs, or fails for another
// reason, even one of the operation's own checks), and just past and far
// past them, which the schema must refuse: INVALID_ARGUMENT naming the
// field. field is dot-separated into nested objects; a suffix "[][]" names
// the first coordinate of a list of points.
func Bounds(t testing.TB, r *ops.Registry, op, base, field string, min, max float64) {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(field, "[][]"), ".")
	named := "/properties/" + parts[len(parts)-1]
	for _, tc := range []struct {
		v  float64
		ok bool
	}{
		{min, true}, {max, true}, {min - 1, false}, {max + 1, false},
		{min - 1e12, false}, {max + 1e12, false}, {-1e300, false}, {1e300, false},
	} {
		args := withNumber(t, base, field, tc.v)
		_, err := r.Call(context.Background(), ops.Caller{Transport: audit.IPC, Peer: "test"}, op, args, nil)
		e := errcode.As(err)
		bySchema := e != nil && e.Code == errcode.InvalidArgument && strings.Contains(e.Message, named)
		if bySchema == tc.ok {
			t.Errorf("%s %s = %s: %v", op, field, strconv.FormatFloat(tc.v, 'g', -1, 64), err)
		}
	}
}

// withNumber sets field of the JSON object base to v, written as an
// integer literal when it is one (encoding/json refuses 1e+06 for an int).
func withNumber(t testing.TB, base, field string, v float64) []byte {
	t.Helper()
	num := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Abs(v) > 1e20 {
		num = strconv.FormatFloat(v, 'e', -1, 64)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatalf("base arguments %s: %v", base, err)
	}
	if f, ok := strings.CutSuffix(field, "[][]"); ok {
		m[f].([]any)[0].([]any)[0] = json.Number(num)
	} else {
		parts := strings.Split(field, ".")
		obj := m
		for _, p := range parts[:len(parts)-1] {
			obj = obj[p].(map[string]any)
		}
		obj[parts[len(parts)-1]] = json.Number(num)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
