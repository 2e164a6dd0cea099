package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// pki holds the files the control plane is started with.
type pki struct {
	// servingCert holds a serving certificate for 127.0.0.1 followed by the
	// CA that signed it; kube-apiserver, kube-controller-manager and
	// kube-scheduler all serve it. caCert holds the CA alone, which
	// clients trust and kube-controller-manager publishes as the cluster's
	// root CA.
	servingCert, servingKey, caCert string
	caPEM                           []byte
	// saKey signs service-account tokens (kube-controller-manager), saPub
	// verifies them (kube-apiserver).
	saKey, saPub string
	// tokenFile maps adminToken to a member of system:masters.
	tokenFile  string
	adminToken string
}

// writePKI creates the certificates, keys and token under dir.
func writePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		servingCert: filepath.Join(dir, "serving.crt"),
		servingKey:  filepath.Join(dir, "serving.key"),
		caCert:      filepath.Join(dir, "ca.crt"),
		saKey:       filepath.Join(dir, "sa.key"),
		saPub:       filepath.Join(dir, "sa.pub"),
		tokenFile:   filepath.Join(dir, "tokens.csv"),
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1",
		[]net.IP{net.IPv4(127, 0, 0, 1)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"})
	if err != nil {
		return nil, fmt.Errorf("creating serving certificate: %w", err)
	}
	if p.caPEM, err = caOnly(certPEM); err != nil {
		return nil, err
	}

	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("creating service-account key: %w", err)
	}
	saDER, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return nil, fmt.Errorf("encoding service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding service-account public key: %w", err)
	}

	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, fmt.Errorf("creating token: %w", err)
	}
	p.adminToken = hex.EncodeToString(tok)

	for _, f := range []struct {
		path string
		data []byte
	}{
		{p.servingCert, certPEM},
		{p.servingKey, keyPEM},
		{p.caCert, p.caPEM},
		{p.saKey, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saDER})},
		{p.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})},
		// token,user,uid,"group"
		{p.tokenFile, []byte(p.adminToken + `,admin,admin,"system:masters"` + "\n")},
	} {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// caOnly returns the CA certificates of a PEM bundle.
func caOnly(bundle []byte) ([]byte, error) {
	var out []byte
	for rest := bundle; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("reading generated certificate: %w", err)
		}
		if c.IsCA {
			out = append(out, pem.EncodeToMemory(b)...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("generated certificate bundle has no CA")
	}
	return out, nil
}

// restConfig returns a client configuration for the API server at host as
// the admin user.
func (p *pki) restConfig(host string) *rest.Config {
	return &rest.Config{
		Host:            host,
		BearerToken:     p.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
		QPS:             100,
		Burst:           200,
	}
}

// writeKubeconfig writes an admin kubeconfig for host to path (mode 0600).
func (p *pki) writeKubeconfig(path, host string) error {
	const name = "fleetwright-test"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: p.adminToken}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}
