package jail

import (
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// rootAt builds a Root for lexical tests only: it never touches the disk.
func rootAt(dir string, f Flavor, fold bool) *Root {
	r := &Root{dir: dir, flavor: f, fold: fold, goos: "linux"}
	if f == Windows {
		r.goos = "windows"
	}
	p, err := parse(dir, f)
	if err != nil {
		panic(err)
	}
	comps, cerr := clean(p.comps, f)
	if cerr != nil {
		panic(cerr)
	}
	r.accepted, r.vols = [][]string{comps}, []string{p.vol}
	return r
}

// resolveCase is one Resolve input and its expected result or error code.
type resolveCase struct {
	root *Root
	in   string
	want string
	code errcode.Code
}

func checkResolve(t *testing.T, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		got, err := tt.root.Resolve(tt.in)
		if code := errcode.CodeOf(err); code != tt.code {
			t.Errorf("Resolve(%q) error = %v, want code %q", tt.in, err, tt.code)
			continue
		}
		if err == nil && got.String() != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResolveUnix(t *testing.T) {
	r := rootAt("/home/u/work", Unix, false)
	fold := rootAt("/Users/U/Work", Unix, true)
	tests := []resolveCase{
		{r, ".", ".", ""},
		{r, "a/b.txt", "a/b.txt", ""},
		{r, "./a//b/", "a/b", ""},
		{r, "a/../b", "b", ""},
		{r, "a/b/../../c", "c", ""},
		{r, "/home/u/work", ".", ""},
		{r, "/home/u/work/x/y", "x/y", ""},
		{r, "/home/u/work/../work/x", "x", ""},
		{r, `a\..\..\b`, `a\..\..\b`, ""}, // one odd but legal Unix name
		{r, "..", "", errcode.PathOutsideRoot},
		{r, "../x", "", errcode.PathOutsideRoot},
		{r, "a/../../x", "", errcode.PathOutsideRoot},
		{r, "a/b/../../../x", "", errcode.PathOutsideRoot},
		{r, "/home/u/work2/x", "", errcode.PathOutsideRoot},
		{r, "/home/u/wor", "", errcode.PathOutsideRoot},
		{r, "/home/u", "", errcode.PathOutsideRoot},
		{r, "/etc/passwd", "", errcode.PathOutsideRoot},
		{r, "/", "", errcode.PathOutsideRoot},
		{r, "/home/u/work/../other", "", errcode.PathOutsideRoot},
		{r, "/HOME/U/WORK/x", "", errcode.PathOutsideRoot},
		{r, "a\x00b", "", errcode.PathInvalidChars},
		{r, "a\nb", "", errcode.PathInvalidChars},
		{r, "a\x1fb", "", errcode.PathInvalidChars},
		{r, "bad\xffutf8", "", errcode.PathInvalidChars},
		{r, strings.Repeat("n", 255), strings.Repeat("n", 255), ""},
		{r, strings.Repeat("n", 256), "", PathTooLong},
		{r, "", "", errcode.InvalidArgument},
		{fold, "/users/u/work/x", "x", ""},
		{fold, "/USERS/U/WORK", ".", ""},
		{fold, "/users/u/work2/x", "", errcode.PathOutsideRoot},
		{fold, "/users/u/WORK/../WORKX/y", "", errcode.PathOutsideRoot},
	}
	checkResolve(t, tests)
}

func TestResolveWindowsPathLength(t *testing.T) {
	r := rootAt(`C:\w`, Windows, true) // 4 units
	comp := strings.Repeat("d", 254) + `\`
	// 4 + 128 * (1 + 254) = 32644 units; then a last component to reach the limit.
	deep := strings.Repeat(comp, 128)
	tail := strings.Repeat("x", 32767-32644-1)
	if _, err := r.Resolve(deep + tail); err != nil {
		t.Errorf("a path of exactly 32767 units: %v", err)
	}
	if _, err := r.Resolve(deep + tail + "x"); errcode.CodeOf(err) != PathTooLong {
		t.Errorf("a path of 32768 units: %v", err)
	}
}

func TestResolvePathLength(t *testing.T) {
	r := rootAt("/w", Unix, false)
	deep := strings.Repeat("d/", 2045) // "/w" + 2045*"/d" = 4092 bytes
	for _, tt := range []struct {
		in   string
		code errcode.Code
	}{
		{deep + "x", ""},            // 4094 bytes
		{deep + "xy", ""},           // 4095 bytes: at the limit
		{deep + "xyz", PathTooLong}, // 4096 bytes: past it
		{strings.Repeat("a/../", maxInput/5) + "abc", ""},           // exactly maxInput bytes
		{strings.Repeat("a/../", maxInput/5) + "abcd", PathTooLong}, // one past
	} {
		_, err := r.Resolve(tt.in)
		if code := errcode.CodeOf(err); code != tt.code {
			t.Errorf("len %d: code %q, want %q", len(tt.in)+3, code, tt.code)
		}
	}
}

func TestResolveWindows(t *testing.T) {
	r := rootAt(`C:\Users\u\work`, Windows, true)
	sensitive := rootAt(`C:\Users\u\work`, Windows, false)
	unc := rootAt(`\\srv\share\work`, Windows, true)
	tests := []resolveCase{
		{r, `a\b.txt`, "a/b.txt", ""},
		{r, `a/b\c`, "a/b/c", ""},
		{r, `C:\Users\u\work\x`, "x", ""},
		{r, `c:\users\U\WORK\x`, "x", ""},
		{r, `C:/Users/u/work/x`, "x", ""},
		{r, `\Users\u\work\x`, "x", ""},
		{r, `\\?\C:\Users\u\work\x`, "x", ""},
		{r, `\\?\C:\Users\u\work\..\..\etc`, "", errcode.PathOutsideRoot},
		{r, `D:\Users\u\work\x`, "", errcode.PathOutsideRoot},
		{r, `C:\Users\u\work2\x`, "", errcode.PathOutsideRoot},
		{r, `C:x`, "", errcode.PathOutsideRoot},
		{r, `C:..\x`, "", errcode.PathOutsideRoot},
		{r, `..\x`, "", errcode.PathOutsideRoot},
		{r, `a\..\..\x`, "", errcode.PathOutsideRoot},
		{r, `a/..\../x`, "", errcode.PathOutsideRoot},
		{r, `\\.\C:\Users\u\work\x`, "", errcode.PathOutsideRoot},
		{r, `\\.\PhysicalDrive0`, "", errcode.PathOutsideRoot},
		{r, `\??\C:\Users\u\work\x`, "", errcode.PathOutsideRoot},
		{r, `\\srv\share\x`, "", errcode.PathOutsideRoot},
		{r, `\\?\UNC\srv\share\x`, "", errcode.PathOutsideRoot},
		{r, `\\srv`, "", errcode.PathOutsideRoot},
		{r, `file.txt:hidden`, "", errcode.PathInvalidChars},
		{r, `file.txt::$DATA`, "", errcode.PathInvalidChars},
		{r, `C:\Users\u\work\file.txt:ads`, "", errcode.PathInvalidChars},
		{r, `a<b`, "", errcode.PathInvalidChars},
		{r, `a>b`, "", errcode.PathInvalidChars},
		{r, `a"b`, "", errcode.PathInvalidChars},
		{r, `a|b`, "", errcode.PathInvalidChars},
		{r, `a?b`, "", errcode.PathInvalidChars},
		{r, `a*b`, "", errcode.PathInvalidChars},
		{r, "a\x01b", "", errcode.PathInvalidChars},
		{r, "a\tb", "", errcode.PathInvalidChars},
		{r, `trailing.`, "", errcode.PathInvalidChars},
		{r, `trailing `, "", errcode.PathInvalidChars},
		{r, `dir.\x`, "", errcode.PathInvalidChars},
		{r, `...`, "", errcode.PathInvalidChars},
		{r, `.. `, "", errcode.PathInvalidChars},
		{unc, `\\srv\share\work\x`, "x", ""},
		{unc, `\\SRV\SHARE\work\x`, "x", ""},
		{unc, `\\?\UNC\srv\share\work\x`, "x", ""},
		{unc, `\\srv\other\work\x`, "", errcode.PathOutsideRoot},
		{unc, `C:\work\x`, "", errcode.PathOutsideRoot},
		{sensitive, `C:\Users\u\WORK\x`, "", errcode.PathOutsideRoot},
		{sensitive, `c:\Users\u\work\x`, "x", ""},                   // drive letters never have case
		{r, strings.Repeat("é", 255), strings.Repeat("é", 255), ""}, // 255 UTF-16 units (510 bytes)
		{r, strings.Repeat("é", 256), "", PathTooLong},
		{r, strings.Repeat("😀", 127) + "a", strings.Repeat("😀", 127) + "a", ""}, // surrogate pairs: 255 units
		{r, strings.Repeat("😀", 128), "", PathTooLong},
	}
	for _, name := range []string{"CON", "con", "Con.txt", "PRN", "AUX.tar.gz", "NUL", "nul.", "NUL ", "COM1", "com9.log",
		"COM0", "LPT1", "lpt9", "COM¹", "LPT²", "com³.txt", "CONIN$", "conout$", "CLOCK$", "con .txt"} {
		tests = append(tests, struct {
			root *Root
			in   string
			want string
			code errcode.Code
		}{r, `dir\` + name, "", errcode.PathReservedName})
	}
	for _, name := range []string{"CONSOLE", "COM10", "LPT", "NULL.txt", "auxiliary", "COM", "xCON"} {
		tests = append(tests, struct {
			root *Root
			in   string
			want string
			code errcode.Code
		}{r, name, name, ""})
	}
	checkResolve(t, tests)
}

func TestReservedNamesOnlyOnWindows(t *testing.T) {
	r := rootAt("/w", Unix, false)
	for _, name := range []string{"CON", "nul.txt", "COM1", "a:b", "a?b"} {
		if _, err := r.Resolve(name); err != nil {
			t.Errorf("Unix Resolve(%q) = %v; these are ordinary names on Unix", name, err)
		}
	}
}

func TestJoin(t *testing.T) {
	r := rootAt("/w", Unix, false)
	base, _ := r.Resolve("a")
	for _, tt := range []struct {
		name string
		want string
		code errcode.Code
	}{
		{"b", "a/b", ""},
		{"..", "", errcode.InvalidArgument},
		{"x/y", "", errcode.InvalidArgument},
		{"", "", errcode.InvalidArgument},
		{"a\x00", "", errcode.PathInvalidChars},
	} {
		got, err := r.Join(base, tt.name)
		if errcode.CodeOf(err) != tt.code || (err == nil && got.String() != tt.want) {
			t.Errorf("Join(a, %q) = %q, %v", tt.name, got, err)
		}
	}
}
