package tempfile

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestCreateHonoursUmask: the file gets 0666 less the umask (0644 under the usual 022, 0600
// under 077), unlike os.CreateTemp's fixed 0600; names are new each time and keep the prefix.
func TestCreateHonoursUmask(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{
		{0o022, 0o644},
		{0o077, 0o600},
		{0o002, 0o664},
	} {
		old := syscall.Umask(tc.umask)
		f, err := Create(dir, ".out-")
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("umask %03o: mode %v; want %v", tc.umask, got, tc.want)
		}
		if !strings.HasPrefix(fi.Name(), ".out-") {
			t.Errorf("name %q lacks the prefix", fi.Name())
		}
	}
	if _, err := Create(dir+"/nosuch", "x"); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}
