package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// declaredCodes finds every error code declared in the module's sources:
// constants of type errcode.Code (or Code inside package errcode) with a
// string value.
func declaredCodes(t *testing.T) map[errcode.Code]string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[errcode.Code]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		inErrcode := f.Name.Name == "errcode"
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || vs.Type == nil || len(vs.Values) != len(vs.Names) {
				return true
			}
			switch ty := vs.Type.(type) {
			case *ast.SelectorExpr:
				if x, ok := ty.X.(*ast.Ident); !ok || x.Name != "errcode" || ty.Sel.Name != "Code" {
					return true
				}
			case *ast.Ident:
				if !inErrcode || ty.Name != "Code" {
					return true
				}
			default:
				return true
			}
			for i, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				s, _ := strconv.Unquote(lit.Value)
				rel, _ := filepath.Rel(root, path)
				codes[errcode.Code(s)] = rel + ": " + vs.Names[i].Name
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) < len(errcode.Wire) {
		t.Fatalf("found only %d codes under %s", len(codes), root)
	}
	return codes
}

// TestUpstreamCodeCoversEveryCode: every code hostlink declares is either
// the upstream protocol's or has a row, every row names a declared code,
// and every row maps onto an upstream code.
func TestUpstreamCodeCoversEveryCode(t *testing.T) {
	codes := declaredCodes(t)
	for _, c := range []errcode.Code{"APPROVAL_PENDING", "SANDBOX_FAILED", "INVALID_ARGUMENT", CodeFrameTooLarge, errcode.PermissionPending} {
		if _, ok := codes[c]; !ok {
			t.Fatalf("the scan missed %s", c)
		}
	}
	for c, where := range codes {
		if !IsUpstream(c) {
			if _, ok := UpstreamCode[c]; !ok {
				t.Errorf("%s (%s) has no row in UpstreamCode", c, where)
			}
		}
	}
	for from, to := range UpstreamCode {
		if _, ok := codes[from]; !ok {
			t.Errorf("UpstreamCode row %s names no declared code", from)
		}
		if IsUpstream(from) {
			t.Errorf("UpstreamCode row %s is already an upstream code", from)
		}
		if !IsUpstream(to) {
			t.Errorf("UpstreamCode[%s] = %s, not an upstream code", from, to)
		}
	}
}

func TestForUpstream(t *testing.T) {
	pending := errcode.New("APPROVAL_PENDING", "waiting").With("approval_id", "apr_1").With("expires_at", "2026-01-01T00:00:00Z")
	for _, tt := range []struct {
		name     string
		in       *errcode.Error
		code     errcode.Code
		hostlink any
		details  map[string]any
	}{
		{"an upstream code is unchanged", errcode.New(errcode.PathNotFound, "gone"), errcode.PathNotFound, nil, nil},
		{"a pending approval keeps its id and deadline", pending, errcode.PermissionPending, "APPROVAL_PENDING",
			map[string]any{"approval_id": "apr_1", "expires_at": "2026-01-01T00:00:00Z"}},
		{"a bad argument", errcode.New(errcode.InvalidArgument, "no"), errcode.Internal, "INVALID_ARGUMENT", nil},
		{"a command that did not start", errcode.New("COMMAND_START_FAILED", "no"), errcode.ShellNotAvailable, "COMMAND_START_FAILED", nil},
		{"a code without a row", errcode.New("SOMETHING_NEW", "no"), errcode.Internal, "SOMETHING_NEW", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ForUpstream(tt.in)
			if got.Code != tt.code || got.Message != tt.in.Message {
				t.Fatalf("got %s %q, want %s", got.Code, got.Message, tt.code)
			}
			if got.Details["hostlink_code"] != tt.hostlink {
				t.Fatalf("hostlink_code %v, want %v", got.Details["hostlink_code"], tt.hostlink)
			}
			for k, v := range tt.details {
				if got.Details[k] != v {
					t.Errorf("details[%s] = %v, want %v", k, got.Details[k], v)
				}
			}
			if tt.in.Code != "" && tt.in.Details["hostlink_code"] != nil {
				t.Fatal("ForUpstream changed its argument")
			}
		})
	}
}
