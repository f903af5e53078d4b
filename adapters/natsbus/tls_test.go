package natsbus

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// TestMutualTLS: a server that requires client certificates from a CA made for
// the test refuses a client without a certificate, without TLS, or with a
// certificate of another CA, and serves one with a certificate of its CA end to
// end (the AUDIT stream made, a record appended and read back). The endpoint's TLS
// files travel through the environment and the endpoint file; a key file others
// can read is refused before connecting.
func TestMutualTLS(t *testing.T) {
	ca := natsbustest.NewTestCA(t)
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{Configure: ca.Configure})
	url := strings.Replace(c.URL(0), "nats://", "tls://", 1)
	refused := []struct {
		name string
		ep   Endpoint
	}{
		{"no certificate", Endpoint{URL: url, TLSCA: ca.CA}},
		{"no TLS", Endpoint{URL: c.URL(0)}},
		{"another CA's certificate", Endpoint{URL: url, TLSCA: ca.CA, TLSCert: ca.OtherCert, TLSKey: ca.OtherKey}},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			b, err := Connect(ctxT(t, 5*time.Second), r.ep, ConnectOptions{Name: "refused", Timeout: 3 * time.Second})
			if err == nil {
				b.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(err.Error(), "tls") {
				t.Fatalf("refused for another reason than TLS: %v", err)
			}
		})
	}

	ep := Endpoint{URL: url, TLSCA: ca.CA, TLSCert: ca.ClientCert, TLSKey: ca.ClientKey}
	// Through the environment and the endpoint file, as a child or ctl gets it.
	env := map[string]string{}
	for _, kv := range ep.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	fromEnv, err := EndpointFromEnv(func(k string) string { return env[k] })
	if err != nil || fromEnv != ep {
		t.Fatalf("from the environment: %+v %v", fromEnv, err)
	}
	file := t.TempDir() + "/ep.json"
	if err := ep.WriteFile(file); err != nil {
		t.Fatal(err)
	}
	fromFile, err := ReadEndpointFile(file)
	if err != nil || fromFile != ep {
		t.Fatalf("from the file: %+v %v", fromFile, err)
	}

	b, err := Connect(ctxT(t, 10*time.Second), fromFile, ConnectOptions{Name: "mtls"})
	if err != nil {
		t.Fatalf("a client with a certificate of the CA: %v", err)
	}
	defer b.Close()
	if err := b.EnsureAudit(ctxT(t, 10*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	l, _ := b.AuditLog("a1", [20]byte{1}, "r")
	if _, err := l.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditIntent}); err != nil {
		t.Fatal(err)
	}
	n := 0
	// The bound covers a consumer's creation in a 3-node cluster (a meta-leader
	// proposal), which took over 5 s once in CI under -race.
	if err := b.TailAudit(ctxT(t, 20*time.Second), AuditFilter{Agent: "a1"}, func(AuditEntry) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("read back %d records: %v", n, err)
	}

	if err := os.Chmod(ca.ClientKey, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(ctxT(t, 5*time.Second), ep, ConnectOptions{}); !errors.Is(err, ErrLooseFileMode) {
		t.Fatalf("a key file others can read: %v", err)
	}
	if err := (Endpoint{URL: url, TLSCert: ca.ClientCert}).Validate(); err == nil {
		t.Fatal("a certificate without its key was accepted")
	}
}
