package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	Write(t, dir, map[string]string{"m/config.pbtxt": "x", "m/1/": "", "a/b/c.txt": "y"})
	for p, want := range map[string]string{"m/config.pbtxt": "x", "a/b/c.txt": "y"} {
		got, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", p, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "m", "1")); err != nil || !fi.IsDir() {
		t.Errorf("m/1 is not a directory: %v", err)
	}
}
