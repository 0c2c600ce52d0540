package tlsutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// Roles of a certificate the CA signs.
const (
	RoleServer = "server"
	RoleClient = "client"
	RoleCLI    = "cli"
)

// CAOptions shape a new certificate authority (Nomad's tls ca create).
type CAOptions struct {
	Domain string // "nomad"
	// CommonName is the CA's subject ("" : "Nomad Agent CA <serial>").
	CommonName string
	Days       int // validity (0: 1825, five years, as Nomad)
	// AdditionalDomains and the domain are the names the CA may sign
	// for when NameConstraint is set.
	AdditionalDomains []string
	NameConstraint    bool
	Now               time.Time
}

// CertOptions shape a certificate the CA signs (Nomad's tls cert create).
type CertOptions struct {
	Role   string // RoleServer, RoleClient or RoleCLI
	Region string // "global"
	Domain string // "nomad"
	Days   int    // validity (0: 365)
	// AdditionalDNSNames and AdditionalIPs go into the SANs beside
	// "<role>.<region>.<domain>" and localhost (127.0.0.1 too for servers
	// and clients).
	AdditionalDNSNames []string
	AdditionalIPs      []net.IP
	Now                time.Time
}

// PEM is a certificate and its private key, PEM-encoded.
type PEM struct {
	Cert, Key []byte
}

// NewCA makes a self-signed certificate authority.
func NewCA(o CAOptions) (*PEM, error) {
	if o.Domain == "" {
		o.Domain = "nomad"
	}
	if o.Days <= 0 {
		o.Days = 1825
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	if o.CommonName == "" {
		o.CommonName = "Nomad Agent CA " + serial.String()
	}
	id, err := keyID(key.Public())
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: o.CommonName, Organization: []string{"troupe"}},
		NotBefore: o.Now.Add(-time.Minute), NotAfter: o.Now.AddDate(0, 0, o.Days),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage:     x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		SubjectKeyId: id, AuthorityKeyId: id,
	}
	if o.NameConstraint {
		tmpl.PermittedDNSDomainsCritical = true
		tmpl.PermittedDNSDomains = append([]string{o.Domain, "localhost"}, o.AdditionalDomains...)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("tlsutil: create CA: %w", err)
	}
	return encode(der, key)
}

// NewCert makes a certificate for a role, signed by the CA.
func NewCert(ca *PEM, o CertOptions) (*PEM, error) {
	switch o.Role {
	case RoleServer, RoleClient, RoleCLI:
	default:
		return nil, fmt.Errorf("tlsutil: role %q must be server, client or cli", o.Role)
	}
	if o.Region == "" {
		o.Region = "global"
	}
	if o.Domain == "" {
		o.Domain = "nomad"
	}
	if o.Days <= 0 {
		o.Days = 365
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	caCert, caKey, err := ParseCA(ca)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	id, err := keyID(key.Public())
	if err != nil {
		return nil, err
	}
	name := o.Role + "." + o.Region + "." + o.Domain
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: o.Now.Add(-time.Minute), NotAfter: o.Now.AddDate(0, 0, o.Days),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:              append([]string{name, "localhost"}, o.AdditionalDNSNames...),
		IPAddresses:           o.AdditionalIPs,
		SubjectKeyId:          id, AuthorityKeyId: caCert.SubjectKeyId,
	}
	if o.Role == RoleCLI {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.IPAddresses = append([]net.IP{net.IPv4(127, 0, 0, 1)}, tmpl.IPAddresses...)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("tlsutil: create %s certificate: %w", o.Role, err)
	}
	return encode(der, key)
}

// ParseCA reads a CA's certificate and key.
func ParseCA(ca *PEM) (*x509.Certificate, crypto.Signer, error) {
	cb, _ := pem.Decode(ca.Cert)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, nil, errors.New("tlsutil: the CA file holds no PEM certificate")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, nil, errors.New("tlsutil: the CA file's certificate is not a CA")
	}
	kb, _ := pem.Decode(ca.Key)
	if kb == nil {
		return nil, nil, errors.New("tlsutil: the CA key file holds no PEM key")
	}
	key, err := parseKey(kb)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: CA key: %w", err)
	}
	if !publicEqual(key.Public(), cert.PublicKey) {
		return nil, nil, errors.New("tlsutil: the CA key does not match the CA certificate")
	}
	return cert, key, nil
}

func parseKey(b *pem.Block) (crypto.Signer, error) {
	switch strings.ToUpper(b.Type) {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T key cannot sign", k)
	}
	return s, nil
}

func publicEqual(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}

func encode(der []byte, key *ecdsa.PrivateKey) (*PEM, error) {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &PEM{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
	}, nil
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// keyID is the SHA-256 of the public key's DER, as a subject key ID.
func keyID(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return sum[:20], nil
}

// FileNames are the files Nomad's CLI writes: for the CA
// "<domain>-agent-ca.pem" and "-key.pem"; for a certificate
// "<region>-<role>-<domain>.pem" and "-key.pem".
func FileNames(role, region, domain string) (cert, key string) {
	if role == "" {
		return domain + "-agent-ca.pem", domain + "-agent-ca-key.pem"
	}
	base := region + "-" + role + "-" + domain
	return base + ".pem", base + "-key.pem"
}
