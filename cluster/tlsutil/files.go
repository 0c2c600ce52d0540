package tlsutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// Bundle is what one agent needs for its tls block, signed by one CA.
type Bundle struct {
	CAFile, CertFile, KeyFile string
}

// Config is a tls block with the bundle's files and both links on.
func (b Bundle) Config(verifyServerHostname bool) Config {
	return Config{HTTP: true, RPC: true, CAFile: b.CAFile, CertFile: b.CertFile, KeyFile: b.KeyFile,
		VerifyServerHostname: verifyServerHostname}
}

// WriteBundle signs a certificate of o with ca and writes it, its key and
// the CA into dir as name.pem, name-key.pem and ca.pem (tests and tools
// that need a ready set of files).
func WriteBundle(dir, name string, ca *PEM, o CertOptions) (Bundle, error) {
	p, err := NewCert(ca, o)
	if err != nil {
		return Bundle{}, err
	}
	b := Bundle{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, name+".pem"),
		KeyFile: filepath.Join(dir, name+"-key.pem")}
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{b.CAFile, ca.Cert, 0o644}, {b.CertFile, p.Cert, 0o644}, {b.KeyFile, p.Key, 0o600}} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return Bundle{}, fmt.Errorf("tlsutil: write %s: %w", f.path, err)
		}
	}
	return b, nil
}
