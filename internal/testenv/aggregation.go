package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// FrontProxyClientName is the common name of the certificate the API
// server's aggregation layer presents to the API servers it proxies to
// (--proxy-client-cert-file), and the one name --requestheader-allowed-names
// allows.
const FrontProxyClientName = "front-proxy-client"

// frontProxy is the aggregation layer's PKI: a CA the API server trusts for
// request headers (--requestheader-client-ca-file), and the client
// certificate it signs, which the API server presents when it proxies a
// request to an aggregated API server.
type frontProxy struct {
	dir   string
	caPEM []byte
}

// newFrontProxy writes the aggregation layer's CA and client certificate
// under dir and sets the API server's flags that enable the aggregation
// layer (the flags kubeadm sets).
func newFrontProxy(dir string, api *envtest.APIServer) (*frontProxy, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, caKey, caPEM, err := newCA("front-proxy-ca")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := signCert(ca, caKey, FrontProxyClientName, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	if err != nil {
		return nil, err
	}
	fp := &frontProxy{dir: dir, caPEM: caPEM}
	for name, data := range map[string][]byte{"front-proxy-ca.crt": caPEM, "front-proxy-client.crt": certPEM, "front-proxy-client.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	args := api.Configure()
	args.Set("requestheader-client-ca-file", filepath.Join(dir, "front-proxy-ca.crt"))
	args.Set("requestheader-allowed-names", FrontProxyClientName)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", filepath.Join(dir, "front-proxy-client.crt"))
	args.Set("proxy-client-key-file", filepath.Join(dir, "front-proxy-client.key"))
	return fp, nil
}

// newCA makes a self-signed ECDSA CA valid for a day.
func newCA(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating CA %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// signCert makes a certificate for name (and the DNS names given) signed
// by ca, with the usages given; it returns its PEM and its key's.
func signCert(ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, dnsNames []string, usage []x509.ExtKeyUsage) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name}, DNSNames: dnsNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
	}
	for _, n := range dnsNames {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing %s: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// servingPair makes a CA and a serving certificate for the DNS names given,
// as a tls.Certificate, with the CA's PEM (an APIService's caBundle).
func servingPair(dnsNames ...string) (tls.Certificate, []byte, error) {
	ca, caKey, caPEM, err := newCA("fleetwright-test-serving-ca")
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM, keyPEM, err := signCert(ca, caKey, dnsNames[0], dnsNames, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	return pair, caPEM, err
}
