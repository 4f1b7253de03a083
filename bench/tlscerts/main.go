// Command tlscerts writes the test certificates of internal/testcerts to a directory, for
// bench/tls.sh and for trying `inferperf serve` and `inferperf profile` over TLS by hand:
//
//	go run ./bench/tlscerts DIR
//	inferperf serve --grpc-use-ssl --grpc-server-cert DIR/server.pem --grpc-server-key DIR/server-key.pem
//	inferperf profile -m simple -i grpc --ssl-grpc-use-ssl --ssl-grpc-root-certifications-file DIR/ca.pem
//
// The server certificate is for 127.0.0.1, ::1 and localhost; client.pem is a client certificate
// signed by the same CA (ca.pem). They are valid for a day.
package main

import (
	"fmt"
	"os"

	"inferperf/internal/testcerts"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tlscerts DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := testcerts.Write(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s.Dir)
}
