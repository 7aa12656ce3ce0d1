// Command gotrust reports whether Go's crypto/x509 system roots, as the image it runs in lays them out, are
// exactly the certificates of one PEM file: the cluster test runs it in the driver image with the trusted CA
// bundle mounted as OpenShift mounts it, so it sees what the driver (a Go program) trusts.
package main

import (
	"crypto/x509"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gotrust <PEM bundle>")
		os.Exit(2)
	}
	pem, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	want := x509.NewCertPool()
	if !want.AppendCertsFromPEM(pem) {
		fmt.Fprintf(os.Stderr, "%s holds no certificate\n", os.Args[1])
		os.Exit(1)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("go system roots are exactly %s: %t\n", os.Args[1], roots.Equal(want))
}
