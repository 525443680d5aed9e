package console

import (
	"testing"
	"time"
)

// TestFormat: values in words for a person.
func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{uptime(float64(42)), "42 s"},
		{uptime(float64(482)), "8 min"},
		{uptime(float64(3*3600 + 12*60 + 5)), "3 h 12 min"},
		{uptime(float64(86400 + 4*3600)), "1 day 4 h"},
		{uptime(float64(3*86400 + 3600)), "3 days 1 h"},
		{wdPath("workspace", "."), "workspace"},
		{wdPath("workspace", ""), "workspace"},
		{wdPath("proj", "src/app"), "proj/src/app"},
		{words("not_configured"), "not configured"},
		{words(nil), ""},
		{string(breakable("docs/p<9>_x.md, a/b")), "docs/<wbr>p&lt;9&gt;_<wbr>x.md,<wbr> a/<wbr>b"},
		{when("2026-12-02T04:52:53.123456789Z"), local(time.Date(2026, 12, 2, 4, 52, 53, 123456789, time.UTC))},
		{when("not a time"), "not a time"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
	if now := time.Now(); when(now.UTC().Format(time.RFC3339Nano)) != now.Local().Format("15:04:05") {
		t.Errorf("a time today is shown as %q", when(now.UTC().Format(time.RFC3339Nano)))
	}
}
