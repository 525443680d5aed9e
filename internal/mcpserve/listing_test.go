package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// filesRegistry is the file operations over a real temporary workdir,
// returned with its directory.
func filesRegistry(t *testing.T, limits files.Limits) (*ops.Registry, string) {
	t.Helper()
	root := t.TempDir()
	jr, err := jail.Open(root, jail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jr.Close() })
	reg := ops.New(ops.Options{Audit: opstest.AuditLog(t)})
	files.Register(reg, files.NewService([]*files.Workdir{{Alias: "main", Root: jr}}, limits))
	return reg, root
}

// TestListingsAreText: over MCP (stdio, where results are spliced in by
// the connection, and Streamable HTTP, the SDK's encoding), with the Go
// SDK client, list_directory and find_files list no output schema and
// answer with one text block and no structured content: a head line of
// JSON, then a line per entry, which no name can break; paging with the
// cursor in the head line visits every entry once, and a used cursor is
// CURSOR_EXPIRED.
func TestListingsAreText(t *testing.T) {
	reg, root := filesRegistry(t, files.Limits{MaxListEntries: 1000, MaxReadBytes: 1 << 20})
	names := []string{"plain.txt", "with space", "é 日本", "a - b.txt"}
	if runtime.GOOS != "windows" {
		// Windows refuses control characters, quotes, '>' and invalid
		// UTF-16 in names, and a backslash is its separator.
		names = append(names, "a -> b", "tab\there", `"quoted"`, "new\nf forged line", "bad\xffutf8", `back\slash`)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(root, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(root, "many"), 0o755)
	for i := range 2500 {
		os.WriteFile(filepath.Join(root, "many", fmt.Sprintf("f%04d", i)), []byte("x"), 0o644)
	}

	ctx := context.Background()
	for transport, cs := range bothTransports(t, reg) {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools.Tools {
			text := tl.Name == "list_directory" || tl.Name == "find_files" || tl.Name == "read_file"
			if has := tl.OutputSchema != nil; has == text {
				t.Errorf("%s: tool %s lists an output schema: %v", transport, tl.Name, has)
			}
		}
		call := func(name string, args map[string]any) (head map[string]any, lines []string) {
			t.Helper()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError || len(res.Content) != 1 || res.StructuredContent != nil {
				t.Fatalf("%s %s(%v): %v %+v", transport, name, args, err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			first, rest, ok := strings.Cut(text, "\n")
			if err := json.Unmarshal([]byte(first), &head); !ok || err != nil {
				t.Fatalf("%s %s: head line %q: %v", transport, name, first, err)
			}
			lines = strings.Split(rest, "\n")
			if lines[len(lines)-1] != "" {
				t.Fatalf("%s %s: the text does not end with a newline: %q", transport, name, rest)
			}
			lines = lines[:len(lines)-1]
			if head["count"] != float64(len(lines)) {
				t.Fatalf("%s %s: head %v over %d lines", transport, name, head, len(lines))
			}
			return head, lines
		}

		// Every name is one line, its type and name; names that are not
		// plain text are JSON strings.
		for _, details := range []bool{false, true} {
			_, lines := call("list_directory", map[string]any{"details": details})
			var got []string
			for _, l := range lines {
				fields := 2
				if details {
					fields = 4
				}
				f := strings.SplitN(l, " ", fields)
				if len(f) != fields {
					t.Fatalf("%s: line %q", transport, l)
				}
				name := f[fields-1]
				if strings.HasPrefix(name, `"`) {
					if err := json.Unmarshal([]byte(name), &name); err != nil {
						t.Fatalf("%s: line %q: %v", transport, l, err)
					}
				}
				if details && f[0] == "f" && f[1] != "1" {
					t.Errorf("%s: line %q: size", transport, l)
				}
				got = append(got, name)
			}
			want := []string{"many"}
			for _, n := range names {
				want = append(want, strings.ToValidUTF8(n, "\uFFFD"))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s details %v: names %q, want %q", transport, details, got, want)
			}
		}

		// Pages through 2,500 entries, each once.
		for _, op := range []string{"list_directory", "find_files"} {
			args := map[string]any{"path": "many", "max_entries": 700}
			if op == "find_files" {
				args = map[string]any{"path": "many", "pattern": "*", "max_results": 700}
			}
			seen := map[string]int{}
			var cursors []string
			for {
				head, lines := call(op, args)
				for _, l := range lines {
					seen[l]++
				}
				next, _ := head["next_cursor"].(string)
				if (next != "") != (head["truncated"] == true) {
					t.Fatalf("%s %s: head %v", transport, op, head)
				}
				if next == "" {
					break
				}
				cursors = append(cursors, next)
				args["cursor"] = next
			}
			if len(seen) != 2500 || len(cursors) != 3 {
				t.Errorf("%s %s: %d entries in %d pages", transport, op, len(seen), len(cursors)+1)
			}
			for l, n := range seen {
				if n != 1 {
					t.Errorf("%s %s: %q seen %d times", transport, op, l, n)
				}
			}
			args["cursor"] = cursors[0]
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: op, Arguments: args})
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"CURSOR_EXPIRED"`) {
				t.Errorf("%s %s with a used cursor: %v %+v", transport, op, err, res)
			}
		}
	}
}

// A cursor belongs to the session that got it: another MCP session's
// use of it is CURSOR_EXPIRED, and leaves it to its owner.
func TestListingCursorIsTheSessions(t *testing.T) {
	reg, root := filesRegistry(t, files.Limits{MaxListEntries: 10})
	for i := range 25 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d", i)), []byte("x"), 0o644)
	}
	srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok"}))
	defer srv.Close()
	ctx := context.Background()
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: bearer{"tok-tok-tok-tok"}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect(), connect()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	var head struct {
		NextCursor string `json:"next_cursor"`
	}
	first, _, _ := strings.Cut(res.Content[0].(*mcp.TextContent).Text, "\n")
	json.Unmarshal([]byte(first), &head)
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{"cursor": head.NextCursor}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"CURSOR_EXPIRED"`) {
		t.Fatalf("another session's cursor: %v %+v", err, res)
	}
	res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{"cursor": head.NextCursor}})
	if err != nil || res.IsError {
		t.Fatalf("the owner's cursor after another session tried it: %v %+v", err, res)
	}
}
