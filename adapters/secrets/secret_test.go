package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

type holder struct {
	Public  string
	Exposed Secret
	hidden  Secret
	Creds   Credentials
	Key     *Key
}

// renderings returns every way we can think of to print v.
func renderings(t *testing.T, v any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		out["fmt "+verb] = fmt.Sprintf(verb, v)
	}
	if b, err := json.Marshal(v); err == nil {
		out["json"] = string(b)
	}
	// zap: an observer (structured fields) and a real JSON encoder.
	core, logs := observer.New(zapcore.DebugLevel)
	var buf bytes.Buffer
	enc := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zapcore.DebugLevel)
	l := zap.New(zapcore.NewTee(core, enc))
	l.Info("any", zap.Any("v", v))
	l.Info("reflect", zap.Reflect("v", v))
	if s, ok := v.(fmt.Stringer); ok {
		l.Info("stringer", zap.Stringer("v", s))
	}
	if m, ok := v.(zapcore.ObjectMarshaler); ok {
		l.Info("object", zap.Object("v", m))
	}
	l.Sugar().Infow("sugar", "v", v)
	l.Sugar().Infof("sugar %v %+v", v, v)
	_ = l.Sync()
	for i, e := range logs.All() {
		out[fmt.Sprintf("zap observer %d", i)] = fmt.Sprintf("%s %v", e.Message, e.ContextMap())
	}
	out["zap json"] = buf.String()
	return out
}

func TestSecretNeverRenders(t *testing.T) {
	const value = "correct-horse-battery-staple"
	k := testKey(t)
	h := holder{Public: "visible", Exposed: SecretString(value), hidden: SecretString(value),
		Creds: Credentials{Key: "key-id", Secret: SecretString(value), Passphrase: SecretString(value)}, Key: k}
	cases := []struct {
		name string
		v    any
	}{
		{"Secret", SecretString(value)},
		{"*Secret", func() *Secret { s := SecretString(value); return &s }()},
		{"Credentials", h.Creds},
		{"*Key", k},
		{"struct with exported and unexported secrets", h},
		{"pointer to struct", &h},
		{"slice of secrets", []Secret{SecretString(value)}},
		{"map of secrets", map[string]Secret{"a": SecretString(value)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for how, text := range renderings(t, c.v) {
				assertNoSecret(t, how, text, []byte(value), []byte(testKeyHex))
			}
		})
	}
	t.Run("key renders its address", func(t *testing.T) {
		if s := fmt.Sprint(k); !strings.Contains(s, testKeyAddr) {
			t.Fatalf("%q lacks the address", s)
		}
	})
}

func TestSecretDestroyZeroesEveryCopy(t *testing.T) {
	buf := []byte("hunter2hunter2")
	s := NewSecret(buf)
	cp := s
	if !cp.Equal(SecretString("hunter2hunter2")) || cp.Len() != 14 {
		t.Fatal("copy does not hold the value")
	}
	s.Destroy()
	if !bytes.Equal(buf, make([]byte, len(buf))) {
		t.Fatal("buffer not zeroed")
	}
	if !cp.IsZero() || cp.Reveal() != nil {
		t.Fatal("copy still holds a value after Destroy")
	}
	s.Destroy() // idempotent
	var zero Secret
	zero.Destroy()
	if !zero.IsZero() || zero.String() != Redacted {
		t.Fatal("zero value misbehaves")
	}
}

func TestSecretEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{{"a", "a", true}, {"a", "b", false}, {"a", "ab", false}, {"", "", true}}
	for _, c := range cases {
		t.Run(c.a+"="+c.b, func(t *testing.T) {
			if got := SecretString(c.a).Equal(SecretString(c.b)); got != c.want {
				t.Fatalf("got %v", got)
			}
		})
	}
}
