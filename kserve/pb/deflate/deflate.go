// Package deflate registers the "deflate" gRPC message compressor, which grpc-go lacks and
// Triton's gRPC server (gRPC C++) and perf_analyzer's --grpc-compression-algorithm deflate
// use. gRPC's deflate is zlib-wrapped (RFC 1950), as gRPC C++ writes it. Import it for its side
// effect on both ends.
package deflate

import (
	"compress/zlib"
	"io"
	"sync"

	"google.golang.org/grpc/encoding"
)

// Name is the compressor's name in grpc-encoding headers.
const Name = "deflate"

func init() { encoding.RegisterCompressor(&compressor{}) }

type compressor struct {
	writers sync.Pool // *writer
}

type writer struct {
	*zlib.Writer
	pool *sync.Pool
}

// Close flushes the stream and returns the writer to the pool.
func (w *writer) Close() error {
	defer w.pool.Put(w)
	return w.Writer.Close()
}

// Compress returns a writer compressing into w; writers are pooled, as grpc-go's gzip does.
func (c *compressor) Compress(w io.Writer) (io.WriteCloser, error) {
	if zw, ok := c.writers.Get().(*writer); ok {
		zw.Reset(w)
		return zw, nil
	}
	return &writer{Writer: zlib.NewWriter(w), pool: &c.writers}, nil
}

// Decompress returns a reader of the decompressed message.
func (c *compressor) Decompress(r io.Reader) (io.Reader, error) {
	return zlib.NewReader(r)
}

// Name returns "deflate".
func (c *compressor) Name() string { return Name }
