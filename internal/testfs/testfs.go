// Package testfs writes trees of files for tests: model repositories, input data.
package testfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write creates files under dir: each key is a slash-separated path, its value the contents;
// a key ending in / is a directory (an empty version directory of a model, say). Parent
// directories are created as needed. It fails the test on any error.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
