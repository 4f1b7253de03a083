package deflate

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"

	"google.golang.org/grpc/encoding"
)

func TestRegisteredAndZlibWrapped(t *testing.T) {
	c := encoding.GetCompressor(Name)
	if c == nil {
		t.Fatal("no deflate compressor registered")
	}
	var buf bytes.Buffer
	w, err := c.Compress(&buf)
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("inferperf "), 100)
	w.Write(msg)
	w.Close()
	// gRPC C++ writes zlib streams: a plain zlib reader must read ours.
	zr, err := zlib.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("not a zlib stream: %v", err)
	}
	got, _ := io.ReadAll(zr)
	if !bytes.Equal(got, msg) {
		t.Error("zlib round trip changed the message")
	}
	r, err := c.Decompress(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	back, _ := io.ReadAll(r)
	if !bytes.Equal(back, msg) {
		t.Error("Decompress changed the message")
	}
}
