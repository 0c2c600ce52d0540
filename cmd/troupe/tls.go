package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// tlsCommands are `troupe tls ca create` and `troupe tls cert create`,
// which write, in the working directory, the files Nomad's write.
func tlsCommands() *cmdNode {
	return &cmdNode{synopsis: "Make a cluster's TLS certificates", subs: map[string]*cmdNode{
		"ca": {synopsis: "Certificate authority commands", subs: map[string]*cmdNode{
			"create": {synopsis: "Make a certificate authority", run: tlsCACreateCommand},
		}},
		"cert": {synopsis: "Certificate commands", subs: map[string]*cmdNode{
			"create": {synopsis: "Make a server, client or CLI certificate signed by the CA", run: tlsCertCreateCommand},
		}},
	}}
}

func tlsFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("troupe "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseTLSFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 1, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "Error: %s takes no arguments, got %q\n", fs.Name(), fs.Args())
		return 1, false
	}
	return 0, true
}

func tlsCACreateCommand(args []string, stdout, stderr io.Writer) int {
	fs := tlsFlags("tls ca create", stderr)
	var o tlsutil.CAOptions
	var extra listFlag
	fs.StringVar(&o.Domain, "domain", "nomad", "the domain the CA signs for")
	fs.StringVar(&o.CommonName, "common-name", "", "the CA's common name (default: Nomad Agent CA <serial>)")
	fs.IntVar(&o.Days, "days", 1825, "days the CA is valid")
	fs.BoolVar(&o.NameConstraint, "name-constraint", false, "permit the CA to sign only for its domains and localhost")
	fs.Var(&extra, "additional-domain", "another domain the name constraint permits (repeatable)")
	if code, ok := parseTLSFlags(fs, args, stderr); !ok {
		return code
	}
	o.AdditionalDomains = extra
	certFile, keyFile := tlsutil.FileNames("", "", o.Domain)
	if err := refuseExisting(certFile, keyFile); err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	ca, err := tlsutil.NewCA(o)
	if err == nil {
		err = writeTLSFiles(ca, certFile, keyFile)
	}
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	fmt.Fprintf(stdout, "==> CA certificate saved to: %s\n==> CA certificate key saved to: %s\n", certFile, keyFile)
	return 0
}

func tlsCertCreateCommand(args []string, stdout, stderr io.Writer) int {
	fs := tlsFlags("tls cert create", stderr)
	var o tlsutil.CertOptions
	var dns, ips listFlag
	server := fs.Bool("server", false, "a server certificate")
	client := fs.Bool("client", false, "a client certificate")
	cli := fs.Bool("cli", false, "a CLI certificate (client authentication only)")
	caFile := fs.String("ca", "", "the CA certificate (default <domain>-agent-ca.pem)")
	keyFile := fs.String("key", "", "the CA key (default <domain>-agent-ca-key.pem)")
	fs.StringVar(&o.Region, "region", "global", "the region the certificate is for")
	fs.StringVar(&o.Region, "cluster-region", "global", "the region the certificate is for (as -region)")
	fs.StringVar(&o.Domain, "domain", "nomad", "the domain of the certificate's name")
	fs.IntVar(&o.Days, "days", 365, "days the certificate is valid")
	fs.Var(&dns, "additional-dnsname", "another DNS name in the certificate (repeatable)")
	fs.Var(&ips, "additional-ipaddress", "another IP address in the certificate (repeatable)")
	if code, ok := parseTLSFlags(fs, args, stderr); !ok {
		return code
	}
	roles := map[string]bool{tlsutil.RoleServer: *server, tlsutil.RoleClient: *client, tlsutil.RoleCLI: *cli}
	for role, on := range roles {
		if on {
			if o.Role != "" {
				fmt.Fprintln(stderr, "Error: give exactly one of -server, -client and -cli")
				return 1
			}
			o.Role = role
		}
	}
	if o.Role == "" {
		fmt.Fprintln(stderr, "Error: give one of -server, -client and -cli")
		return 1
	}
	o.AdditionalDNSNames = dns
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			fmt.Fprintf(stderr, "Error: -additional-ipaddress %q is not an IP address\n", s)
			return 1
		}
		o.AdditionalIPs = append(o.AdditionalIPs, ip)
	}
	defCert, defKey := tlsutil.FileNames("", "", o.Domain)
	if *caFile == "" {
		*caFile = defCert
	}
	if *keyFile == "" {
		*keyFile = defKey
	}
	ca := &tlsutil.PEM{}
	var err error
	if ca.Cert, err = os.ReadFile(*caFile); err == nil {
		ca.Key, err = os.ReadFile(*keyFile)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: reading the CA: %v\n", err)
		return 1
	}
	certFile, certKey := tlsutil.FileNames(o.Role, o.Region, o.Domain)
	if err := refuseExisting(certFile, certKey); err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	cert, err := tlsutil.NewCert(ca, o)
	if err == nil {
		err = writeTLSFiles(cert, certFile, certKey)
	}
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	title := map[string]string{tlsutil.RoleServer: "Server", tlsutil.RoleClient: "Client", tlsutil.RoleCLI: "Cli"}[o.Role]
	fmt.Fprintf(stdout, "==> Using CA file %s and CA key %s\n==> %s Certificate saved to %s\n==> %s Certificate key saved to %s\n",
		*caFile, *keyFile, title, certFile, title, certKey)
	return 0
}

// refuseExisting: a command never overwrites a certificate or a key.
func refuseExisting(files ...string) error {
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			return fmt.Errorf("%s already exists: remove it or work in another directory", f)
		}
	}
	return nil
}

// writeTLSFiles writes a certificate (0644) and its key (0600), creating
// them afresh (never through a link).
func writeTLSFiles(p *tlsutil.PEM, certFile, keyFile string) error {
	for _, f := range []struct {
		name string
		data []byte
		perm os.FileMode
	}{{certFile, p.Cert, 0o644}, {keyFile, p.Key, 0o600}} {
		fh, err := os.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.perm)
		if err != nil {
			return err
		}
		_, err = fh.Write(f.data)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
