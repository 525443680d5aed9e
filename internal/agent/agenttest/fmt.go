package agenttest

import "encoding/json"

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
