package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// FuzzAgentAction feeds the per-agent endpoint arbitrary agent ids, ops and bodies
// (with a valid origin and page token, so the body is what is parsed): it never
// answers 5xx or without the {"error": …} shape, and acts only on a listed op with
// the agent's id typed.
func FuzzAgentAction(f *testing.F) {
	f.Add("a", "pause", `{"confirm":"a"}`)
	f.Add("a", "kill", `{"confirm":"KILL","reason":"x"}`)
	f.Add("quoter-1", "flatten", `{"confirm":"quoter-1","reason":"`+strings.Repeat("r", 300)+`"}`)
	f.Add("a", "withdraw", `{"confirm":"a"}`)
	f.Add("a", "pause", `{"confirm":1}`)
	f.Add("a", "pause", `[`)
	src := &fakeSource{}
	d, err := New(Config{Source: src})
	if err != nil {
		f.Fatal(err)
	}
	tok := d.token()
	pathSafe := regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	f.Fuzz(func(t *testing.T, id, op, body string) {
		if !pathSafe.MatchString(id) || !pathSafe.MatchString(op) || id == "." || id == ".." || op == "." || op == ".." {
			return // not a clean path the mux routes here (it redirects the others)
		}
		req := httptest.NewRequest("POST", "http://dash.test/api/agents/"+id+"/"+op, strings.NewReader(body))
		req.Header.Set("Origin", "http://dash.test")
		req.Header.Set("X-Pitboss-Token", tok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		src.mu.Lock()
		before := len(src.ops)
		src.mu.Unlock()
		d.ServeHTTP(rec, req)
		src.mu.Lock()
		acted := len(src.ops) > before
		src.mu.Unlock()
		if rec.Code >= 500 {
			t.Fatalf("%d for %q %q %q: %s", rec.Code, id, op, body, rec.Body)
		}
		if rec.Code != http.StatusOK {
			var e map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &e); (err != nil || e["error"] == "") && rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
				t.Fatalf("%d without the error shape: %s", rec.Code, rec.Body)
			}
			if acted {
				t.Fatalf("refused (%d) but acted", rec.Code)
			}
			return
		}
		var b struct {
			Confirm string `json:"confirm"`
		}
		if json.Unmarshal([]byte(body), &b) != nil || b.Confirm != id || !acted {
			t.Fatalf("acted on %q %q %q", id, op, body)
		}
	})
}
