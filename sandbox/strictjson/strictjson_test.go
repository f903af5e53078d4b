package strictjson_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/strictjson"
)

type rec struct {
	A int    `json:"a"`
	B string `json:"b"`
}

func TestDecodeTakesExactlyOneKnownValue(t *testing.T) {
	var r rec
	if err := strictjson.Decode([]byte(`{"a":1,"b":"x"}`), &r); err != nil || r != (rec{1, "x"}) {
		t.Fatalf("%+v %v", r, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", `{"a":1,"c":2}`, `unknown field "c"`},
		{"trailing value", `{"a":1} {"a":2}`, "data after the JSON value"},
		{"not JSON", `{"a":`, "unexpected EOF"},
		{"wrong type", `{"a":"1"}`, "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := strictjson.Decode([]byte(tc.in), &rec{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if tc.name == "trailing value" && !errors.Is(err, strictjson.ErrTrailing) {
				t.Fatalf("%v is not ErrTrailing", err)
			}
		})
	}
}

func TestAppend(t *testing.T) {
	if got := string(strictjson.Append([]byte("x"), "t", rec{A: 2})); got != `x{"a":2,"b":""}` {
		t.Fatalf("%s", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "t: state does not encode") {
			t.Fatalf("panic %v", r)
		}
	}()
	strictjson.Append(nil, "t", func() {})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x"}`))
	f.Add([]byte(`{"a":1} 2`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r rec
		if strictjson.Decode(data, &r) == nil && strictjson.Decode(strictjson.Append(nil, "r", r), &rec{}) != nil {
			t.Fatalf("%q decoded to %+v, which does not decode back", data, r)
		}
	})
}
