package mesh

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestVerify(t *testing.T) {
	caller, _ := nkeys.CreateUser()
	callerKey, _ := caller.PublicKey()
	stranger, _ := nkeys.CreateUser()
	strangerKey, _ := stranger.PublicKey()
	machineKP, _ := nkeys.CreateUser()
	machine, _ := machineKP.PublicKey()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"path":"f.txt"}`)
	good := func() Claims {
		return Claims{Caller: callerKey, Machine: machine, Op: "read_file", Request: BodyHash(body), Nonce: NewNonce(),
			Issued: now.UnixMilli(), Expires: now.Add(AssertionLifetime).UnixMilli()}
	}
	sign := func(kp nkeys.KeyPair, c Claims) string {
		tok, err := Sign(kp, c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, tt := range []struct {
		name  string
		token func() string
		body  []byte
		want  errcode.Code
	}{
		{"valid", func() string { return sign(caller, good()) }, body, ""},
		{"missing", func() string { return "" }, body, CodeAssertionInvalid},
		{"garbage", func() string { return "x.y" }, body, CodeAssertionInvalid},
		{"unknown caller", func() string {
			c := good()
			c.Caller = strangerKey
			return sign(stranger, c)
		}, body, CodeCallerUnknown},
		{"signed by another key", func() string { return sign(stranger, good()) }, body, CodeAssertionInvalid},
		{"other machine", func() string {
			c := good()
			c.Machine = strangerKey
			return sign(caller, c)
		}, body, CodeAssertionInvalid},
		{"other op", func() string {
			c := good()
			c.Op = "write_file"
			return sign(caller, c)
		}, body, CodeAssertionInvalid},
		{"other body", func() string { return sign(caller, good()) }, []byte(`{"path":"g.txt"}`), CodeAssertionInvalid},
		{"claims edited after signing", func() string {
			tok := sign(caller, good())
			c := good()
			c.Op = "write_file"
			other := sign(caller, c)
			return strings.Split(other, ".")[0] + "." + strings.Split(tok, ".")[1]
		}, body, CodeAssertionInvalid},
		{"lifetime past the maximum", func() string {
			c := good()
			c.Expires = c.Issued + (MaxLifetime + time.Second).Milliseconds()
			return sign(caller, c)
		}, body, CodeAssertionInvalid},
		{"expired past the skew", func() string {
			c := good()
			c.Issued = now.Add(-2*MaxSkew - AssertionLifetime).UnixMilli()
			c.Expires = now.Add(-MaxSkew - time.Millisecond).UnixMilli()
			return sign(caller, c)
		}, body, CodeClockSkew},
		{"expired within the skew", func() string {
			c := good()
			c.Issued = now.Add(-AssertionLifetime - MaxSkew).UnixMilli()
			c.Expires = now.Add(-MaxSkew).UnixMilli()
			return sign(caller, c)
		}, body, ""},
		{"issued in the future past the skew", func() string {
			c := good()
			c.Issued = now.Add(MaxSkew + time.Millisecond).UnixMilli()
			c.Expires = c.Issued + AssertionLifetime.Milliseconds()
			return sign(caller, c)
		}, body, CodeClockSkew},
		{"issued in the future within the skew", func() string {
			c := good()
			c.Issued = now.Add(MaxSkew).UnixMilli()
			c.Expires = c.Issued + AssertionLifetime.Milliseconds()
			return sign(caller, c)
		}, body, ""},
		{"short nonce", func() string {
			c := good()
			c.Nonce = "abc"
			return sign(caller, c)
		}, body, CodeAssertionInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := &Verifier{Machine: machine, Now: func() time.Time { return now },
				Callers: func() map[string]Caller { return map[string]Caller{callerKey: {Name: "gw", Key: callerKey}} }}
			_, who, err := v.Verify(tt.token(), "read_file", tt.body)
			if errcode.CodeOf(err) != tt.want {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
			if tt.want == "" && who.Name != "gw" {
				t.Fatalf("caller %+v", who)
			}
		})
	}
}

// TestReplay: an assertion verifies once; the nonce is remembered until
// it could no longer verify, and the cache is bounded.
func TestReplay(t *testing.T) {
	caller, _ := nkeys.CreateUser()
	callerKey, _ := caller.PublicKey()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Machine: callerKey, Now: func() time.Time { return now }, MaxNonces: 3,
		Callers: func() map[string]Caller { return map[string]Caller{callerKey: {Key: callerKey}} }}
	mk := func() string {
		tok, _ := Sign(caller, Claims{Caller: callerKey, Machine: callerKey, Op: "x", Request: BodyHash(nil), Nonce: NewNonce(),
			Issued: now.UnixMilli(), Expires: now.Add(AssertionLifetime).UnixMilli()})
		return tok
	}
	tok := mk()
	if _, _, err := v.Verify(tok, "x", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Verify(tok, "x", nil); errcode.CodeOf(err) != CodeReplay {
		t.Fatalf("replayed: %v", err)
	}
	// At the bound: two more fit, the next is refused as busy.
	for i := 0; i < 2; i++ {
		if _, _, err := v.Verify(mk(), "x", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := v.Verify(mk(), "x", nil); errcode.CodeOf(err) != CodeBusy {
		t.Fatalf("past the bound: %v", err)
	}
	// Once the first ones can no longer verify they are forgotten, and
	// their replay is refused as expired instead.
	now = now.Add(AssertionLifetime + MaxSkew + time.Second)
	if _, _, err := v.Verify(mk(), "x", nil); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if _, _, err := v.Verify(tok, "x", nil); errcode.CodeOf(err) != CodeClockSkew {
		t.Fatalf("old replay: %v", err)
	}
}
