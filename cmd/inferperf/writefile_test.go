package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileMode: an output file (CSV, JSON, HTML, PNG, SVG, config) gets the mode any
// program writing it would give it, 0666 less the umask, not the 0600 of a temporary file; and
// rewriting it keeps that.
func TestWriteFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "out.csv")
	for range 2 {
		if err := writeFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "a,b\n"); return err }); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o644 {
			t.Errorf("mode %v; want -rw-r--r-- under umask 022", got)
		}
	}
}
