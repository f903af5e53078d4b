package natsbustest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestCA is a certificate authority made for one test, and the PEM files it
// issued in a temporary directory: a server certificate for 127.0.0.1 and
// localhost, and a client certificate for mutual TLS. Keys are written with mode
// 0600.
type TestCA struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	OtherCert, OtherKey   string // a client certificate from another CA (refused)
	dir                   string
	caCert                *x509.Certificate
	caKey                 *ecdsa.PrivateKey
	serial                int64
	t                     testing.TB
}

// NewTestCA makes a CA and its certificates (ECDSA P-256, valid for an hour).
func NewTestCA(t testing.TB) *TestCA {
	t.Helper()
	c := &TestCA{dir: t.TempDir(), t: t}
	c.caKey = newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pitboss test CA"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &c.caKey.PublicKey, c.caKey)
	if err != nil {
		t.Fatal(err)
	}
	if c.caCert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	c.serial = 1
	c.CA = c.writePEM("ca.pem", "CERTIFICATE", der, 0o644)
	c.ServerCert, c.ServerKey = c.issue("server", x509.ExtKeyUsageServerAuth, c.caCert, c.caKey)
	c.ClientCert, c.ClientKey = c.issue("client", x509.ExtKeyUsageClientAuth, c.caCert, c.caKey)
	// A client certificate signed by a CA the server does not trust.
	otherKey := newKey(t)
	other := *tmpl
	other.Subject.CommonName = "another CA"
	oder, err := x509.CreateCertificate(rand.Reader, &other, &other, &otherKey.PublicKey, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	oc, _ := x509.ParseCertificate(oder)
	c.OtherCert, c.OtherKey = c.issue("other", x509.ExtKeyUsageClientAuth, oc, otherKey)
	return c
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (c *TestCA) issue(name string, usage x509.ExtKeyUsage, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (cert, key string) {
	c.serial++
	k := newKey(c.t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(c.serial), Subject: pkix.Name{CommonName: "pitboss test " + name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &k.PublicKey, parentKey)
	if err != nil {
		c.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.writePEM(name+".pem", "CERTIFICATE", der, 0o644), c.writePEM(name+"-key.pem", "EC PRIVATE KEY", kder, 0o600)
}

func (c *TestCA) writePEM(name, typ string, der []byte, mode os.FileMode) string {
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// Configure makes a server require mutual TLS from its clients: its certificate
// is ServerCert, and a client must present a certificate issued by the CA. Use it
// as (or in) ClusterConfig.Configure.
func (c *TestCA) Configure(_ int, o *server.Options) {
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: c.ServerCert, KeyFile: c.ServerKey, CaFile: c.CA, Verify: true, Timeout: 2})
	if err != nil {
		c.t.Fatal(err)
	}
	o.TLSConfig, o.TLSVerify, o.TLS, o.TLSTimeout = tc, true, true, 2
}
