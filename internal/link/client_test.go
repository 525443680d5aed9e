package link

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	b := DefaultBackoff
	for n, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 60 * time.Second, 60 * time.Second} {
		for range 20 {
			d := b.Delay(n)
			if d < base || d >= base+min(5*time.Second, base) {
				t.Fatalf("attempt %d: delay %v outside [%v, %v)", n, d, base, base+min(5*time.Second, base))
			}
		}
	}
	if d := b.Delay(1000); d < 60*time.Second || d >= 65*time.Second {
		t.Errorf("attempt 1000: %v", d)
	}
}

func TestValidateURL(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"wss://platform.example/ws/local-executor", true},
		{"ws://127.0.0.1:7718/ws/local-executor", true},
		{"ws://[::1]:7718/ws/local-executor", true},
		{"ws://localhost:7718/ws/local-executor", true},
		{"ws://platform.example/ws/local-executor", false},
		{"ws://10.0.0.1/ws", false},
		{"http://127.0.0.1/ws", false},
		{"wss://user:pw@platform.example/ws", false},
		{"wss://platform.example/ws?token=x", false},
	} {
		if _, err := ValidateURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("ValidateURL(%q): %v", tt.url, err)
		}
	}
}

func TestCutUTF8(t *testing.T) {
	s := "aé€"
	for n, want := range map[int64]string{0: "", 1: "a", 2: "a", 3: "aé", 5: "aé", 6: "aé€", 9: "aé€"} {
		if got := cutUTF8(s, n); got != want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
}
