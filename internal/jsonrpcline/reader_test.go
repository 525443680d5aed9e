package jsonrpcline

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func nested(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		line string
		code int    // 0: a valid message
		id   string // the id echoed in the error; "" means null
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, ""},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{}}`, 0, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{"array params", `{"jsonrpc":"2.0","id":2,"method":"x","params":[1,2]}`, 0, ""},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"x","params":null}`, 0, ""},
		{"response", `{"jsonrpc":"2.0","id":5,"result":{}}`, 0, ""},
		{"error response", `{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no","data":{"x":1}}}`, 0, ""},
		{"spaces and escapes", ` { "jsonrpc" : "2.0" , "\u0069d" : -7 , "method" : "a\"b" } `, 0, ""},
		{"negative largest safe id", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, 0, ""},
		{"nesting at the limit", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + nested(MaxDepth-2) + `}}`, 0, ""},

		{"not JSON", `hello`, CodeParseError, ""},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"pi`, CodeParseError, ""},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, CodeParseError, ""},
		{"nesting past the limit", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + nested(MaxDepth-1) + `}}`, CodeInvalidRequest, ""},
		{"nesting far past the limit", nested(100000), CodeInvalidRequest, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, ""},
		{"empty batch", `[]`, CodeInvalidRequest, ""},
		{"not an object", `"ping"`, CodeInvalidRequest, ""},
		{"missing jsonrpc", `{"id":3,"method":"ping"}`, CodeInvalidRequest, "3"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"x","method":"ping"}`, CodeInvalidRequest, `"x"`},
		{"jsonrpc not a string", `{"jsonrpc":2.0,"id":3,"method":"ping"}`, CodeInvalidRequest, "3"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, ""},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, ""},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, ""},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, ""},
		{"id past 2^53-1", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, CodeInvalidRequest, ""},
		{"id far past", `{"jsonrpc":"2.0","id":1000000000000000000000000,"method":"ping"}`, CodeInvalidRequest, ""},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, CodeInvalidRequest, ""},
		{"duplicate through an escape", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, CodeInvalidRequest, ""},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, CodeInvalidRequest, "1"},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, CodeInvalidRequest, "1"},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, CodeInvalidRequest, "1"},
		{"neither method nor result", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "1"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, ""},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, CodeInvalidRequest, "1"},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"bad"}`, CodeInvalidRequest, "1"},
		{"error code not an integer", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, CodeInvalidRequest, "1"},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, CodeInvalidRequest, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.line))
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("refused a valid message: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %.100s", tt.line)
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			line := err.Response()
			if json.Unmarshal(line, &resp) != nil || line[len(line)-1] != '\n' || strings.Count(string(line), "\n") != 1 {
				t.Fatalf("response is not one JSON line: %q", line)
			}
			wantID := tt.id
			if wantID == "" {
				wantID = "null"
			}
			if resp.JSONRPC != "2.0" || resp.Error.Code != tt.code || string(resp.ID) != wantID || resp.Error.Message == "" {
				t.Fatalf("response %s, want code %d id %s", line, tt.code, wantID)
			}
		})
	}
}

// TestParseMembers: a valid message's members are returned as they were
// written, a null error is no error, and a notification has no id.
func TestParseMembers(t *testing.T) {
	for _, tt := range []struct {
		line string
		want Message
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`,
			Message{ID: json.RawMessage(`7`), Method: "tools/call", IsRequest: true, Params: json.RawMessage(`{"name":"x"}`)}},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			Message{Method: "notifications/initialized", IsRequest: true}},
		{` {"method":"a\"b","jsonrpc":"2.0","id":"s"} `, Message{ID: json.RawMessage(`"s"`), Method: `a"b`, IsRequest: true}},
		{`{"jsonrpc":"2.0","id":"r","result":{"ok":true},"error":null}`, Message{ID: json.RawMessage(`"r"`), Result: json.RawMessage(`{"ok":true}`)}},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, Message{ID: json.RawMessage(`3`), Error: json.RawMessage(`{"code":-1,"message":"no"}`)}},
	} {
		got, err := Parse([]byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		if string(got.Line) != strings.TrimSpace(tt.line) || string(got.ID) != string(tt.want.ID) || got.Method != tt.want.Method ||
			got.IsRequest != tt.want.IsRequest || string(got.Params) != string(tt.want.Params) ||
			string(got.Result) != string(tt.want.Result) || string(got.Error) != string(tt.want.Error) {
			t.Errorf("%s: got %+v", tt.line, got)
		}
	}
}

// TestReaderOwnsMessages: a message stays as it was after later reads
// reuse the Reader's buffer.
func TestReaderOwnsMessages(t *testing.T) {
	r := NewReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"aaaa","params":{"v":"1111"}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"bbbb","params":{"v":"2222"}}`+"\n"), 4096)
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if string(first.Params) != `{"v":"1111"}` || string(first.ID) != "1" {
		t.Fatalf("the first message changed: %s", first.Line)
	}
}

// TestReaderKeepsGoing: every bad line is answered and the good line
// after it is read, including after an over-long line (skipped without
// being held), a truncated line, and CRLF and blank lines; a last line
// without a newline is still read.
func TestReaderKeepsGoing(t *testing.T) {
	const max = 4096
	good := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	in := strings.Join([]string{
		"not json",
		good,
		`{"jsonrpc":"2.0","id":2,"method":"ping"`, // truncated
		good,
		`{"jsonrpc":"2.0","id":3,"method":"x","params":{"d":"` + strings.Repeat("y", 10*max) + `"}}`,
		good + "\r",
		"",
		"   ",
		`{"jsonrpc":"2.0","id":4,"method":"x","params":{"d":"` + strings.Repeat("y", max-60) + `"}}`,
		`[1,2]`,
		good,
	}, "\n")
	r := NewReader(strings.NewReader(in), max)
	var got []string
	for {
		msg, err := r.Next()
		var le *LineError
		switch {
		case errors.As(err, &le):
			got = append(got, "error "+itoa(le.Code))
		case errors.Is(err, io.EOF):
			want := []string{"error -32700", "ok", "error -32700", "ok", "error -32600", "ok", "ok", "error -32600", "ok"}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("got %v\nwant %v", got, want)
			}
			return
		case err != nil:
			t.Fatal(err)
		default:
			if len(msg.Line) > max {
				t.Fatalf("a line over the limit was returned")
			}
			got = append(got, "ok")
		}
	}
}

// TestLineLimit: a line of exactly the limit is read, one byte more is
// skipped with an error.
func TestLineLimit(t *testing.T) {
	base := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":""}}`
	at := strings.Replace(base, `""`, `"`+strings.Repeat("a", 1000-len(base))+`"`, 1)
	for _, tt := range []struct {
		line string
		ok   bool
	}{{at, true}, {strings.Replace(at, `"a`, `"aa`, 1), false}} {
		r := NewReader(strings.NewReader(tt.line+"\n"), 1000)
		_, err := r.Next()
		if (err == nil) != tt.ok {
			t.Fatalf("line of %d bytes with limit 1000: %v", len(tt.line), err)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func BenchmarkParseLargeWrite(b *testing.B) {
	content := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", 10<<20/36)
	line := []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","content":"` + content + `","encoding":"base64"}}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}
